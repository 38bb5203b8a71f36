// Protocol eras: the workbench as a dual-era server (2026-07-28 requests
// carry _meta; initialize keeps the 2025 rules) and as a dual-era client
// (per-server protocol: auto probes with server/discover).  The matrix:
// {SDK 1.x client, v2 client pinned to 2026-07-28, v2 client auto} x
// {legacy mock, npm server, v2 server modern only, v2 server dual}.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import * as L from './lib.mjs';
import * as E from './eras-lib.mjs';

after(L.cleanup);

const T = { timeout: 30000 };

const SERVERS = {
	mock: L.mock(),
	everything: L.everythingServer(),
	v2reject: E.v2Server('reject'),
	v2dual: E.v2Server('serve'),
};

// The echo of each kind of server: its tool, arguments and expected text.
const ECHO = {
	mock: ['echo', { message: 'hi mock' }, 'hi mock'],
	everything: ['echo', { message: 'hi ev' }, /hi ev/],
	v2reject: ['echo', { message: 'hi v2' }, 'hi v2'],
	v2dual: ['echo', { message: 'hi dual' }, 'hi dual'],
};

const STRUCTURED = {
	mock: ['structured', { answer: 42, items: ['a', 'b'] }],
	v2reject: ['structured', { answer: 42 }],
	v2dual: ['structured', { answer: 42 }],
};

const CLIENTS = {
	sdk1: (config) => L.startWorkbench(config),
	pin: (config) => E.startV2(config, 'pin'),
	auto: (config) => E.startV2(config, 'auto'),
};

function check(r, want, what) {
	L.assertOk(r, what);
	if (want instanceof RegExp)
		assert.match(L.text(r), want, what);
	else
		assert.equal(L.text(r), want, what);
}

describe('the era matrix: every client with every server', () => {
	for (const [ckind, start] of Object.entries(CLIENTS)) {
		for (const [skind, server] of Object.entries(SERVERS)) {
			test(`${ckind} client, ${skind} server: open, call, structured content, errors`, T, async () => {
				const config = { toolboxes: { box: { description: 'era', mcpServers: { s: server } } } };
				const wb = await start(config);
				try {
					const opened = L.resultJson(await wb.openToolbox('box'));
					assert.equal(opened.servers_connected, 1, JSON.stringify(opened));
					const [tool, args, want] = ECHO[skind];
					check(await wb.useTool('box', 's', tool, args), want, `${ckind}/${skind} echo`);
					if (STRUCTURED[skind]) {
						const [st, sc] = STRUCTURED[skind];
						const r = await wb.useTool('box', 's', st, {});
						L.assertOk(r);
						assert.deepEqual(r.structuredContent, sc);
					}
					const missing = await wb.useTool('box', 's', 'no_such_tool', {});
					assert.equal(missing.isError, true);
					assert.match(L.text(missing), /not found/);
					if (skind === 'mock' || skind.startsWith('v2')) {
						const f = await wb.useTool('box', 's', 'fail', { message: 'bad' });
						assert.equal(f.isError, true);
					}
				} finally {
					await wb.close();
				}
			});
		}
	}
});

