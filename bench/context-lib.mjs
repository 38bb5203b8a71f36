// bench/context-lib.mjs: what a model reads, counted in tokens (DESIGN.md
// §5e), shared by bench/context.mjs (the figures of `make bench`) and
// tests/e2e/context.test.mjs (the recall targets).
//
// Six real servers from npm, pinned in tests/package.json and run with
// `node` on their installed entry points (no npx, no network), in four
// toolboxes:
//	code:  filesystem + github
//	web:   playwright
//	notes: memory + sequential-thinking
//	demo:  everything
// A tool as a model reads it is JSON.stringify({name, description,
// input_schema}); a tool result as the text of its content; tokens are
// counted by @anthropic-ai/tokenizer.
//
// The search_tools answer is read tolerantly: results from
// {"results": [...]} (one query) or {"searches": [{"query", "results"}]}
// (several), each hit known by server + name, its inputSchema looked for
// per hit.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = path.dirname(BENCH_DIR);
export const TESTS_DIR = path.join(REPO_DIR, 'tests');
export const MODULES = path.join(TESTS_DIR, 'node_modules');
export const TASKS_FILE = path.join(BENCH_DIR, 'tasks.json');

// The npm packages of the six servers and the tokenizer.
export const PACKAGES = {
	filesystem: '@modelcontextprotocol/server-filesystem',
	github: '@modelcontextprotocol/server-github',
	playwright: '@playwright/mcp',
	memory: '@modelcontextprotocol/server-memory',
	'sequential-thinking': '@modelcontextprotocol/server-sequential-thinking',
	everything: '@modelcontextprotocol/server-everything',
};
const TOKENIZER = '@anthropic-ai/tokenizer';
const SDK = '@modelcontextprotocol/sdk';

function pkgDir(pkg) {
	return path.join(MODULES, ...pkg.split('/'));
}

// Whether tests/node_modules holds everything this needs.
export function haveServers() {
	return [...Object.values(PACKAGES), TOKENIZER, SDK].every((p) =>
	    fs.existsSync(path.join(pkgDir(p), 'package.json')));
}

// The entry point of a package's (first) bin, as an absolute path.
export function packageBin(pkg) {
	const dir = pkgDir(pkg);
	const meta = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
	let bin = meta.bin;
	if (typeof bin === 'object' && bin !== null)
		bin = Object.values(bin)[0];
	if (typeof bin !== 'string')
		throw new Error(`${pkg}: no bin in package.json`);
	return path.join(dir, bin);
}

// The SDK (its ESM build: bench/ is outside tests/, so no bare specifiers)
// and the tokenizer (CommonJS).
const sdkEsm = path.join(pkgDir(SDK), 'dist', 'esm');
let loaded = null;
export async function load() {
	if (loaded === null) {
		const { Client } = await import(path.join(sdkEsm, 'client', 'index.js'));
		const { StdioClientTransport } = await import(path.join(sdkEsm, 'client', 'stdio.js'));
		const require = createRequire(path.join(TESTS_DIR, 'package.json'));
		const { countTokens } = require(TOKENIZER);
		loaded = { Client, StdioClientTransport, countTokens };
	}
	return loaded;
}

export async function tokens(text) {
	return (await load()).countTokens(text);
}

// A tool as a model reads it.
export function toolText(t) {
	return JSON.stringify({ name: t.name, description: t.description,
	    input_schema: t.inputSchema });
}

// A tool result as a model reads it: the text of its content.
export function resultText(result) {
	return (result?.content ?? []).filter((c) => c.type === 'text')
	    .map((c) => c.text).join('\n');
}

// ---------------------------------------------------------------------------
// The six servers and the workbench configuration over them.

