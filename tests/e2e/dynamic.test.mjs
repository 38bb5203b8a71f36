// Issue 4: dynamic mode. Opened tools are listed natively as
// {toolbox}__{server}__{tool}, the client is told with exactly one
// notifications/tools/list_changed per change, and native calls route like
// use_tool. Proxy mode never lists them and never sends list_changed.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import * as L from './lib.mjs';

const { withWorkbench, text, assertOk, openOk } = L;

after(L.cleanup);

const T = { timeout: 20000 };
const TE = { timeout: 30000 };
const META = ['open_toolbox', 'use_tool', 'search_tools'];
const FIXED_TOOLS = ['echo', 'add', 'sleep', 'big', 'crash', 'fail', 'rpc_error', 'structured', 'image',
	'env', 'cwd', 'init_params', 'notify_list_changed', 'stderr'];
// Generated names: "dev__server__" is 13 characters.
const LONG60 = 'long_' + 'l'.repeat(55);		// dev__server__long_... = 73 chars: listed, warned
const HUGE = 'huge_' + 'h'.repeat(115);		// 133 chars: not listed
const SPACED = 'has space';				// not listed
const SPECIAL = 'my__special__tool';
const FORMAT = '{toolbox}__{server}__{tool}';
// How long to wait to be sure a second notification does not arrive.
const QUIET_MS = 400;

function box(servers, description = 'A toolbox') {
	return { description, mcpServers: servers };
}

function withMode(config, mode) {
	return mode === undefined ? config : { ...config, toolMode: mode };
}

async function listNames(wb) {
	return (await wb.client.listTools()).tools.map((t) => t.name);
}

function nativeName(toolbox, server, tool) {
	return `${toolbox}__${server}__${tool}`;
}

function execErrorPrefix(name, server, toolbox) {
	return `Error executing tool '${name}' in server '${server}' (toolbox '${toolbox}'): `;
}

// A tools/call that must fail with a JSON-RPC error; returns {code, message}.
async function rpcError(wb, name, args = {}) {
	const e = await L.rejection(wb.callTool(name, args), `tools/call ${name}`);
	assert.equal(typeof e.code, 'number', `a JSON-RPC error expected for ${name}, got ${e.stack}`);
	const m = e.message.match(/^MCP error -?\d+: ([\s\S]*)$/);
	return { code: e.code, message: m ? m[1] : e.message };
}

// Config used by most tests.
const MOCK_CONFIG = {
	toolboxes: {
		dev: box({ server: L.mock('--tool-name', SPECIAL) }, 'Development box'),
		other: box({ mock: L.mock() }, 'Other box'),
	},
};

const LISTED_DEV = [...FIXED_TOOLS, SPECIAL].map((t) => nativeName('dev', 'server', t));

// ---------------------------------------------------------------------------

