// Issue 20: the tool catalogue on disk (instant open_toolbox) and
// search_tools.  Sessions that should share a catalogue are given the same
// XDG_CACHE_HOME; every other test gets one of its own (lib.mjs).

import fs from 'node:fs';
import path from 'node:path';
import { describe, test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';
import * as H from './hostile-lib.mjs';
import * as E from './eras-lib.mjs';

const T = H.T;

after(H.cleanupAll);
afterEach(H.cleanupAll);

function withCache(dir) {
	return { ...process.env, XDG_CACHE_HOME: dir };
}

function entries(dir) {
	const d = path.join(dir, 'mcp-workbench');
	return fs.existsSync(d) ? fs.readdirSync(d).filter((f) => f.endsWith('.json')).map((f) => path.join(d, f)) : [];
}

async function session(config, cacheDir) {
	const s = H.startSession(config, { env: withCache(cacheDir) });
	await s.initialize();
	return s;
}

async function finish(s) {
	const r = await s.close(5000);
	assert.equal(r?.code, 0, s.describe());
	H.forget(s);
}

// A mock whose extra tool is named by the file: its list changes between
// sessions while its configuration stays the same.
function namedBy(file) {
	return { command: 'sh', args: ['-c', 'exec "$0" --tools 1 --tool-name "$(cat "$1")"', L.MOCK, file] };
}

// What --probe declares: what a typical client does.
const TYPICAL = { roots: { listChanged: true }, sampling: {}, elicitation: {} };

function sc(l) {
	assert.equal(l.json?.result?.isError, undefined, l.text.slice(0, 500));
	return l.json.result.structuredContent;
}

const SLOW = {
	toolboxes: {
		b: {
			description: 'slow',
			mcpServers: { slow: L.mock('--init-delay', '2000', '--tools', '3', '--prompts') },
		},
	},
};

describe('the catalogue', () => {
	test('a server that takes 2 s to start: the second session opens it at once, from the catalogue; calls wait for it', { timeout: T(30000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		let s = await session(SLOW, cache);
		let t0 = Date.now();
		const first = sc(await s.open('b', T(10000)));
		assert.ok(Date.now() - t0 >= 2000, 'the first open waits for the server');
		assert.equal(first.from_catalogue, undefined);
		await finish(s);
		const files = entries(cache);
		assert.equal(files.length, 1, 'one entry');
		assert.equal(fs.statSync(path.dirname(files[0])).mode & 0o777, 0o700, 'directory 0700');
		assert.equal(fs.statSync(files[0]).mode & 0o777, 0o600, 'file 0600');
		assert.doesNotMatch(fs.readFileSync(files[0], 'utf8'), /\.tmp/);
		s = await session(SLOW, cache);
		t0 = Date.now();
		const second = sc(await s.open('b', T(10000)));
		const took = Date.now() - t0;
		// Before the server could have answered its initialize (2 s).
		assert.ok(took < 1800, `answered from the catalogue in ${took} ms`);
		assert.deepEqual(second.from_catalogue, ['slow']);
		assert.deepEqual(L.openedTools(second).map((x) => x.name), L.openedTools(first).map((x) => x.name));
		assert.equal(second.servers_connected, 1, 'the server starting behind its entry counts');
		// Its prompts and resources came from the catalogue too.
		const prompts = await s.request('prompts/list', {});
		assert.ok(prompts.json.result.prompts.length > 0, prompts.text.slice(0, 300));
		assert.ok(second.servers[0].prompts > 0, JSON.stringify(second.servers));
		// A call waits for the server, then works.
		const l = await s.useTool('b', 'slow', 'echo', { message: 'waited' }, T(10000));
		assert.equal(H.text(l), 'waited');
		assert.ok(Date.now() - t0 >= 1900, 'the call waited for the start');
		await finish(s);
	});

	test('a changed configuration line invalidates its entry; a corrupt entry is ignored with one warning', { timeout: T(30000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		const config = (n) => ({ toolboxes: { b: { description: 'x', mcpServers: { m: L.mock('--tools', String(n)) } } } });
		let s = await session(config(2), cache);
		const two = sc(await s.open('b'));
		await finish(s);
		s = await session(config(4), cache);
		const four = sc(await s.open('b'));
		assert.equal(four.from_catalogue, undefined, 'not the other configuration\'s entry');
		assert.equal(L.openedTools(four).length, L.openedTools(two).length + 2);
		await finish(s);
		assert.equal(entries(cache).length, 2, 'an entry per configuration');
		for (const f of entries(cache))
			fs.writeFileSync(f, '{"mcpWorkbenchCatalogue":1,"tools":[');
		s = await session(config(4), cache);
		const again = sc(await s.open('b'));
		assert.equal(again.from_catalogue, undefined);
		assert.equal(L.openedTools(again).length, L.openedTools(four).length);
		await finish(s);
		assert.equal(s.stderrTail.match(/catalogue: ignoring .*: not valid JSON/g)?.length, 1, s.stderrTail);
		// Rewritten whole by the server's own list.
		s = await session(config(4), cache);
		assert.deepEqual(sc(await s.open('b')).from_catalogue, ['m']);
		await finish(s);
	});

	test('"cache": false writes nothing; a directory that cannot be made keeps lists in memory, with one warning', { timeout: T(20000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		let s = await session({ cache: false, ...SLOW }, cache);
		sc(await s.open('b', T(10000)));
		await finish(s);
		assert.deepEqual(entries(cache), [], 'no entry written');
		const file = path.join(cache, 'a-file');
		fs.writeFileSync(file, 'not a directory');
		const config = { cacheDir: path.join(file, 'sub'), toolboxes: { b: { description: 'x', mcpServers: { m: L.mock(), n: L.mock('--name', 'n') } } } };
		s = await session(config, cache);
		assert.equal(sc(await s.open('b')).servers_connected, 2);
		assert.equal(H.text(await s.useTool('b', 'm', 'echo', { message: 'fine' })), 'fine');
		await finish(s);
		assert.equal(s.stderrTail.match(/catalogue: .*: Not a directory; tool lists are kept in memory only/g)?.length, 1, s.stderrTail);
	});

	test('a read-only directory: its entries are read, a changed list is not written, one warning', { timeout: T(20000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		const name = path.join(L.makeTempDir('wb-name-'), 'name');
		fs.writeFileSync(name, 'first_extra');
		const config = { toolboxes: { b: { description: 'x', mcpServers: { m: namedBy(name) } } } };
		let s = H.startSession(config, { env: withCache(cache) });
		await s.initialize();
		sc(await s.open('b'));
		await finish(s);
		const dir = path.join(cache, 'mcp-workbench');
		const file = entries(cache)[0];
		const written = fs.readFileSync(file, 'utf8');
		// Root writes through a directory's mode: it gets a read-only
		// mount of it instead, in a mount namespace of its own.
		let wrap = [];
		if (process.getuid() === 0)
			wrap = ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
			    'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"', dir];
		else
			fs.chmodSync(dir, 0o500);
		fs.writeFileSync(name, 'second_extra');
		try {
			s = H.startSession(config, { wrap, env: withCache(cache) });
			await s.initialize();
			const open = sc(await s.open('b'));
			assert.deepEqual(open.from_catalogue, ['m'], 'read from the read-only directory');
			assert.ok(L.openedTools(open).some((x) => x.name === 'first_extra'), 'the entry\'s list');
			// The server's own list replaces it in memory.
			await L.waitFor(async () => L.openedTools(sc(await s.open('b'))).some((x) => x.name === 'second_extra'), T(5000), 'the server\'s list');
			assert.match(H.text(await s.useTool('b', 'm', 'second_extra', { message: 'fine' })), /fine/, 'the server\'s tool is called');
			await finish(s);
		} finally {
			fs.chmodSync(dir, 0o700);
		}
		assert.equal(fs.readFileSync(file, 'utf8'), written, 'the entry is unchanged');
		assert.deepEqual(fs.readdirSync(dir).sort(), [path.basename(file), 'key'].sort(), 'no temporary file left');
		assert.equal(s.stderrTail.match(/catalogue: .*: (Read-only file system|Permission denied); its entries are read, but new tool lists are kept in memory only/g)?.length, 1, s.stderrTail);
	});

	test('a tool list that changed between sessions: the entry is replaced and dynamic mode gets tools/list_changed', { timeout: T(20000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		// The server changed, its configuration did not: the same entry.
		const name = path.join(L.makeTempDir('wb-name-'), 'name');
		fs.writeFileSync(name, 'first_extra');
		const config = { toolMode: 'dynamic', toolboxes: { b: { description: 'x', mcpServers: { m: namedBy(name) } } } };
		let s = H.startSession(config, { env: withCache(cache) });
		await s.initialize();
		sc(await s.open('b'));
		await finish(s);
		const before = JSON.parse(fs.readFileSync(entries(cache)[0], 'utf8'));
		assert.ok(before.tools.some((x) => x.name === 'first_extra'));
		fs.writeFileSync(name, 'second_extra');
		s = H.startSession(config, { env: withCache(cache) });
		await s.initialize();
		const others = [];
		const open = await s.open('b');
		assert.deepEqual(sc(open).from_catalogue, ['m']);
		assert.ok(L.openedTools(sc(open)).some((x) => x.name === 'first_extra'), 'the catalogue\'s list first');
		const changed = await s.waitLine((l) => l.json?.method === 'notifications/tools/list_changed', T(5000), others);
		assert.ok(changed, 'list_changed');
		await L.waitFor(() => /second_extra/.test(fs.readFileSync(entries(cache)[0], 'utf8')), T(3000), 'the entry replaced');
		const list = await s.request('tools/list', {});
		const names = list.json.result.tools.map((x) => x.name);
		assert.ok(names.includes('b__m__second_extra') && !names.includes('b__m__first_extra'), names.join(' '));
		await finish(s);
	});
});

describe('the catalogue as users meet it', () => {
	test('the same configuration laid out anew (indented, keys and env in another order, a ${VAR} giving the same value, under other names) finds its entry; a server that differs in anything it runs with does not', { timeout: T(40000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		const cwd = L.makeTempDir('wb-cwd-');
		const server = { command: L.MOCK, args: ['--tools', '2'], env: { A: '1', B: '2' }, cwd };
		let s = await session(L.writeConfig(JSON.stringify({ toolboxes: { b: { description: 'x', mcpServers: { m: server } } } })), cache);
		assert.equal(sc(await s.open('b')).from_catalogue, undefined);
		await finish(s);
		assert.equal(entries(cache).length, 1);
		const relaid = `{
        "toolboxes": {
                "other": {
                        "mcpServers": {
                                "renamed": {
                                        "cwd":      ${JSON.stringify(cwd)},
                                        "env":      { "B": "2",   "A": "\${WB_ONE}" },
                                        "args":     [ "--tools",
                                                      "2" ],
                                        "command":  ${JSON.stringify(L.MOCK)},
                                        "initTimeoutMs": 20000
                                }
                        },
                        "description": "another toolbox"
                }
        }
}
`;
		s = H.startSession(L.writeConfig(relaid), { env: { ...withCache(cache), WB_ONE: '1' } });
		await s.initialize();
		assert.deepEqual(sc(await s.open('other')).from_catalogue, ['renamed'], 'the same server\'s entry');
		await finish(s);
		// Each of these runs with something else: none may be given the
		// entry above (nor one another's).
		const variants = {
			args: { ...server, args: ['--tools', '3'] },
			envValue: { ...server, env: { A: '1', B: '9' } },
			envMore: { ...server, env: { A: '1', B: '2', C: '3' } },
			cwd: { ...server, cwd: L.makeTempDir('wb-cwd-') },
			filters: { ...server, toolFilters: ['echo', 'tool_*'] },
			protocol: { ...server, protocol: 'legacy' },
			inheritEnv: { ...server, inheritEnv: true },
			command: { ...server, command: 'sh', args: ['-c', 'exec "$0" "$@"', L.MOCK, '--tools', '2'] },
		};
		const toolboxes = {};
		for (const [name, v] of Object.entries(variants))
			toolboxes[name] = { description: name, mcpServers: { m: v } };
		s = await session({ toolboxes }, cache);
		for (const name of Object.keys(variants)) {
			const open = sc(await s.open(name));
			assert.equal(open.from_catalogue, undefined, `${name}: another configuration's entry`);
			assert.equal(open.servers_connected, 1, name);
		}
		await finish(s);
		assert.equal(entries(cache).length, 1 + Object.keys(variants).length, 'an entry each');
	});

	test('a server that failed to start after an answer from the catalogue: the next open_toolbox says so as a live open does, and its entry is removed', { timeout: T(40000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		const flag = path.join(L.makeTempDir('wb-flag-'), 'broken');
		const breakable = (n) => ({ command: 'sh', args: ['-c', 'if [ -e "$1" ]; then echo "broken on purpose" >&2; exit 3; fi; exec "$0" --tools "$2"', L.MOCK, flag, n] });
		const config = {
			toolboxes: {
				b: { description: 'x', mcpServers: { good: L.mock(), m: breakable('1') } },
				solo: { description: 'y', mcpServers: { only: breakable('2') } },
			},
		};
		let s = await session(config, cache);
		sc(await s.open('b'));
		sc(await s.open('solo'));
		await finish(s);
		assert.equal(entries(cache).length, 3);
		fs.writeFileSync(flag, '');
		s = await session(config, cache);
		// The catalogue cannot know yet.
		assert.deepEqual(sc(await s.open('b')).from_catalogue, ['good', 'm']);
		assert.deepEqual(sc(await s.open('solo')).from_catalogue, ['only']);
		await L.waitFor(() => /b\/m: exited with status 3/.test(s.stderrTail) && /solo\/only: exited with status 3/.test(s.stderrTail), T(5000), 'both failures');
		const again = sc(await s.open('b'));
		assert.equal(again.servers_connected, 1);
		// good may still be starting behind its entry; m is not vouched for.
		assert.ok(!(again.from_catalogue ?? []).includes('m'), JSON.stringify(again).slice(0, 300));
		assert.deepEqual(again.servers_failed?.map((x) => x.server), ['m'], JSON.stringify(again).slice(0, 300));
		assert.match(again.servers_failed[0].error, /exited with status 3.*broken on purpose/);
		assert.ok(!L.openedTools(again).some((x) => x.server === 'm'), 'none of its tools');
		const solo = await s.open('solo');
		assert.equal(solo.json.result.isError, true, solo.text.slice(0, 300));
		assert.match(H.text(solo), /^Failed to open toolbox 'solo': no server could be started\.\n- server 'only': exited with status 3/);
		await finish(s);
		assert.equal(s.stderrTail.match(/catalogue: (b\/m|solo\/only) failed to start; its entry is removed/g)?.length, 2, s.stderrTail);
		assert.equal(entries(cache).length, 1, 'the good server\'s entry is left');
		// Later sessions hear of the failure at once.
		s = await session(config, cache);
		const later = sc(await s.open('b'));
		assert.ok(!(later.from_catalogue ?? []).includes('m'), JSON.stringify(later).slice(0, 300));
		assert.deepEqual(later.servers_failed?.map((x) => x.server), ['m']);
		await finish(s);
	});

	test('--probe declares roots, sampling and elicitation as a typical client does; a client with no entry of its own is given the newest made for other capabilities, corrected by the list its server gives (server-everything offers tools by them)', { timeout: T(120000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		const env = withCache(cache);
		const file = L.writeConfig({ toolboxes: { ev: { description: 'everything', mcpServers: { everything: L.everythingServer() } } } });
		const GATED = ['trigger-elicitation-request', 'trigger-sampling-request', 'get-roots-list'];
		const names = (open) => L.openedTools(open).map((x) => x.name);
		let p = L.runCli(['--probe', '-c', file, 'ev'], { env, timeout: T(30000) });
		assert.equal(p.status, 0, p.all);
		let s = H.startSession(file, { env });
		await s.initialize('2025-11-25', TYPICAL);
		let open = sc(await s.open('ev'));
		assert.deepEqual(open.from_catalogue, ['everything']);
		for (const g of GATED)
			assert.ok(names(open).includes(g), `${g} in ${names(open)}`);
		await finish(s);
		// The SDK client, declaring nothing: no entry of its own, so the
		// probe's answers at once; the server's own list, which has
		// none of those tools, replaces it and is stored as its own.
		let wb = await L.startWorkbench(file, { env });
		open = L.resultJson(await wb.openToolbox('ev'));
		assert.deepEqual(open.from_catalogue, ['everything'], 'made for other capabilities');
		for (const g of GATED)
			assert.ok(names(open).includes(g), g);
		await L.waitFor(async () => L.resultJson(await wb.openToolbox('ev')).from_catalogue === undefined, T(20000), 'the server\'s list');
		open = L.resultJson(await wb.openToolbox('ev'));
		for (const g of GATED)
			assert.ok(!names(open).includes(g), `corrected: ${g}`);
		await wb.close();
		wb = await L.startWorkbench(file, { env });
		open = L.resultJson(await wb.openToolbox('ev'));
		assert.deepEqual(open.from_catalogue, ['everything'], 'its own entry now');
		for (const g of GATED)
			assert.ok(!names(open).includes(g), `its own: ${g}`);
		await wb.close();
		// Sampling only: the newest entry (the one just made) at once,
		// then an entry of its own, from its second session on.
		for (const round of [0, 1]) {
			wb = await L.startWorkbench(file, { env, capabilities: { sampling: {} } });
			open = L.resultJson(await wb.openToolbox('ev'));
			assert.deepEqual(open.from_catalogue, ['everything'], `round ${round}`);
			assert.equal(names(open).includes('trigger-sampling-request'), round === 1, `round ${round}`);
			await L.waitFor(async () => L.resultJson(await wb.openToolbox('ev')).from_catalogue === undefined, T(20000), 'the server\'s list');
			open = L.resultJson(await wb.openToolbox('ev'));
			assert.ok(names(open).includes('trigger-sampling-request'));
			assert.ok(!names(open).includes('trigger-elicitation-request'));
			await wb.close();
		}
		// --capabilities: the probe as a client with URL elicitation,
		// which the server offers a tool of its own for.
		p = L.runCli(['--probe', '--capabilities', '{"elicitation":{"url":{}}}', '-c', file, 'ev'], { env, timeout: T(30000) });
		assert.equal(p.status, 0, p.all);
		wb = await L.startWorkbench(file, { env, capabilities: { elicitation: { url: {} } } });
		open = L.resultJson(await wb.openToolbox('ev'));
		assert.deepEqual(open.from_catalogue, ['everything']);
		assert.ok(names(open).includes('trigger-url-elicitation'), names(open).join(' '));
		assert.ok(!names(open).includes('trigger-sampling-request'));
		await wb.close();
		// A 2026-07-28 client is given the entry of what its request
		// declares.
		await E.withV2(file, 'pin', { env, capabilities: TYPICAL }, async (v2) => {
			open = L.resultJson(await v2.openToolbox('ev'));
			assert.deepEqual(open.from_catalogue, ['everything']);
			for (const g of GATED)
				assert.ok(names(open).includes(g), g);
			// Its server's own list arrives meanwhile.
			await L.waitFor(async () => L.resultJson(await v2.openToolbox('ev')).from_catalogue === undefined, T(10000), 'the server\'s list');
		});
		// Whatever that server was told, the list it gave is stored under
		// that, not under the entry read for the request: a client that
		// declares what the probe did still gets the probe's tools.
		s = H.startSession(file, { env });
		await s.initialize('2025-11-25', TYPICAL);
		open = sc(await s.open('ev'));
		assert.deepEqual(open.from_catalogue, ['everything']);
		for (const g of GATED)
			assert.ok(names(open).includes(g), `${g} in ${names(open)}`);
		await finish(s);
		p = L.runCli(['--probe', '--capabilities', '[]', '-c', file, 'ev'], { env });
		assert.equal(p.status, 2);
		assert.match(p.stderr, /--capabilities: expected a JSON object/);
		p = L.runCli(['--capabilities', '{}', '-c', file], { env });
		assert.equal(p.status, 2);
		assert.match(p.stderr, /--capabilities goes with --probe/);
	});
});

describe('search_tools', () => {
	// Made in each test: temporary directories go after each test.
	const makeConfig = (dir = L.makeTempDir('wb-fs-')) => ({
		toolboxes: {
			ev: { description: 'everything', mcpServers: { everything: L.everythingServer() } },
			mem: { description: 'memory', mcpServers: { memory: L.memoryServer(path.join(dir, 'memory.jsonl')) } },
			fs: { description: 'files', mcpServers: { files: L.filesystemServer(dir) } },
			never: { description: 'not indexed', mcpServers: { m: L.mock() } },
		},
	});

	test('ranks real servers\' tools from the catalogue (--probe fills it), starts nothing, names what is not indexed', { timeout: T(60000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		const file = L.writeConfig(makeConfig());
		const p = L.runCli(['--probe', '-c', file, 'ev', 'mem', 'fs'], { env: withCache(cache), timeout: T(30000) });
		assert.equal(p.status, 0, p.all);
		assert.equal(entries(cache).length, 3);
		const s = H.startSession(file, { env: withCache(cache) });
		await s.initialize('2025-11-25', TYPICAL);
		const list = await s.request('tools/list', {});
		assert.ok(list.json.result.tools.some((x) => x.name === 'search_tools'));
		const t0 = Date.now();
		const r = sc(await s.call('search_tools', { query: 'read a file' }));
		const took = Date.now() - t0;
		assert.equal(r.results[0].toolbox, 'fs', JSON.stringify(r.results.slice(0, 5)));
		const top = r.results.slice(0, 3).map((x) => x.name);
		assert.ok(top.every((n) => /^read_/.test(n)), `the filesystem's read tools first: ${top}`);
		assert.equal(r.results[0].toolbox_open, false);
		assert.ok(r.results[0].inputSchema?.properties, 'the best hits carry their schema');
		assert.ok(!r.results[0].description.includes('\n') && r.results[0].description.length <= 241);
		assert.deepEqual(r.not_indexed, ['never']);
		assert.equal(r.results.length, 5, 'five by default');
		const g = sc(await s.call('search_tools', { query: 'knowledge graph entities', limit: 3 }));
		assert.equal(g.results.length, 3);
		assert.ok(g.results.every((x) => x.toolbox === 'mem'), JSON.stringify(g.results));
		const only = sc(await s.call('search_tools', { query: 'file', toolbox: 'ev' }));
		assert.ok(only.results.every((x) => x.toolbox === 'ev'));
		assert.equal(s.pids.size, 0, 'no server started');
		assert.deepEqual(H.children(s.pid), [], 'no child process');
		assert.ok(took < T(2000), `answered in ${took} ms`);
		await finish(s);
	});

	test('word forms meet, stop words count for nothing, descriptions are searched; the probe\'s entries answer a client of other capabilities (real servers)', { timeout: T(60000) }, async () => {
		const cache = L.makeTempDir('wb-cat-');
		const file = L.writeConfig(makeConfig());
		const p = L.runCli(['--probe', '-c', file, 'ev', 'mem', 'fs'], { env: withCache(cache), timeout: T(30000) });
		assert.equal(p.status, 0, p.all);
		const s = H.startSession(file, { env: withCache(cache) });
		await s.initialize();
		const search = async (query, limit = 50) => sc(await s.call('search_tools', { query, limit })).results;
		const show = (r) => JSON.stringify(r.map((x) => `${x.toolbox}/${x.name}`));
		// "entity" is in no tool's words as such: the memory server has
		// create_entities and delete_entities, and "entities" in the
		// descriptions of more.  Names weigh most: those two first.
		const entity = await search('entity');
		assert.deepEqual(entity.slice(0, 2).map((x) => x.name).sort(), ['create_entities', 'delete_entities'], show(entity));
		const words = entity.filter((x) => /entit/i.test(`${x.name} ${x.description}`));
		assert.ok(words.length >= 5 && words.every((x) => x.toolbox === 'mem'), show(entity));
		// Plural and other forms in the query meet the same tools.
		assert.deepEqual(await search('entities'), entity);
		// "an", "the", "of" are stop words: they rank nothing.
		assert.deepEqual(await search('an entity of the'), entity);
		assert.deepEqual(await search('an the of a'), [], 'stop words alone find nothing');
		// Only a description says "active voice" (create_relations'):
		// descriptions are searched, not names alone.
		const voice = await search('active voice');
		assert.equal(voice[0]?.name, 'create_relations', show(voice));
		assert.equal(voice[0].toolbox, 'mem');
		assert.ok(!/active|voice/.test(voice[0].name));
		// Forms on the tool's side too: "creating relation" finds
		// create_relations first (create, relations).
		assert.equal((await search('creating relation'))[0]?.name, 'create_relations');
		assert.equal(s.pids.size, 0, 'no server started');
		// This client declared nothing; it has no entries of its own, and
		// --probe's answer its open at once while the server starts.
		const o = await s.open('mem', T(20000));
		const osc = o.json?.result?.structuredContent;
		assert.deepEqual(osc?.from_catalogue, ['memory'], o.text.slice(0, 300));
		assert.ok(L.openedTools(osc).some((t) => t.name === 'create_entities'));
		await L.waitFor(async () => (await s.open('mem', T(20000))).json?.result?.structuredContent?.from_catalogue === undefined,
		    T(20000), 'the server\'s own list');
		await finish(s);
	});

	test('bad arguments, and "searchTool": false', { timeout: T(20000) }, async () => {
		const config = makeConfig();
		let s = H.startSession(config);
		await s.initialize();
		for (const [args, re] of [[{}, /query: expected a non-empty string/], [{ query: 'x', limit: 51 }, /limit: expected an integer from 1 to 50/],
		    [{ query: 'x', toolbox: 'nope' }, /toolbox: no toolbox 'nope' is configured/]]) {
			const l = await s.call('search_tools', args);
			assert.equal(l.json.result?.isError, true, l.text);
			assert.match(H.text(l), re);
		}
		const none = sc(await s.call('search_tools', { query: 'anything' }));
		assert.deepEqual(none.results, []);
		assert.deepEqual(none.not_indexed, ['ev', 'mem', 'fs', 'never']);
		await finish(s);
		s = H.startSession({ searchTool: false, ...config });
		const init = await s.initialize();
		assert.doesNotMatch(JSON.stringify(init), /search_tools/, 'not in the instructions');
		const list = await s.request('tools/list', {});
		assert.deepEqual(list.json.result.tools.map((x) => x.name), ['open_toolbox', 'use_tool']);
		const l = await s.call('search_tools', { query: 'x' });
		assert.equal(l.json.error?.code, -32602, l.text);
		await finish(s);
	});
});