// The server definitions (command, args, env), with their scratch files
// under dir: filesystem's allowed directory and memory's file.
export function serverDefs(dir) {
	const files = path.join(dir, 'files');
	fs.mkdirSync(files, { recursive: true });
	const node = process.execPath;
	const run = (name, ...args) => ({ command: node,
	    args: [packageBin(PACKAGES[name]), ...args] });
	return {
		filesystem: run('filesystem', files),
		github: { ...run('github'),
		    // It lists its tools without a real token; the dummy
		    // keeps it from complaining about a missing one.
		    env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'dummy-token-for-listing' } },
		playwright: run('playwright', '--headless', '--isolated'),
		memory: { ...run('memory'),
		    env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } },
		'sequential-thinking': { ...run('sequential-thinking'),
		    env: { DISABLE_THOUGHT_LOGGING: 'true' } },
		everything: run('everything', 'stdio'),
	};
}

// Toolbox -> its description and servers.
export const TOOLBOXES = {
	code: { description: 'Files on this machine and GitHub: repositories, issues, pull requests',
	    servers: ['filesystem', 'github'] },
	web: { description: 'A web browser the assistant drives: pages, clicks, forms, screenshots',
	    servers: ['playwright'] },
	notes: { description: 'Long-term memory of people and facts, and step-by-step thinking',
	    servers: ['memory', 'sequential-thinking'] },
	demo: { description: 'The MCP reference test server: echo, sums, samples of every feature',
	    servers: ['everything'] },
};

export function toolboxOf(server) {
	for (const [tb, d] of Object.entries(TOOLBOXES))
		if (d.servers.includes(server))
			return tb;
	return null;
}

// Write a workbench configuration of the four toolboxes into dir (a fresh
// temporary directory when none is given); returns {dir, file, cacheDir,
// servers}.  extra: more top-level members.
export function writeContextConfig(dir, extra = {}) {
	dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'wb-context-'));
	const servers = serverDefs(dir);
	const cacheDir = path.join(dir, 'cache');
	const toolboxes = {};
	for (const [tb, d] of Object.entries(TOOLBOXES)) {
		const mcpServers = {};
		for (const s of d.servers)
			mcpServers[s] = servers[s];
		toolboxes[tb] = { description: d.description, mcpServers };
	}
	const file = path.join(dir, 'workbench-config.json');
	fs.writeFileSync(file, JSON.stringify({ cacheDir, ...extra, toolboxes }, null, 2));
	return { dir, file, cacheDir, servers };
}

// Fill the catalogue: `WB --probe -c FILE`.  Returns its output; throws
// when a server failed.
export function probe(wb, file, timeoutMs = 120000) {
	const r = spawnSync(wb, ['--probe', '-c', file], { encoding: 'utf8',
	    timeout: timeoutMs, env: { ...process.env } });
	if (r.error)
		throw new Error(`${wb} --probe: ${r.error.message}`);
	if (r.status !== 0)
		throw new Error(`${wb} --probe exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr.slice(-2000)}`);
	return r.stdout;
}

// ---------------------------------------------------------------------------
// Clients.

// An SDK client over stdio to a command; {client, close()}.
export async function connect(def, name = 'wb-context') {
	const { Client, StdioClientTransport } = await load();
	const transport = new StdioClientTransport({ command: def.command,
	    args: def.args ?? [], env: { ...process.env, ...(def.env ?? {}) },
	    cwd: def.cwd, stderr: def.stderr ?? 'ignore' });
	const client = new Client({ name, version: '1.0.0' });
	await client.connect(transport);
	return { client, transport, close: () => client.close() };
}

// Every tool a client lists, all pages.
export async function listAllTools(client) {
	const tools = [];
	let cursor;
	do {
		const r = await client.listTools(cursor === undefined ? {} : { cursor });
		tools.push(...r.tools);
		cursor = r.nextCursor;
	} while (cursor);
	return tools;
}

// A tool result's text as JSON, or null when it is none.
function parsed(text) {
	try {
		return JSON.parse(text);
	} catch {
		return null;
	}
}