describe('mode selection and list_changed on open', () => {
	const variants = [
		['toolMode "dynamic"', 'dynamic', []],
		['--mode dynamic over toolMode "proxy"', 'proxy', ['--mode', 'dynamic']],
		['--mode dynamic with no toolMode', undefined, ['--mode', 'dynamic']],
	];
	for (const [label, mode, args] of variants) {
		test(`${label}: meta-tools only before open; one list_changed per open; none on re-open`, T, async () => {
			await withWorkbench(withMode(MOCK_CONFIG, mode), { args }, async (wb) => {
				const caps = wb.client.getServerCapabilities();
				assert.equal(caps?.tools?.listChanged, true, JSON.stringify(caps));
				const changed = L.collectNotifications(wb.client, ToolListChangedNotificationSchema);
				assert.deepEqual(await listNames(wb), META, 'before any open');

				await openOk(wb, 'dev');
				await changed.waitCount(1, 3000);
				await L.sleep(QUIET_MS);
				assert.equal(changed.count, 1, 'exactly one list_changed after the open');
				assert.deepEqual(await listNames(wb), [...META, ...LISTED_DEV]);

				// Idempotent re-open: no notification, same list.
				await openOk(wb, 'dev');
				await L.sleep(QUIET_MS);
				assert.equal(changed.count, 1, 'no list_changed for an idempotent re-open');
				assert.deepEqual(await listNames(wb), [...META, ...LISTED_DEV]);

				// Another toolbox: one more.
				await openOk(wb, 'other');
				await changed.waitCount(2, 3000);
				await L.sleep(QUIET_MS);
				assert.equal(changed.count, 2, 'one list_changed for the second open');
				const other = FIXED_TOOLS.map((t) => nativeName('other', 'mock', t));
				assert.deepEqual(await listNames(wb), [...META, ...LISTED_DEV, ...other]);
			});
		});
	}

	test('raw: list_changed follows the open_toolbox answer', T, async () => {
		const raw = L.startRaw(MOCK_CONFIG, { args: ['--mode', 'dynamic'] });
		try {
			await raw.initialize();
			raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'other' } } });
			const first = await raw.readJson(10000);
			assert.equal(first.id, 1, `the answer comes first: ${JSON.stringify(first).slice(0, 300)}`);
			assert.ok(first.result && !first.result.isError);
			const second = await raw.readJson(3000);
			assert.equal(second.method, 'notifications/tools/list_changed', JSON.stringify(second));
			assert.equal(second.id, undefined);
			await raw.expectSilence(QUIET_MS);
			// Re-open: the answer and nothing else.
			const r = await raw.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'other' } } });
			assert.equal(r.json.id, 2, r.line);
			await raw.expectSilence(QUIET_MS);
		} finally {
			await raw.close();
		}
	});

	for (const [label, mode, args] of [
		['toolMode "proxy"', 'proxy', []],
		['no toolMode (default proxy)', undefined, []],
		['--mode proxy over toolMode "dynamic"', 'dynamic', ['--mode', 'proxy']],
	]) {
		test(`${label}: no native tools and never list_changed`, T, async () => {
			await withWorkbench(withMode(MOCK_CONFIG, mode), { args }, async (wb) => {
				const changed = L.collectNotifications(wb.client, ToolListChangedNotificationSchema);
				assert.deepEqual(await listNames(wb), META);
				await openOk(wb, 'dev');
				await openOk(wb, 'other');
				// A server's own list change does not reach the client either.
				assert.equal(text(await wb.useTool('dev', 'server', 'notify_list_changed')), 'ok');
				await L.waitFor(async () => L.openedTools(L.resultJson(await wb.openToolbox('dev')))
				    .some((t) => t.name === 'added_1'), 3000, 'added_1 in open_toolbox');
				await L.sleep(QUIET_MS);
				assert.equal(changed.count, 0, 'proxy mode sends no list_changed');
				assert.deepEqual(await listNames(wb), META, 'proxy mode lists only the meta-tools');
			});
		});
	}
});

// ---------------------------------------------------------------------------

describe('native tool entries', () => {
	test('mock: names, description prefix, _meta, copied fields, config order', T, async () => {
		// toolDetail full: open_toolbox gives the tools as the server did,
		// which dynamic mode's tools/list keeps (for clients, not models).
		const config = { toolMode: 'dynamic', toolDetail: 'full', ...MOCK_CONFIG };
		await withWorkbench(config, {}, async (wb) => {
			// Open in the reverse of config order: listing stays in config order.
			const other = await openOk(wb, 'other');
			const dev = await openOk(wb, 'dev');
			const { tools } = await wb.client.listTools();
			const expected = [
				...META,
				...L.openedTools(dev).map((t) => nativeName('dev', t.server, t.name)),
				...L.openedTools(other).map((t) => nativeName('other', t.server, t.name)),
			];
			assert.deepEqual(tools.map((t) => t.name), expected);
			assert.ok(tools.some((t) => t.name === `dev__server__${SPECIAL}`), 'a tool whose name contains __ is listed');

			for (const [toolbox, json] of [['dev', dev], ['other', other]]) {
				for (const src of L.openedTools(json)) {
					const name = nativeName(toolbox, src.server, src.name);
					const t = tools.find((x) => x.name === name);
					assert.ok(t, name);
					assert.equal(t.description, `[${toolbox}/${src.server}] ${src.description}`, name);
					assert.deepEqual(t._meta, {
						source_server: src.server,
						toolbox_name: toolbox,
						original_name: src.name,
					}, `${name} _meta`);
					assert.deepEqual(t.inputSchema, src.inputSchema, `${name} inputSchema`);
					assert.deepEqual(t.outputSchema, src.outputSchema, `${name} outputSchema`);
				}
			}
			const add = tools.find((t) => t.name === 'dev__server__add');
			assert.equal(add.outputSchema?.type, 'object', 'outputSchema of add copied');
			assert.deepEqual(add.outputSchema?.required, ['sum']);
		});
	});

	test('server-everything: title, annotations, schemas and _meta kept', TE, async () => {
		const config = { toolMode: 'dynamic', toolDetail: 'full', toolboxes: { ev: box({ everything: L.everythingServer() }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'ev');
			// server-everything registers a few tools after initialize and
			// announces them; the workbench catches up: until the list and
			// the open agree, and stay so.
			let tools;
			let json;
			const agree = async () => {
				({ tools } = await wb.client.listTools());
				json = await openOk(wb, 'ev');
				return tools.length === META.length + L.openedTools(json).length;
			};
			await L.waitFor(agree, 10000, 'tools/list and open_toolbox to agree', 200);
			await L.sleep(600);
			await L.waitFor(agree, 10000, 'tools/list and open_toolbox to agree', 200);
			assert.ok(L.openedTools(json).length >= 10, `tools: ${L.openedTools(json).map((t) => t.name)}`);
			assert.deepEqual(tools.map((t) => t.name),
			    [...META, ...L.openedTools(json).map((t) => nativeName('ev', 'everything', t.name))]);
			let titled = 0;
			let annotated = 0;
			for (const src of L.openedTools(json)) {
				const name = nativeName('ev', 'everything', src.name);
				const t = tools.find((x) => x.name === name);
				assert.ok(t, name);
				assert.equal(t.description, src.description === undefined
				    ? '[ev/everything]' : `[ev/everything] ${src.description}`, name);
				assert.equal(t.title, src.title, `${name} title`);
				assert.deepEqual(t.annotations, src.annotations, `${name} annotations`);
				assert.deepEqual(t.inputSchema, src.inputSchema, `${name} inputSchema`);
				assert.deepEqual(t.outputSchema, src.outputSchema, `${name} outputSchema`);
				if (src.execution !== undefined)
					assert.deepEqual(t.execution, src.execution, `${name} execution`);
				assert.equal(typeof t._meta, 'object', `${name} has _meta`);
				assert.equal(t._meta.source_server, 'everything');
				assert.equal(t._meta.toolbox_name, 'ev');
				assert.equal(t._meta.original_name, src.name);
				for (const [k, v] of Object.entries(src._meta ?? {}))
					assert.deepEqual(t._meta[k], v, `${name}: server _meta member ${k} kept`);
				if (src.title)
					titled++;
				if (src.annotations)
					annotated++;
			}
			assert.ok(titled > 0 && annotated > 0, 'server-everything tools carry titles and annotations');
			const sc = tools.find((t) => t.name === 'ev__everything__get-structured-content');
			assert.equal(sc?.outputSchema?.type, 'object');
		});
	});
});

