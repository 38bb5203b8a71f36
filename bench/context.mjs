// bench/context.mjs: what a model reads through the workbench, in tokens,
// against loading every server directly (DESIGN.md §5e, issue 37), and how
// well search_tools finds the tool of a task phrased as people phrase it.
// Used by bench/run.sh when tests/node_modules holds the six servers and
// the tokenizer (make tests/node_modules).
//
// usage: node bench/context.mjs [--json] [--misses] [--tasks FILE]
//		[--mock PATH] [--searches N] WORKBENCH
//
// Six real servers (bench/context-lib.mjs) in four toolboxes; the
// catalogue is filled first with `WORKBENCH --probe`, so that search needs
// no open.  A tool is counted as a model reads it,
// JSON.stringify({name, description, input_schema}), a tool result as the
// text of its content, with @anthropic-ai/tokenizer.  Prints one line per
// figure, `BENCH name value`:
//	context_tools		tools of the six servers, listed directly
//	context_direct		tokens of all of them
//	context_base		the workbench's instructions + its tools/list
//	context_opened		base + every toolbox's open_toolbox answer
//	context_opened_ratio	opened / direct
//	context_task_median	a task: base + one search_tools answer (the
//				task's words as the query) + the open_toolbox
//				answer of the tool's toolbox when the hit of the
//				tool carries no inputSchema; median over tasks
//	context_task_max	the same, the largest
//	context_task_ratio	task median / direct
//	context_tasks		tasks in the set (bench/tasks.json)
//	context_recall1		share of tasks whose tool search ranks first
//	context_recall3		... in the top 3
//	context_search_10k	search_tools over 10,000 tools (tests/mock-server
//				instances in 4 toolboxes, all open), median ms of
//				N searches (default 50) timed at the client
// --json prints one JSON object instead, with every task's rank and the
// misses; --misses lists the tasks not ranked first on stderr.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as L from './context-lib.mjs';

function usage() {
	console.error('usage: node bench/context.mjs [--json] [--misses] [--tasks FILE] [--mock PATH] [--searches N] WORKBENCH');
	process.exit(2);
}

const opts = { json: false, misses: false, tasks: L.TASKS_FILE,
    mock: process.env.MOCK_SERVER ?? path.join(L.TESTS_DIR, 'mock-server'),
    searches: 50, wb: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
	const a = argv[i];
	if (a === '--json')
		opts.json = true;
	else if (a === '--misses')
		opts.misses = true;
	else if (a === '--tasks' && i + 1 < argv.length)
		opts.tasks = argv[++i];
	else if (a === '--mock' && i + 1 < argv.length)
		opts.mock = argv[++i];
	else if (a === '--searches' && i + 1 < argv.length)
		opts.searches = Number(argv[++i]);
	else if (a.startsWith('-') || opts.wb !== null)
		usage();
	else
		opts.wb = path.resolve(a);
}
if (opts.wb === null || !(opts.searches > 0))
	usage();
if (!L.haveServers()) {
	console.error('bench/context.mjs: tests/node_modules lacks the servers or the tokenizer: run make tests/node_modules');
	process.exit(3);
}

const say = (s) => console.error(`context: ${s}`);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-context-'));
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

async function toolsTokens(tools) {
	return sum(await Promise.all(tools.map((t) => L.tokens(L.toolText(t)))));
}

// 1. Every tool of the six servers, each listed directly.
const cfg = L.writeContextConfig(path.join(scratch, 'six'));
say('listing the six servers directly');
const direct = await L.directTools(cfg.servers);
const directTools = Object.values(direct).flat();
const directTokens = await toolsTokens(directTools);

// 2. The workbench: its catalogue filled by --probe, then one session:
// the base, a search per task (nothing open yet), then every toolbox
// opened.
say(`${opts.wb} --probe`);
L.probe(opts.wb, cfg.file);
const tasks = L.readTasks(opts.tasks);
const wb = await L.connectWorkbench(opts.wb, cfg.file);
let base, searched, openText = {};
try {
	const instructions = wb.client.getInstructions() ?? '';
	const metaTools = await L.listAllTools(wb.client);
	base = await L.tokens(instructions) + await toolsTokens(metaTools);
	say(`search_tools for ${tasks.length} tasks`);
	searched = await L.searchTasks(wb.call, tasks);
	for (const tb of Object.keys(L.TOOLBOXES))
		openText[tb] = await wb.call('open_toolbox', { toolbox_name: tb });
} finally {
	await wb.close();
}
const openTokens = {};
for (const [tb, text] of Object.entries(openText))
	openTokens[tb] = await L.tokens(text);