// The tools an open_toolbox answer lists, as {server, name}: from
// {"servers": [{server, "tools": [{name}]}]} (or, as it was before,
// {"tools": [{name, source_server}]}).
export function openedTools(text) {
	const j = parsed(text);
	if (Array.isArray(j?.tools))
		return j.tools.map((t) => ({ server: hitServer(t), name: hitName(t) }));
	return (Array.isArray(j?.servers) ? j.servers : []).flatMap((s) =>
	    (Array.isArray(s?.tools) ? s.tools : []).map((t) =>
		({ server: s.server, name: hitName(t) })));
}

// Every tool of every server, listed directly: server -> tools.
export async function directTools(servers) {
	const out = {};
	for (const [name, def] of Object.entries(servers)) {
		const c = await connect(def, `wb-context-direct-${name}`);
		try {
			out[name] = await listAllTools(c.client);
		} finally {
			await c.close();
		}
	}
	return out;
}

// A workbench client: {client, close(), call(name, args) -> text}.
export async function connectWorkbench(wb, file, env = {}) {
	const c = await connect({ command: wb, args: ['-c', file], env },
	    'wb-context');
	c.call = async (name, args) => {
		const r = await c.client.callTool({ name, arguments: args });
		if (r.isError)
			throw new Error(`${name} ${JSON.stringify(args)}: ${resultText(r)}`);
		return resultText(r);
	};
	return c;
}

// ---------------------------------------------------------------------------
// Reading search_tools answers.

// The result lists of a search_tools answer's text: one list per query,
// from {"results": [...]} or {"searches": [{"query", "results"}]}.
export function searchResults(text) {
	const j = parsed(text);
	if (Array.isArray(j?.searches))
		return j.searches.map((s) => (Array.isArray(s?.results) ? s.results : []));
	if (Array.isArray(j?.results))
		return [j.results];
	return [];
}

// A hit's server: `server`, else `source_server`.
export function hitServer(h) {
	return h?.server ?? h?.source_server;
}

export function hitName(h) {
	return h?.name ?? h?.tool_name;
}

function matches(h, want) {
	return hitServer(h) === want.server && hitName(h) === want.name;
}

// The rank (0 = first) of the first hit that is one of the expected tools,
// or -1.
export function rankOf(results, expected) {
	return results.findIndex((h) => expected.some((w) => matches(h, w)));
}

// ---------------------------------------------------------------------------
// Tasks.

export function readTasks(file = TASKS_FILE) {
	const j = JSON.parse(fs.readFileSync(file, 'utf8'));
	const tasks = Array.isArray(j) ? j : j.tasks;
	for (const t of tasks) {
		if (typeof t.task !== 'string' || !Array.isArray(t.expected) ||
		    t.expected.length === 0)
			throw new Error(`bad task: ${JSON.stringify(t)}`);
	}
	return tasks;
}

// Search for every task, one search_tools call each; call(name, args)
// calls a tool of the workbench and returns its result's text.  Returns
// per task {task, expected, text, results, rank, first}.
export async function searchTasks(call, tasks) {
	const out = [];
	for (const t of tasks) {
		const text = await call('search_tools', { query: t.task });
		const results = searchResults(text)[0] ?? [];
		const rank = rankOf(results, t.expected);
		out.push({ task: t.task, expected: t.expected, text, results, rank,
		    first: results[0] ? `${hitServer(results[0])}/${hitName(results[0])}` : null });
	}
	return out;
}

export function recall(searched, k) {
	const n = searched.filter((s) => s.rank >= 0 && s.rank < k).length;
	return searched.length ? n / searched.length : 0;
}

export function median(xs) {
	const s = [...xs].sort((a, b) => a - b);
	if (s.length === 0)
		return NaN;
	const m = s.length >> 1;
	return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// The misses of a task list at k: {task, expected, first} for each task
// whose expected tool is not in the top k.
export function misses(searched, k) {
	return searched.filter((s) => s.rank < 0 || s.rank >= k).map((s) => ({
		task: s.task,
		expected: s.expected.map((e) => `${e.server}/${e.name}`).join(' | '),
		rank: s.rank < 0 ? null : s.rank + 1,
		first: s.first,
	}));
}