// ---------------------------------------------------------------------------

describe('native calls', () => {
	const CONFIG = { toolMode: 'dynamic', ...MOCK_CONFIG };

	test('mock: results verbatim, errors like use_tool, a name containing __', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			await wb.client.listTools();
			let r = await wb.callTool('dev__server__echo', { message: 'native héllo' });
			assert.deepEqual(r.content, [{ type: 'text', text: 'native héllo' }]);
			assert.ok(!r.isError);

			r = await wb.callTool('dev__server__add', { a: 20, b: 22 });
			assertOk(r);
			assert.deepEqual(r.structuredContent, { sum: 42 });
			assert.equal(text(r), '42');

			r = await wb.callTool('dev__server__structured', {});
			assert.deepEqual(r.structuredContent, { answer: 42, items: ['a', 'b'] });

			r = await wb.callTool('dev__server__fail', { message: 'native no' });
			assert.equal(r.isError, true);
			assert.deepEqual(r.content, [{ type: 'text', text: 'native no' }]);

			r = await wb.callTool('dev__server__rpc_error', { message: 'boom-native' });
			assert.equal(r.isError, true, JSON.stringify(r));
			assert.ok(text(r).startsWith(execErrorPrefix('rpc_error', 'server', 'dev')), text(r));
			assert.match(text(r), /boom-native/);

			// The tool's own name contains "__": split at the first two only.
			r = await wb.callTool(`dev__server__${SPECIAL}`, { k: 'v', n: 1 });
			assertOk(r);
			assert.deepEqual(JSON.parse(text(r)), { k: 'v', n: 1 });

			// Identical routing: use_tool gives the same answers.
			const u = await wb.useTool('dev', 'server', SPECIAL, { k: 'v', n: 1 });
			assert.deepEqual(u.content, r.content);

			// Concurrent native calls answer out of order.
			const order = [];
			const slow = wb.callTool('dev__server__sleep', { ms: 600 }).then((x) => (order.push('slow'), x));
			const fast = wb.callTool('dev__server__sleep', { ms: 50 }).then((x) => (order.push('fast'), x));
			const [s, f] = await Promise.all([slow, fast]);
			assert.equal(text(s), 'slept 600');
			assert.equal(text(f), 'slept 50');
			assert.deepEqual(order, ['fast', 'slow']);
		});
	});

	test('server-everything echo and get-sum; server-memory keeps state', TE, async () => {
		const file = path.join(L.makeTempDir('wb-mem-'), 'memory.jsonl');
		const config = {
			toolMode: 'dynamic',
			toolboxes: {
				ev: box({ everything: L.everythingServer() }),
				mem: box({ memory: L.memoryServer(file) }),
			},
		};
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'ev');
			await openOk(wb, 'mem');
			const names = await listNames(wb);
			for (const n of ['ev__everything__echo', 'ev__everything__get-sum', 'mem__memory__create_entities', 'mem__memory__read_graph'])
				assert.ok(names.includes(n), `${n} listed: ${names}`);

			let r = await wb.callTool('ev__everything__echo', { message: 'through a native name' });
			assertOk(r);
			assert.equal(text(r), 'Echo: through a native name');
			r = await wb.callTool('ev__everything__get-sum', { a: 19, b: 23 });
			assertOk(r);
			assert.match(text(r), /\b42\b/);

			r = await wb.callTool('mem__memory__create_entities', {
				entities: [{ name: 'Grace', entityType: 'person', observations: ['wrote COBOL'] }],
			});
			assertOk(r);
			r = await wb.callTool('mem__memory__add_observations', {
				observations: [{ entityName: 'Grace', contents: ['found a moth'] }],
			});
			assertOk(r);
			r = await wb.callTool('mem__memory__read_graph', {});
			assertOk(r);
			const graph = r.structuredContent ?? JSON.parse(text(r));
			const grace = graph.entities.find((e) => e.name === 'Grace');
			assert.ok(grace, JSON.stringify(graph));
			assert.deepEqual(grace.observations, ['wrote COBOL', 'found a moth']);
		});
	});

	test('old format {toolbox}__{server}_{tool} is rejected with the corrected name and CHANGELOG', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			const e = await rpcError(wb, 'dev__server_echo', { message: 'x' });
			assert.equal(e.code, -32602);
			assert.equal(e.message, `Invalid tool name format 'dev__server_echo'. Expected format: ${FORMAT}`
			    + ". Did you mean 'dev__server__echo'? Tool names changed in mcp-workbench 0.1.0: see CHANGELOG.md.");
			// The same for a tool that is not open-dependent: other is closed.
			const o = await rpcError(wb, 'other__mock_add', {});
			assert.equal(o.code, -32602);
			assert.match(o.message, /Expected format: \{toolbox\}__\{server\}__\{tool\}/);
			assert.match(o.message, /'other__mock__add'/);
			assert.match(o.message, /CHANGELOG/);
		});
	});

	test('malformed names: Invalid tool name format; unknown names: Unknown tool', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			for (const name of ['invalid', 'dev____x', '__a__b', 'dev__server__', 'dev_server__echo']) {
				const e = await rpcError(wb, name);
				assert.equal(e.code, -32602, name);
				assert.equal(e.message, `Invalid tool name format '${name}'. Expected format: ${FORMAT}`, name);
			}
			for (const name of ['dev__server__nosuch', 'nobox__server__echo', 'dev__ghost__echo', 'other__mock__echo']) {
				const e = await rpcError(wb, name, { message: 'x' });
				assert.equal(e.code, -32602, name);
				assert.equal(e.message, `Unknown tool: ${name}`, name);
			}
			// Still healthy.
			assert.equal(text(await wb.callTool('dev__server__echo', { message: 'fine' })), 'fine');
		});
	});

	test('long and unlistable names: >64 listed and warned once; space or >128 not listed, use_tool works', T, async () => {
		const config = {
			toolMode: 'dynamic',
			toolboxes: { dev: box({ server: L.mock('--tool-name', LONG60, '--tool-name', SPACED, '--tool-name', HUGE) }) },
		};
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			const long = nativeName('dev', 'server', LONG60);
			assert.ok(long.length > 64 && long.length <= 128, `${long.length}`);
			assert.ok(nativeName('dev', 'server', HUGE).length > 128);
			for (let i = 0; i < 3; i++) {
				const names = await listNames(wb);
				assert.ok(names.includes(long), `${long} listed`);
				assert.ok(!names.some((n) => n.includes(SPACED)), 'a name with a space is not listed');
				assert.ok(!names.some((n) => n.includes(HUGE)), 'a name over 128 characters is not listed');
				assert.deepEqual(names, [...META, ...[...FIXED_TOOLS, LONG60].map((t) => nativeName('dev', 'server', t))]);
			}
			await wb.openToolbox('dev');
			const lines = (s) => wb.stderr.split('\n').filter((l) => l.includes(s) && !l.startsWith('[dev/server] '));
			await L.waitFor(() => [LONG60, SPACED, HUGE].every((n) => lines(n).length > 0), 5000, 'the warnings');
			await L.sleep(200);
			assert.equal(lines(LONG60).length, 1, `one warning about the long name:\n${wb.stderr}`);
			assert.equal(lines(SPACED).length, 1, `one warning about the name with a space:\n${wb.stderr}`);
			assert.equal(lines(HUGE).length, 1, `one warning about the name over 128:\n${wb.stderr}`);

			let r = await wb.callTool(long, { via: 'native' });
			assertOk(r);
			assert.deepEqual(JSON.parse(text(r)), { via: 'native' });
			r = await wb.useTool('dev', 'server', SPACED, { via: 'use_tool' });
			assertOk(r);
			assert.deepEqual(JSON.parse(text(r)), { via: 'use_tool' });
			r = await wb.useTool('dev', 'server', HUGE, { n: 128 });
			assertOk(r);
			assert.deepEqual(JSON.parse(text(r)), { n: 128 });
		});
	});

	test('a tool name listed twice by a server, or a repeated tools/list cursor: each tool listed once, a warning', T, async () => {
		const config = {
			toolMode: 'dynamic',
			toolboxes: { dev: box({ twice: L.mock('--tool-name', 'echo', '--tool-name', 'add'), loop: L.mock('--repeat-cursor') }) },
		};
		await withWorkbench(config, {}, async (wb) => {
			const open = await openOk(wb, 'dev');
			const twice = L.openedTools(open).filter((t) => t.server === 'twice').map((t) => t.name);
			assert.deepEqual(twice, FIXED_TOOLS);
			const names = await listNames(wb);
			assert.equal(new Set(names).size, names.length, `a name twice: ${names}`);
			assert.deepEqual(names.filter((n) => n.startsWith('dev__twice__')), FIXED_TOOLS.map((t) => nativeName('dev', 'twice', t)));
			const r = await wb.callTool(nativeName('dev', 'twice', 'echo'), { message: 'first' });
			assert.equal(text(r), 'first');
			for (const t of ['echo', 'add'])
				await wb.waitStderr(new RegExp(`dev/twice: tools/list names '${t}' more than once; keeping the first`), 10000);
			// Started again, the looping server's first list is freed.
			assert.equal((await wb.useTool('dev', 'loop', 'crash', {})).isError, true);
			const again = await openOk(wb, 'dev');
			const loop = L.openedTools(again).filter((t) => t.server === 'loop').map((t) => t.name);
			assert.equal(new Set(loop).size, loop.length, `a name twice: ${loop}`);
		});
	});

	test('a server\'s list_changed: one client list_changed, the new tool listed and callable', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const changed = L.collectNotifications(wb.client, ToolListChangedNotificationSchema);
			await openOk(wb, 'dev');
			await changed.waitCount(1, 3000);
			await L.sleep(QUIET_MS);
			changed.reset();
			const r = await wb.callTool('dev__server__notify_list_changed', {});
			assert.equal(text(r), 'ok');
			await changed.waitCount(1, 3000);
			await L.sleep(QUIET_MS);
			assert.equal(changed.count, 1, 'exactly one list_changed for the server\'s change');
			const names = await listNames(wb);
			assert.deepEqual(names, [...META, ...LISTED_DEV, 'dev__server__added_1']);
			const a = await wb.callTool('dev__server__added_1', { fresh: true });
			assertOk(a);
			assert.deepEqual(JSON.parse(text(a)), { fresh: true });
			// open_toolbox sees it too, and re-opening sends nothing.
			const json = await openOk(wb, 'dev');
			assert.ok(L.openedTools(json).some((t) => t.name === 'added_1'));
			await L.sleep(QUIET_MS);
			assert.equal(changed.count, 1);
		});
	});

	test('a crash during native calls gives use_tool\'s isError text; the next call restarts', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			const t0 = Date.now();
			const pending = wb.callTool('dev__server__sleep', { ms: 10000 }, { timeout: 15000 });
			await L.sleep(100);
			const crash = await wb.callTool('dev__server__crash', { code: 3 });
			const inflight = await pending;
			assert.ok(Date.now() - t0 < 3000, 'answered at once');
			for (const [r, name] of [[crash, 'crash'], [inflight, 'sleep']]) {
				assert.equal(r.isError, true, JSON.stringify(r));
				const t = text(r);
				assert.ok(t.startsWith(execErrorPrefix(name, 'server', 'dev')), t);
				assert.match(t, /\b3\b/, `exit status in: ${t}`);
			}
			const again = await wb.callTool('dev__server__echo', { message: 'back' });
			assertOk(again);
			assert.equal(text(again), 'back');
		});
	});
});