describe('the workbench as a modern server', () => {
	const config = { toolboxes: { box: { description: 'Box of tests', mcpServers: { m: L.mock() } } } };

	test('server/discover: versions, capabilities, instructions, serverInfo, cache hints', T, async () => {
		await L.withRaw(config, {}, async (raw) => {
			const { json } = await raw.request(E.modern(1, 'server/discover'));
			const r = json.result;
			assert.deepEqual(r.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
			assert.deepEqual(r.capabilities, { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true }, completions: {}, logging: {} });
			assert.match(r.instructions, /Box of tests/);
			assert.equal(r.resultType, 'complete');
			assert.equal(typeof r.ttlMs, 'number');
			assert.equal(r.cacheScope, 'private');
			assert.equal(r._meta['io.modelcontextprotocol/serverInfo'].name, 'mcp-workbench');
		});
	});

	test('the _meta checks: -32602 for a missing field, -32022 for another version', T, async () => {
		await L.withRaw(config, {}, async (raw) => {
			let { json } = await raw.request(E.modern(1, 'tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }));
			assert.equal(json.error.code, -32602);
			assert.match(json.error.message, /clientCapabilities/);
			({ json } = await raw.request(E.modern(2, 'tools/list', {}, { ...E.META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' })));
			assert.equal(json.error.code, -32022);
			assert.deepEqual(json.error.data, { supported: ['2026-07-28'], requested: '2099-01-01' });
			({ json } = await raw.request(E.modern(3, 'tools/list', {}, { ...E.META, 'io.modelcontextprotocol/protocolVersion': 7 })));
			assert.equal(json.error.code, -32602);
			({ json } = await raw.request(E.modern(4, 'tools/list', {}, { ...E.META, 'io.modelcontextprotocol/logLevel': 'loud' })));
			assert.equal(json.error.code, -32602);
			({ json } = await raw.request(E.modern(5, 'ping')));
			assert.equal(json.error.code, -32601);
			({ json } = await raw.request(E.modern(6, 'logging/setLevel', { level: 'info' })));
			assert.equal(json.error.code, -32601);
			// Without the _meta version, 2025 rules: not initialized.
			({ json } = await raw.request({ jsonrpc: '2.0', id: 7, method: 'tools/list' }));
			assert.equal(json.error.code, -32600);
			({ json } = await raw.request({ jsonrpc: '2.0', id: 8, method: 'server/discover' }));
			assert.equal(json.error.code, -32601);
		});
	});

	test('modern results: resultType, serverInfo, tools/list cache hints, deterministic order', T, async () => {
		await L.withRaw(config, {}, async (raw) => {
			const a = (await raw.request(E.modern(1, 'tools/list'))).json.result;
			const b = (await raw.request(E.modern(2, 'tools/list'))).json.result;
			assert.deepEqual(a, b);
			assert.deepEqual(a.tools.map((t) => t.name).slice(0, 2), ['open_toolbox', 'use_tool']);
			assert.equal(a.resultType, 'complete');
			assert.equal(typeof a.ttlMs, 'number');
			assert.equal(a.cacheScope, 'private');
			assert.equal(a._meta['io.modelcontextprotocol/serverInfo'].name, 'mcp-workbench');
			// Stateless: use_tool of a toolbox never opened starts its server.
			const { json } = await raw.request(E.modern(3, 'tools/call', { name: 'use_tool',
			    arguments: { tool: { toolbox: 'box', server: 'm', name: 'echo' }, arguments: { message: 'x' } } }), 10000);
			assert.equal(json.result.resultType, 'complete');
			assert.equal(json.result.content[0].text, 'x');
			assert.equal(json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'mcp-workbench');
			// Modern and 2025 requests side by side in one process.
			await raw.initialize();
			const legacy = (await raw.request({ jsonrpc: '2.0', id: 4, method: 'tools/list' })).json.result;
			assert.deepEqual(legacy.tools, a.tools);
			assert.equal(legacy.resultType, undefined);
			assert.equal(legacy._meta, undefined);
		});
	});

	test('stateless dynamic names: a modern call of a closed toolbox starts it', T, async () => {
		const dyn = { toolMode: 'dynamic', ...config };
		await E.withV2(dyn, 'pin', {}, async (wb) => {
			const r = await wb.callTool('box__m__echo', { message: 'dyn' });
			check(r, 'dyn', 'dynamic stateless');
			const names = (await wb.client.listTools()).tools.map((t) => t.name);
			assert.ok(names.includes('box__m__echo'), names.join(' '));
		});
	});
});

describe('the workbench as a dual-era client', () => {
	test('auto, 2025 client: initialize first; a modern-only server refuses it (-32022) and is spoken to modern', T, async () => {
		const config = { toolboxes: { box: { description: 'x', mcpServers: { v2: E.v2Server('reject'), m: L.mock() } } } };
		await L.withWorkbench(config, {}, async (wb) => {
			await L.openOk(wb, 'box');
			const init = L.resultJson(await wb.useTool('box', 'm', 'init_params', {}));
			assert.equal(init.protocolVersion, '2025-11-25');
			check(await wb.useTool('box', 'v2', 'echo', { message: 'legacy client' }), 'legacy client');
		});
	});

	test('protocol "legacy" never probes; "modern" against a legacy server fails clearly', T, async () => {
		const config = { toolboxes: { box: { description: 'x', mcpServers: {
			dual: { ...E.v2Server('serve'), protocol: 'legacy' },
			m: { ...L.mock(), protocol: 'modern' },
		} } } };
		await L.withWorkbench(config, {}, async (wb) => {
			const r = L.resultJson(await wb.openToolbox('box'));
			assert.equal(r.servers_connected, 1, JSON.stringify(r));
			assert.match(JSON.stringify(r.servers_failed), /server\/discover failed/);
			check(await wb.useTool('box', 'dual', 'echo', { message: 'old' }), 'old');
		});
	});

	test('auto: a server silent on server/discover is legacy after probeTimeoutMs', T, async () => {
		const config = { toolboxes: { box: { description: 'x', mcpServers: {
			slow: { ...L.mock('--discover', 'silent'), probeTimeoutMs: 200 },
		} } } };
		await E.withV2(config, 'pin', {}, async (wb) => {
			const t0 = Date.now();
			assert.equal(L.resultJson(await wb.openToolbox('box')).servers_connected, 1);
			assert.ok(Date.now() - t0 >= 200);
			check(await wb.useTool('box', 'slow', 'echo', { message: 'late' }), 'late');
			await wb.waitStderr(/probeTimeoutMs/);
		});
	});

	test('auto: a server that exits on server/discover starts again as legacy, not a crash', T, async () => {
		const config = { toolboxes: { box: { description: 'x', mcpServers: {
			picky: L.mock('--discover', 'exit'),
		} } } };
		await E.withV2(config, 'pin', {}, async (wb) => {
			assert.equal(L.resultJson(await wb.openToolbox('box')).servers_connected, 1);
			check(await wb.useTool('box', 'picky', 'echo', { message: 'again' }), 'again');
			// The verdict is kept: a restart after a crash does not probe.
			await wb.useTool('box', 'picky', 'crash', {});
			check(await wb.useTool('box', 'picky', 'echo', { message: 'kept' }), 'kept');
			// Start lines are on stderr, which may come after an answer.
			await L.waitFor(() => L.mockStarts(wb.stderr).length >= 3, 10000, 'the restart\'s line');
			assert.equal(L.mockStarts(wb.stderr).length, 3, wb.stderr);
			await wb.waitStderr(/after server\/discover; starting it again as a 2025-era server/, 10000);
		});
	});

	test('a modern server whose start failed before it answered server/discover is sent server/discover again, not initialize', T, async () => {
		// Its second process ends before it answers anything (a start
		// that fails, on a machine however busy: no timeout decides it).
		const starts = path.join(L.makeTempDir('wb-era-'), 'starts');
		const v2 = E.v2Server('reject');
		const script = 'n=$(cat "$0" 2>/dev/null || echo 0); echo $((n + 1)) > "$0"; ' +
		    'if [ "$n" = 1 ]; then exit 3; fi; exec "$@"';
		const config = { toolboxes: { box: { description: 'x', mcpServers: {
			m: { command: 'sh', args: ['-c', script, starts, v2.command, ...v2.args],
			    protocol: 'modern', idleTimeoutMs: 300 },
		} } } };
		await L.withWorkbench(config, {}, async (wb) => {
			await L.openOk(wb, 'box');
			check(await wb.useTool('box', 'm', 'echo', { message: 'one' }), 'one');
			await wb.waitStderr(/stopped after 300 ms without traffic/);
			await wb.useTool('box', 'm', 'echo', { message: 'two' });
			await wb.waitStderr(/status 3/);
			const r = L.resultJson(await wb.openToolbox('box'));
			assert.equal(r.servers_connected, 1, JSON.stringify(r));
			check(await wb.useTool('box', 'm', 'echo', { message: 'three' }), 'three');
		});
	});

	test('a bad protocol value is a configuration error', T, async () => {
		const path = L.writeConfig({ toolboxes: { b: { mcpServers: { s: { command: 'x', protocol: 'future' } } } } });
		const r = L.runCli(['-c', path, '--check']);
		assert.notEqual(r.status, 0);
		assert.match(r.stderr, /protocol.*expected "auto", "legacy" or "modern"/s);
	});
});

describe('passed requests across the eras', () => {
	test('a 2025 client\'s prompts/get reaches a modern-only server with the era\'s _meta', T, async () => {
		const config = { toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('reject') } } } };
		await L.withWorkbench(config, {}, async (wb) => {
			await L.openOk(wb, 'box');
			const prompts = (await wb.client.listPrompts()).prompts.map((p) => p.name);
			assert.deepEqual(prompts, ['box__v__greet']);
			const got = await wb.client.getPrompt({ name: 'box__v__greet' });
			assert.equal(got.messages[0].content.text, 'hello from v2');
		});
	});
});

// What a client answers when a server needs input, the capabilities it
// declares for that, and what the v2 server's ask_* tools then say.
const HANDLERS = {
	'elicitation/create': async () => ({ action: 'accept', content: { ok: true } }),
	'sampling/createMessage': async () => ({ role: 'assistant', content: { type: 'text', text: 'hi from the client' }, model: 'm' }),
	'roots/list': async () => ({ roots: [{ uri: 'file:///r1' }] }),
};
const CAPS = { elicitation: {}, sampling: {}, roots: {} };
const ASKS = [
	['ask_elicit', 'elicit accept {"ok":true}'],
	['ask_sample', 'sample hi from the client'],
	['ask_roots', 'roots file:///r1'],
];

describe('input a server needs (MRTR)', () => {

	test('modern to modern: the InputRequiredResult passes, and the retry\'s inputResponses and requestState reach the server', T, async () => {
		const config = { toolMode: 'dynamic', toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('reject') } } } };
		await E.withV2(config, 'pin', { capabilities: CAPS, handlers: HANDLERS }, async (wb) => {
			await wb.openToolbox('box');
			for (const [tool, want] of ASKS)
				check(await wb.useTool('box', 'v', tool, {}), want, `use_tool ${tool}`);
			check(await wb.callTool('box__v__ask_elicit', {}), ASKS[0][1], 'by its dynamic name');
		});
	});

	test('a 2025 client and a dual server: the server asks in the 2025 way, the workbench relays', T, async () => {
		const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const config = { toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('serve') } } } };
		const wb = await L.startWorkbench(config, { capabilities: CAPS });
		try {
			wb.client.setRequestHandler(ElicitRequestSchema, HANDLERS['elicitation/create']);
			wb.client.setRequestHandler(CreateMessageRequestSchema, HANDLERS['sampling/createMessage']);
			wb.client.setRequestHandler(ListRootsRequestSchema, HANDLERS['roots/list']);
			await L.openOk(wb, 'box');
			for (const [tool, want] of ASKS) {
				const r = await wb.client.callTool({ name: 'use_tool', arguments: { tool: { toolbox: 'box', server: 'v', name: tool }, arguments: {} } });
				check(r, want, `use_tool ${tool}`);
			}
		} finally {
			await wb.close();
		}
	});
});