const opened = base + sum(Object.values(openTokens));

// A task: base + its search answer + the open of its tool's toolbox unless
// the hit of that tool carries the tool's inputSchema.
const perTask = [];
for (const s of searched) {
	const hit = s.rank >= 0 ? s.results[s.rank] : null;
	let cost = base + await L.tokens(s.text);
	let opens = null;
	if (hit?.inputSchema === undefined) {
		opens = hit?.toolbox ?? L.toolboxOf(s.expected[0].server);
		cost += openTokens[opens];
	}
	perTask.push({ task: s.task, rank: s.rank < 0 ? null : s.rank + 1,
	    first: s.first, tokens: cost, opens });
}
const costs = perTask.map((t) => t.tokens);
const taskMedian = L.median(costs);

// 3. Search over 10,000 tools: tests/mock-server instances, 8 servers of
// 1,250 tools (each lists 14 fixed tools besides --tools N) in 4
// toolboxes, catalogued by --probe and all open.
let search10k = null;
if (fs.existsSync(opts.mock)) {
	const MOCK_FIXED = 14, SERVERS = 8, TOTAL = 10000;
	const toolboxes = {};
	for (let i = 0; i < SERVERS; i++) {
		const tb = `box${i % 4}`;
		toolboxes[tb] ??= { description: `mock servers, group ${i % 4}`, mcpServers: {} };
		toolboxes[tb].mcpServers[`mock${i}`] = { command: opts.mock,
		    args: ['--tools', String(TOTAL / SERVERS - MOCK_FIXED)] };
	}
	const dir = path.join(scratch, 'big');
	fs.mkdirSync(dir);
	const file = path.join(dir, 'workbench-config.json');
	fs.writeFileSync(file, JSON.stringify({ cacheDir: path.join(dir, 'cache'), toolboxes }));
	say(`search_tools over ${TOTAL} tools (${opts.searches} searches)`);
	L.probe(opts.wb, file);
	const big = await L.connectWorkbench(opts.wb, file);
	try {
		for (const tb of Object.keys(toolboxes))
			await big.call('open_toolbox', { toolbox_name: tb });
		const times = [];
		// The first search, untimed, may build every tool's terms.
		for (let i = -1; i < opts.searches; i++) {
			const q = i < 0 ? 'warm up' : tasks[i % tasks.length].task;
			const t0 = performance.now();
			await big.call('search_tools', { query: q });
			if (i >= 0)
				times.push(performance.now() - t0);
		}
		search10k = L.median(times);
	} finally {
		await big.close();
	}
} else {
	say(`no ${opts.mock} (make tests/mock-server): no search latency`);
}

const r1 = L.recall(searched, 1), r3 = L.recall(searched, 3);
const fig = {
	context_tools: directTools.length,
	context_direct: directTokens,
	context_base: base,
	context_opened: opened,
	context_opened_ratio: opened / directTokens,
	context_task_median: taskMedian,
	context_task_max: Math.max(...costs),
	context_task_ratio: taskMedian / directTokens,
	context_tasks: tasks.length,
	context_recall1: r1,
	context_recall3: r3,
	context_search_10k: search10k,
};
const round = (v) => (v === null ? 'n/a' : Number.isInteger(v) ? v : Number(v.toFixed(4)));
if (opts.json) {
	console.log(JSON.stringify({ figures: Object.fromEntries(
	    Object.entries(fig).map(([k, v]) => [k, v === null ? null : round(v)])),
	    direct: Object.fromEntries(await Promise.all(Object.entries(direct).map(
		async ([s, ts]) => [s, { tools: ts.length, tokens: await toolsTokens(ts) }]))),
	    open: openTokens, tasks: perTask,
	    misses: L.misses(searched, 1) }, null, 2));
} else {
	for (const [k, v] of Object.entries(fig))
		console.log(`BENCH ${k} ${round(v)}`);
}
if (opts.misses) {
	for (const m of L.misses(searched, 1))
		console.error(`context: miss: "${m.task}": want ${m.expected}, ranked ${m.rank ?? '-'}; first ${m.first ?? '(none)'}`);
}
