// bench/share.mjs: what sharing servers between sessions costs and saves,
// as an SDK client sees it ("share": true against the same configuration
// without it).  Used by bench/run.sh when the test suite's node_modules
// are there.
//
// usage: node bench/share.mjs WORKBENCH RUNS
// Prints one line per figure:
//	BENCH share_rss unshared=KB shared=KB
//		total RSS of every workbench process (fronts, shared
//		workbench, guardians) and server of 4 sessions, each with a
//		toolbox of two node servers open
//	BENCH share_open ms=MS started=N
//		open_toolbox (median) in a new session while another has the
//		servers running, and the server processes that started meanwhile
//	BENCH share_front_rss kb=KB
//		a waiting front's RSS

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, '..', 'tests', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const { Client } = await import(path.join(sdk, 'client', 'index.js'));
const { StdioClientTransport } = await import(path.join(sdk, 'client', 'stdio.js'));
const FIXTURE = path.join(here, '..', 'tests', 'e2e', 'fixture-server.mjs');

const [wb, runsArg] = process.argv.slice(2);
if (wb === undefined) {
	console.error('usage: node bench/share.mjs WORKBENCH RUNS');
	process.exit(2);
}
const runs = Number(runsArg ?? 10);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-share-bench-'));

function config(share) {
	const file = path.join(dir, share ? 'shared.json' : 'alone.json');
	const server = { command: process.execPath, args: [FIXTURE] };
	fs.writeFileSync(file, JSON.stringify({ share, shareDir: path.join(dir, 'run'),
	    shareLingerMs: 0, cache: false,
	    toolboxes: { b: { mcpServers: { n1: server, n2: server } } } }));
	return file;
}

async function session(cfg) {
	const transport = new StdioClientTransport({ command: wb, args: ['-c', cfg], stderr: 'ignore' });
	const client = new Client({ name: 'bench-share', version: '1' });
	await client.connect(transport);
	return { client, pid: transport.pid };
}

async function open(s) {
	const t0 = performance.now();
	const r = await s.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'b' } });
	if (r.isError)
		throw new Error(`open_toolbox: ${JSON.stringify(r)}`);
	return performance.now() - t0;
}

function children() {
	const kids = new Map();
	for (const p of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(p))
			continue;
		try {
			const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
			const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
			if (!kids.has(ppid))
				kids.set(ppid, []);
			kids.get(ppid).push(Number(p));
		} catch {
			// gone
		}
	}
	return kids;
}

function rss(pid) {
	try {
		const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
		return m ? Number(m[1]) : 0;
	} catch {
		return 0;
	}
}

// Every process below pid (and those of the shared workbench, which its
// front started but left: it is found by its command line).
function tree(roots) {
	const kids = children();
	const seen = new Set();
	const stack = [...roots];
	while (stack.length > 0) {
		const p = stack.pop();
		if (seen.has(p))
			continue;
		seen.add(p);
		stack.push(...(kids.get(p) ?? []));
	}
	return seen;
}

function sharedWorkbenches(cfg) {
	return fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
		try {
			const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
			return argv.includes('--share-serve') && argv.includes(cfg);
		} catch {
			return false;
		}
	}).map(Number);
}

function total(cfg) {
	const pids = tree([process.pid, ...sharedWorkbenches(cfg)]);
	pids.delete(process.pid);
	let kb = 0;
	for (const p of pids)
		kb += rss(p);
	return kb;
}

async function fourSessions(cfg) {
	const s = [];
	for (let i = 0; i < 4; i++) {
		s.push(await session(cfg));
		await open(s[i]);
	}
	const kb = total(cfg);
	return { s, kb };
}

async function closeAll(s) {
	await Promise.all(s.map((x) => x.client.close()));
}

const alone = config(false);
const shared = config(true);

const a = await fourSessions(alone);
await closeAll(a.s);
const b = await fourSessions(shared);
console.log(`BENCH share_rss unshared=${a.kb} shared=${b.kb}`);

// The fronts wait: their RSS.
const fronts = b.s.map((x) => rss(x.pid)).sort((x, y) => x - y);
console.log(`BENCH share_front_rss kb=${fronts[fronts.length >> 1]}`);

// New sessions open the toolbox whose servers the first four run.
const before = tree(sharedWorkbenches(shared)).size;
const times = [];
for (let i = 0; i < runs; i++) {
	const s = await session(shared);
	times.push(await open(s));
	await s.client.close();
}
const started = tree(sharedWorkbenches(shared)).size - before;
times.sort((x, y) => x - y);
console.log(`BENCH share_open ms=${times[times.length >> 1].toFixed(3)} started=${started}`);
await closeAll(b.s);
fs.rmSync(dir, { recursive: true, force: true });