describe('input a server needs, across the eras (MRTR bridged)', () => {
	// A dual server told to speak 2025: it asks with requests of its own.
	const legacyAsker = (extra = {}) => ({ toolMode: 'dynamic', ...extra, toolboxes: { box: { description: 'x', mcpServers: { v: { ...E.v2Server('serve'), protocol: 'legacy' } } } } });
	const caps = { ...E.META, 'io.modelcontextprotocol/clientCapabilities': CAPS };
	const askElicit = (id, extra = {}) => E.modern(id, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'box', server: 'v', name: 'ask_elicit' }, arguments: {} }, ...extra }, caps);
	const ACCEPT = { action: 'accept', content: { ok: true } };

	test('modern client, 2025 server: its requests come back as an InputRequiredResult and the retry answers them', T, async () => {
		await E.withV2(legacyAsker(), 'pin', { capabilities: CAPS, handlers: HANDLERS }, async (wb) => {
			for (const [tool, want] of ASKS)
				check(await wb.useTool('box', 'v', tool, {}), want, `use_tool ${tool}`);
			check(await wb.callTool('box__v__ask_sample', {}), ASKS[1][1], 'by its dynamic name');
		});
	});

	test('2025 client, modern-only server: its InputRequiredResult becomes requests to the client, which sees one call', T, async () => {
		const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const config = { toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('reject') } } } };
		const wb = await L.startWorkbench(config, { capabilities: CAPS });
		try {
			const asked = [];
			wb.client.setRequestHandler(ElicitRequestSchema, (r) => (asked.push(r.method), HANDLERS['elicitation/create']()));
			wb.client.setRequestHandler(CreateMessageRequestSchema, (r) => (asked.push(r.method), HANDLERS['sampling/createMessage']()));
			wb.client.setRequestHandler(ListRootsRequestSchema, (r) => (asked.push(r.method), HANDLERS['roots/list']()));
			await L.openOk(wb, 'box');
			for (const [tool, want] of ASKS)
				check(await wb.useTool('box', 'v', tool, {}), want, `use_tool ${tool}`);
			assert.deepEqual(asked, ['elicitation/create', 'sampling/createMessage', 'roots/list']);
		} finally {
			await wb.close();
		}
	});

	test('2025 client that answers the question with an error: the call fails with it, and the workbench goes on', T, async () => {
		const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const config = { toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('reject') } } } };
		const wb = await L.startWorkbench(config, { capabilities: CAPS });
		try {
			wb.client.setRequestHandler(ElicitRequestSchema, async () => {
				throw new Error('the user walked away');
			});
			await L.openOk(wb, 'box');
			const r = await wb.useTool('box', 'v', 'ask_elicit', {});
			assert.equal(r.isError, true);
			assert.match(L.text(r), /did not answer the server's request for input: .*the user walked away/);
			check(await wb.useTool('box', 'v', 'echo', { message: 'still here' }), 'still here', 'after');
		} finally {
			await wb.close();
		}
	});

	test('a 2025 client\'s calls that wait for a modern server\'s start get the era\'s _meta when sent', T, async () => {
		const cacheDir = L.makeTempDir('wb-cat-');
		const config = { cacheDir, toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('reject') } } } };
		await L.withWorkbench(config, {}, async (wb) => {
			await L.openOk(wb, 'box');	/* Fills the catalogue. */
		});
		await L.withWorkbench(config, {}, async (wb) => {
			const opened = L.resultJson(await wb.openToolbox('box'));
			assert.deepEqual(opened.from_catalogue, ['v'], JSON.stringify(opened).slice(0, 200));
			check(await wb.useTool('box', 'v', 'echo', { message: 'early' }), 'early', 'a call that waited for the start');
		});
	});

	test('2025 client without the capability: the modern server is told so, and the call fails with its reason', T, async () => {
		const config = { toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('reject') } } } };
		await L.withWorkbench(config, {}, async (wb) => {
			await L.openOk(wb, 'box');
			const r = await wb.useTool('box', 'v', 'ask_elicit', {});
			assert.equal(r.isError, true);
			assert.match(L.text(r), /elicitation\/create.*do not declare/);
		});
	});

	test('the minted requestState: random, single-use, bound to its request; forged, reused or misbound is -32602', T, async () => {
		await L.withRaw(legacyAsker(), {}, async (raw) => {
			const first = (await raw.request(askElicit(1))).json.result;
			assert.equal(first.resultType, 'input_required', JSON.stringify(first));
			const keys = Object.keys(first.inputRequests);
			assert.equal(keys.length, 1);
			assert.equal(first.inputRequests[keys[0]].method, 'elicitation/create');
			assert.match(first.requestState, /^wb1\.[0-9a-f]{32}$/);
			assert.ok(first._meta?.['io.modelcontextprotocol/serverInfo'], 'serverInfo');
			const forged = first.requestState.slice(0, -4) + (first.requestState.endsWith('0000') ? '1111' : '0000');
			let r = (await raw.request(askElicit(2, { requestState: forged, inputResponses: { [keys[0]]: ACCEPT } }))).json;
			assert.equal(r.error?.code, -32602, JSON.stringify(r));
			const other = E.modern(3, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'box', server: 'v', name: 'ask_roots' }, arguments: {} }, requestState: first.requestState, inputResponses: {} }, caps);
			r = (await raw.request(other)).json;
			assert.equal(r.error?.code, -32602, JSON.stringify(r));
			assert.match(r.error.message, /another request/);
			r = (await raw.request(askElicit(4, { requestState: first.requestState, inputResponses: { [keys[0]]: ACCEPT } }))).json;
			assert.equal(r.id, 4);
			assert.equal(r.result?.resultType, 'complete', JSON.stringify(r));
			assert.equal(r.result.content[0].text, 'elicit accept {"ok":true}');
			r = (await raw.request(askElicit(5, { requestState: first.requestState, inputResponses: { [keys[0]]: ACCEPT } }))).json;
			assert.equal(r.error?.code, -32602, JSON.stringify(r));
			assert.match(r.error.message, /unknown requestState/);
			// Two calls in a row get different states.
			const a = (await raw.request(askElicit(6))).json.result.requestState;
			const b = (await raw.request(askElicit(7))).json.result.requestState;
			assert.notEqual(a, b);
		});
	});

	test('a parked call that the 2025 server ends meanwhile: the retry gets its answer', T, async () => {
		const cfg = { toolboxes: { box: { description: 'x', mcpServers: { f: L.fixtureServer() } } } };
		const meta = { ...E.META, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } };
		const call = (id, extra = {}) => E.modern(id, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'box', server: 'f', name: 'ask_cancel' }, arguments: { method: 'roots/list', after_ms: 100 } }, ...extra }, meta);
		await L.withRaw(cfg, {}, async (raw) => {
			const first = (await raw.request(call(1), 10000)).json.result;
			assert.equal(first.resultType, 'input_required', JSON.stringify(first));
			await L.sleep(400);
			const r = (await raw.request(call(2, { requestState: first.requestState, inputResponses: {} }))).json;
			assert.equal(r.id, 2);
			assert.equal(r.result?.resultType, 'complete', JSON.stringify(r));
			assert.match(r.result.content[0].text, /"id"/);
		});
	});

	test('a retry without the answers is asked again; an unused state expires (requestStateTtlMs) and the call is cancelled', T, async () => {
		await L.withRaw(legacyAsker({ requestStateTtlMs: 400 }), {}, async (raw) => {
			const first = (await raw.request(askElicit(1))).json.result;
			const again = (await raw.request(askElicit(2, { requestState: first.requestState, inputResponses: {} }))).json.result;
			assert.equal(again.resultType, 'input_required');
			assert.deepEqual(Object.keys(again.inputRequests), Object.keys(first.inputRequests));
			assert.notEqual(again.requestState, first.requestState);
			await L.sleep(700);
			const r = (await raw.request(askElicit(3, { requestState: again.requestState, inputResponses: { x: ACCEPT } }))).json;
			assert.equal(r.error?.code, -32602, JSON.stringify(r));
			// The server is still there and asks afresh.
			const next = (await raw.request(askElicit(4))).json.result;
			assert.equal(next.resultType, 'input_required');
			const done = (await raw.request(askElicit(5, { requestState: next.requestState, inputResponses: { [Object.keys(next.inputRequests)[0]]: ACCEPT } }))).json.result;
			assert.equal(done.content[0].text, 'elicit accept {"ok":true}');
		});
	});

	test('a modern call without the capability: the 2025 server is refused as such a client would be, and no state is minted', T, async () => {
		await L.withRaw(legacyAsker(), {}, async (raw) => {
			// Started by a call that declared elicitation, the server asks.
			const first = (await raw.request(askElicit(1))).json.result;
			assert.equal(first.resultType, 'input_required');
			const key = Object.keys(first.inputRequests)[0];
			await raw.request(askElicit(2, { requestState: first.requestState, inputResponses: { [key]: ACCEPT } }));
			const bare = E.modern(3, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'box', server: 'v', name: 'ask_elicit' }, arguments: {} } });
			const r = (await raw.request(bare)).json;
			assert.notEqual(r.result?.resultType, 'input_required', JSON.stringify(r));
			assert.ok(r.error || r.result.isError, JSON.stringify(r));
			assert.match(JSON.stringify(r), /Method not found/);
		});
	});
});

describe('progress, cancellation and logging across the eras', () => {
	const fixture = { toolboxes: { box: { description: 'x', mcpServers: { f: L.fixtureServer() } } } };
	const use = (id, name, args, meta = E.META) => E.modern(id, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'box', server: 'f', name }, arguments: args } }, meta);
	const LOG = 'io.modelcontextprotocol/logLevel';

	// Lines up to and including the answer to id: the first may wait for
	// a server's start, which under valgrind on a busy machine takes more
	// than readJson's 5 s (past probeTimeoutMs: see bridging.test.mjs).
	async function until(raw, id) {
		const lines = [];
		for (;;) {
			const m = await raw.readJson(20000);
			lines.push(m);
			if (m.id === id && !m.method)
				return lines;
		}
	}

	test('modern client, 2025 server: progress under its token, cancellation reaches the server, log messages only as logLevel asks', T, async () => {
		await L.withRaw(fixture, {}, async (raw) => {
			raw.send(use(1, 'progress', { steps: 2, interval_ms: 20 }, { ...E.META, progressToken: 'tk' }));
			let lines = await until(raw, 1);
			const progress = lines.filter((m) => m.method === 'notifications/progress');
			assert.deepEqual(progress.map((p) => [p.params.progressToken, p.params.progress]), [['tk', 1], ['tk', 2]]);
			assert.equal(lines.at(-1).result.resultType, 'complete');
			assert.equal(JSON.parse(lines.at(-1).result.content[0].text).steps, 2);

			raw.send(use(2, 'log', { level: 'info', data: 'unasked' }));
			lines = await until(raw, 2);
			assert.equal(lines.length, 1, `no log without logLevel: ${JSON.stringify(lines)}`);
			raw.send(use(3, 'log', { level: 'info', data: 'asked' }, { ...E.META, [LOG]: 'debug' }));
			lines = await until(raw, 3);
			assert.deepEqual(lines.filter((m) => m.method === 'notifications/message').map((m) => m.params.data), ['asked']);
			raw.send(use(4, 'log', { level: 'info', data: 'below' }, { ...E.META, [LOG]: 'error' }));
			lines = await until(raw, 4);
			assert.equal(lines.length, 1, `no log below the level: ${JSON.stringify(lines)}`);

			raw.send(use(5, 'wait', { ms: 10000 }));
			await L.sleep(200);
			raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'test' } });
			raw.send(use(6, 'received', {}));
			lines = await until(raw, 6);
			assert.ok(!lines.some((m) => m.id === 5), 'no answer to the cancelled call');
			const got = JSON.parse(lines.at(-1).result.content[0].text);
			assert.ok(got.some((m) => m.method === 'notifications/cancelled'), JSON.stringify(got));
		});
	});

	test('an unretried call is cancelled on its 2025 server once its requestState expires, and its request refused', T, async () => {
		const meta = { ...E.META, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } };
		await L.withRaw({ ...fixture, requestStateTtlMs: 300 }, {}, async (raw) => {
			const first = (await raw.request(use(1, 'ask', { method: 'roots/list' }, meta))).json.result;
			assert.equal(first.resultType, 'input_required', JSON.stringify(first));
			assert.equal(Object.values(first.inputRequests)[0].method, 'roots/list');
			await L.sleep(700);
			const got = JSON.parse((await raw.request(use(2, 'received', {}))).json.result.content[0].text);
			assert.ok(got.some((m) => m.method === 'notifications/cancelled'), JSON.stringify(got));
			await raw.expectSilence(200);
		});
	});

	test('progress of a call that waits for input stops there and resumes under the retry\'s token', T, async () => {
		const meta = (token) => ({ ...E.META, progressToken: token, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } });
		await L.withRaw(fixture, {}, async (raw) => {
			raw.send(use(1, 'ask', { method: 'roots/list', progress: true }, meta('first')));
			let lines = await until(raw, 1);
			assert.deepEqual(lines.map((m) => m.method ?? m.result.resultType), ['notifications/progress', 'input_required']);
			assert.equal(lines[0].params.progressToken, 'first');
			const { requestState, inputRequests } = lines[1].result;
			const retry = use(2, 'ask', { method: 'roots/list', progress: true }, meta('again'));
			retry.params.requestState = requestState;
			retry.params.inputResponses = { [Object.keys(inputRequests)[0]]: { roots: [{ uri: 'file:///x' }] } };
			raw.send(retry);
			lines = await until(raw, 2);
			assert.deepEqual(lines.map((m) => m.method ?? m.id), ['notifications/progress', 2]);
			assert.deepEqual(lines[0].params, { progressToken: 'again', progress: 2 });
			assert.match(lines[1].result.content[0].text, /file:\/\/\/x/);
		});
	});

	test('a 2025 server\'s request that belongs to no call (roots/list at start) is refused as by a client without roots', T, async () => {
		const cfg = { toolboxes: { box: { description: 'x', mcpServers: { f: L.fixtureServer('--roots-on-init') } } } };
		const meta = { ...E.META, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } };
		await L.withRaw(cfg, {}, async (raw) => {
			raw.send(use(1, 'meta', {}, meta));
			const lines = await until(raw, 1);
			assert.equal(lines.length, 1, `nothing but the answer: ${JSON.stringify(lines)}`);
			assert.equal(lines[0].result.isError, undefined, JSON.stringify(lines[0]));
			const got = (await raw.request(use(2, 'init_roots', {}, meta))).json.result.content[0].text;
			assert.equal(JSON.parse(got).error.code, -32601, got);
		});
	});

	test('modern client, modern server: progress under the client\'s token, cancellation reaches the server, logLevel passed on', T, async () => {
		const config = { toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('reject') } } } };
		const v2 = (id, name, args, meta = E.META) => E.modern(id, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'box', server: 'v', name }, arguments: args } }, meta);
		await L.withRaw(config, {}, async (raw) => {
			raw.send(v2(1, 'slow', { ms: 50 }, { ...E.META, progressToken: 'pt' }));
			let lines = await until(raw, 1);
			assert.deepEqual(lines.filter((m) => m.method === 'notifications/progress').map((m) => [m.params.progressToken, m.params.progress]), [['pt', 1], ['pt', 2]]);
			assert.equal(lines.at(-1).result.content[0].text, 'done');
			const got = (await raw.request(v2(2, 'meta', {}, { ...E.META, [LOG]: 'warning' }))).json.result;
			assert.match(got.content[0].text, /"logLevel":"warning"|"io\.modelcontextprotocol\/logLevel":"warning"/);
			raw.send(v2(3, 'slow', { ms: 20000 }));
			await L.sleep(300);
			raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
			await L.waitFor(() => /v2-server: cancelled/.test(raw.stderr), 5000, 'the server cancelled');
			await raw.expectSilence(200);
		});
	});

	test('2025 client, modern-only server: progress comes back under the client\'s token; cancellation reaches the server', T, async () => {
		const config = { toolboxes: { box: { description: 'x', mcpServers: { v: E.v2Server('reject') } } } };
		await L.withWorkbench(config, {}, async (wb) => {
			await L.openOk(wb, 'box');
			const seen = [];
			const wire = L.tapMessages(wb.client);
			const r = await wb.useTool('box', 'v', 'slow', { ms: 50 }, { onprogress: (p) => seen.push(p.progress) });
			check(r, 'done', 'slow');
			L.assertWireProgress(wire, seen, [1, 2], 'slow');
			const ac = new AbortController();
			const call = wb.useTool('box', 'v', 'slow', { ms: 20000 }, { signal: ac.signal });
			await L.sleep(300);
			ac.abort();
			await assert.rejects(call);
			await wb.waitStderr(/v2-server: cancelled/);
		});
	});
});

describe('subscriptions/listen', () => {
	const config = {
		toolMode: 'dynamic',
		toolboxes: {
			one: { description: 'x', mcpServers: { m: L.mock() } },
			two: { description: 'y', mcpServers: { p: L.mock('--prompts', '--name', 'p') } },
			three: { description: 'z', mcpServers: { q: L.mock('--name', 'q') } },
		},
	};
	const SUB = 'io.modelcontextprotocol/subscriptionId';
	const open = (id, box) => E.modern(id, 'tools/call', { name: 'open_toolbox', arguments: { toolbox_name: box } });

	test('acknowledged with what is honoured; list changes tagged with the subscription id, none untagged; cancelled, it ends', T, async () => {
		await L.withRaw(config, {}, async (raw) => {
			raw.send(E.modern('sub1', 'subscriptions/listen', { notifications: { toolsListChanged: true, resourceSubscriptions: ['x://y'] } }));
			let j = await raw.readJson();
			assert.equal(j.method, 'notifications/subscriptions/acknowledged', JSON.stringify(j));
			assert.deepEqual(j.params.notifications, { toolsListChanged: true, resourceSubscriptions: [] });
			assert.equal(j.params._meta[SUB], 'sub1');
			raw.send(open(2, 'one'));
			j = await raw.readJson();
			assert.equal(j.id, 2, JSON.stringify(j).slice(0, 300));
			j = await raw.readJson();
			assert.equal(j.method, 'notifications/tools/list_changed');
			assert.equal(j.params._meta[SUB], 'sub1');
			// The prompts of 'two' were not asked for: only the tools change is told.
			raw.send(E.modern('sub2', 'subscriptions/listen', { notifications: { promptsListChanged: true } }));
			assert.deepEqual((await raw.readJson()).params.notifications, { promptsListChanged: true });
			raw.send(open(3, 'two'));
			const got = [await raw.readJson(), await raw.readJson(), await raw.readJson()];
			assert.deepEqual(got.map((x) => x.id ?? `${x.method} ${x.params._meta[SUB]}`).sort(),
			    [3, 'notifications/prompts/list_changed sub2', 'notifications/tools/list_changed sub1']);
			raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'sub1' } });
			raw.send(open(4, 'three'));
			assert.equal((await raw.readJson()).id, 4);
			await raw.expectSilence(300);
		});
	});

	test('resourceSubscriptions: updates of the URIs honoured, tagged; none after cancellation (and modern lists carry cache hints)', T, async () => {
		const cfg = { toolboxes: { r: { description: 'r', mcpServers: { s: L.mock('--name', 'S', '--resources', '2') } } } };
		const touch = (id, uri) => E.modern(id, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'r', server: 's', name: 'touch' }, arguments: { uri } } });
		await L.withRaw(cfg, {}, async (raw) => {
			assert.equal((await raw.request(open(1, 'r'))).json.id, 1);
			const list = (await raw.request(E.modern('l', 'resources/list'))).json.result;
			assert.deepEqual([list.resources.length > 0, list.ttlMs, list.cacheScope, list.resultType], [true, 0, 'private', 'complete']);
			// A legacy server's result keeps its own _meta, serverInfo added.
			const blob = (await raw.request(E.modern('b', 'resources/read', { uri: 'mock://blob' }))).json.result;
			assert.equal(blob.resultType, 'complete');
			assert.equal(blob._meta.x, 'é/\n');
			assert.equal(blob._meta['io.modelcontextprotocol/serverInfo'].name, 'mcp-workbench');
			raw.send(E.modern('w', 'subscriptions/listen', { notifications: { resourceSubscriptions: ['mock://r/0', 'nope://x'] } }));
			const ack = await raw.readJson();
			assert.deepEqual(ack.params.notifications, { resourceSubscriptions: ['mock://r/0'] });
			raw.send(touch(2, 'mock://r/1'));
			raw.send(touch(3, 'mock://r/0'));
			const got = [await raw.readJson(), await raw.readJson(), await raw.readJson()];
			const updates = got.filter((m) => m.method === 'notifications/resources/updated');
			assert.equal(updates.length, 1, JSON.stringify(got));
			assert.equal(updates[0].params.uri, 'mock://r/0');
			assert.equal(updates[0].params._meta[SUB], 'w');
			raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'w' } });
			assert.equal((await raw.request(touch(4, 'mock://r/0'))).json.id, 4);
			await raw.expectSilence(300);
		});
	});

	test('a 2025 session still hears of every change, untagged; shutdown answers an open subscription', T, async () => {
		const raw = L.startRaw(config);
		await raw.initialize();
		raw.send(E.modern('s', 'subscriptions/listen', { notifications: { toolsListChanged: true } }));
		assert.equal((await raw.readJson()).method, 'notifications/subscriptions/acknowledged');
		raw.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'one' } } });
		const got = [await raw.readJson(), await raw.readJson(), await raw.readJson()];
		assert.deepEqual(got.map((x) => x.id ?? `${x.method} ${x.params?._meta?.[SUB] ?? 'untagged'}`).sort(),
		    [5, 'notifications/tools/list_changed s', 'notifications/tools/list_changed untagged']);
		raw.proc.stdin.end();
		const end = await raw.readJson();
		assert.equal(end.id, 's');
		assert.equal(end.result.resultType, 'complete');
		assert.equal(end.result._meta[SUB], 's');
		await raw.close();
	});
});
