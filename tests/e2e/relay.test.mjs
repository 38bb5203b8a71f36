// Issue 5: the workbench relays the rest of MCP: progress, cancellation,
// server-to-client requests (sampling, elicitation, roots, ping), logging,
// tool list changes and call timeouts, and leaves no stale routing state.
//
// Downstream servers: server-everything (trigger-long-running-operation,
// trigger-sampling-request, trigger-elicitation-request, get-roots-list,
// toggle-simulated-logging), the C mock (timeouts, late answers, list
// changes) and tests/e2e/fixture-server.mjs (what a server receives, and
// requests sent whatever the client declared).

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
	CreateMessageRequestSchema,
	ElicitRequestSchema,
	ElicitationCompleteNotificationSchema,
	ListRootsRequestSchema,
	LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as L from './lib.mjs';

const { withWorkbench, withRaw, text, assertOk, openOk } = L;

after(L.cleanup);

const T = { timeout: 20000 };
const TE = { timeout: 30000 };
const FIXED_TOOLS = ['echo', 'add', 'sleep', 'big', 'crash', 'fail', 'rpc_error', 'structured', 'image',
	'env', 'cwd', 'init_params', 'notify_list_changed', 'stderr'];
const LRO = 'trigger-long-running-operation';

function box(servers, description = 'A toolbox') {
	return { description, mcpServers: servers };
}

function allText(result) {
	return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// server-everything registers its capability-dependent tools after
// initialize and announces them with tools/list_changed: wait until the
// workbench has them.
async function openUntil(wb, toolbox, tool, ms = 5000) {
	return L.waitFor(async () => {
		const json = await openOk(wb, toolbox);
		return L.openedTools(json).some((t) => t.name === tool) ? json : null;
	}, ms, `${tool} in open_toolbox ${toolbox}`, 100);
}

function execErrorPrefix(name, server, toolbox) {
	return `Error executing tool '${name}' in server '${server}' (toolbox '${toolbox}'): `;
}

function timeoutText(name, server, toolbox, ms, which) {
	return `${execErrorPrefix(name, server, toolbox)}timed out after ${ms} ms (${which})`;
}

// Collect an SDK client's errors (a response for an unknown id shows here).
function watchErrors(client) {
	const errors = [];
	client.onerror = (e) => errors.push(e);
	return errors;
}

// The SDK client runs notification handlers a microtask later but drops a
// request's progress handler as soon as its answer is read, so a final
// progress notification that arrives together with the answer ends up in
// onerror ("unknown token"). Put those back: [progress, total] pairs of the
// final notifications with this total, removed from errors.
function lateFinalProgress(errors, total) {
	const out = [];
	for (let i = errors.length - 1; i >= 0; i--) {
		const m = String(errors[i]?.message).match(/progress notification for an unknown token: (.*)$/s);
		if (!m)
			continue;
		const p = JSON.parse(m[1]).params;
		if (p.total === total && p.progress === total) {
			out.push([p.progress, p.total]);
			errors.splice(i, 1);
		}
	}
	return out;
}

function unknownIdErrors(errors) {
	return errors.filter((e) => /unknown message ID/i.test(String(e?.message)));
}

// Raw helpers ----------------------------------------------------------------

function callLine(id, name, args, meta) {
	const params = { name, arguments: args };
	if (meta !== undefined)
		params._meta = meta;
	return { jsonrpc: '2.0', id, method: 'tools/call', params };
}

function useToolLine(id, toolbox, server, name, args, meta) {
	return callLine(id, 'use_tool', { tool: { toolbox, server, name }, arguments: args }, meta);
}

async function rawOpen(raw, toolbox, id = 'open') {
	const r = await raw.request(callLine(id, 'open_toolbox', { toolbox_name: toolbox }), 15000);
	assert.ok(r.json.result && !r.json.result.isError, r.line);
	return r.json.result;
}

// Read lines until pred(json, line) is true; returns {json, line, others}.
async function readUntil(raw, pred, ms = 5000, what = 'a matching line') {
	const end = Date.now() + ms;
	const others = [];
	for (;;) {
		const left = end - Date.now();
		if (left <= 0)
			throw new Error(`no ${what} within ${ms} ms; other lines: ${JSON.stringify(others).slice(0, 2000)}`);
		let line;
		try {
			line = await raw.readLine(left);
		} catch (e) {
			throw new Error(`${e.message}\nwaiting for ${what}; other lines: ${JSON.stringify(others).slice(0, 2000)}`);
		}
		const json = JSON.parse(line);
		if (pred(json, line))
			return { json, line, others };
		others.push(line);
	}
}

// Every line that arrives within ms.
async function drain(raw, ms) {
	await L.sleep(ms);
	const out = [];
	for (;;) {
		try {
			out.push(await raw.readLine(1));
		} catch {
			return out;
		}
	}
}

// What the fixture server received so far.
async function fixtureReceived(wb, toolbox, server) {
	const r = await wb.useTool(toolbox, server, 'received', {});
	assertOk(r, 'received:');
	return JSON.parse(text(r));
}

const EV_CONFIG = { toolboxes: { ev: box({ everything: L.everythingServer() }) } };
const FX_CONFIG = { toolboxes: { box: box({ fx: L.fixtureServer() }) } };
const MOCK_CONFIG = { toolboxes: { dev: box({ mock: L.mock() }) } };

// ---------------------------------------------------------------------------

describe('progress', () => {
	test('use_tool (server-everything): progress reaches the client with its token', TE, async () => {
		await withWorkbench(EV_CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openUntil(wb, 'ev', LRO);
			const seen = [];
			const r = await wb.useTool('ev', 'everything', LRO, { duration: 0.6, steps: 3 },
			    { onprogress: (p) => seen.push([p.progress, p.total]) });
			assertOk(r);
			assert.equal(text(r), 'Long running operation completed. Duration: 0.6 seconds, Steps: 3.');
			await L.sleep(50);
			assert.deepEqual([...seen, ...lateFinalProgress(errors, 3)], [[1, 3], [2, 3], [3, 3]]);
			assert.deepEqual(errors.map(String), [], 'no stray messages');
		});
	});

	test('native dynamic-mode calls: concurrent calls keep their own tokens', TE, async () => {
		await withWorkbench({ toolMode: 'dynamic', ...EV_CONFIG }, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openUntil(wb, 'ev', LRO);
			const a = [];
			const b = [];
			const name = `ev__everything__${LRO}`;
			const [ra, rb] = await Promise.all([
				wb.callTool(name, { duration: 0.8, steps: 4 }, { onprogress: (p) => a.push([p.progress, p.total]) }),
				wb.callTool(name, { duration: 0.6, steps: 2 }, { onprogress: (p) => b.push([p.progress, p.total]) }),
			]);
			assertOk(ra);
			assertOk(rb);
			await L.sleep(50);
			assert.deepEqual([...a, ...lateFinalProgress(errors, 4)], [[1, 4], [2, 4], [3, 4], [4, 4]]);
			assert.deepEqual([...b, ...lateFinalProgress(errors, 2)], [[1, 2], [2, 2]]);
			assert.deepEqual(errors.map(String), []);
		});
	});

	test('raw: string and integer tokens byte-exact, message intact, the rest of _meta forwarded', T, async () => {
		await withRaw(FX_CONFIG, {}, async (raw) => {
			await raw.initialize();
			await rawOpen(raw, 'box');
			const TOK = '"tok-\\u00e9\\"x"';	// raw JSON text of the string token
			raw.sendLine(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"box","server":"fx","name":"progress"},"arguments":{"steps":3,"interval_ms":60,"total":3,"message":"step"}},"_meta":{"progressToken":${TOK}}}}`);
			raw.sendLine('{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"box","server":"fx","name":"progress"},"arguments":{"steps":2,"interval_ms":70}},"_meta":{"progressToken":0}}}');
			const progress = [];
			const answers = {};
			const end = Date.now() + 5000;
			while (Object.keys(answers).length < 2) {
				const line = await raw.readLine(Math.max(1, end - Date.now()));
				const m = JSON.parse(line);
				if (m.method === 'notifications/progress')
					progress.push({ line, m });
				else if (m.id === 'a' || m.id === 'b')
					answers[m.id] = m;
				else
					assert.fail(`unexpected line ${line}`);
			}
			const strTok = progress.filter((p) => p.m.params.progressToken === 'tok-é"x');
			const intTok = progress.filter((p) => p.m.params.progressToken === 0);
			assert.equal(progress.length, 5, JSON.stringify(progress.map((p) => p.line)));
			assert.equal(strTok.length, 3);
			assert.equal(intTok.length, 2);
			for (const p of strTok)
				assert.match(p.line, new RegExp(`"progressToken"\\s*:\\s*${L.escapeRe(TOK)}`), 'token byte-exact');
			for (const p of intTok)
				assert.match(p.line, /"progressToken"\s*:\s*0\s*[,}]/);
			assert.deepEqual(strTok.map((p) => [p.m.params.progress, p.m.params.total, p.m.params.message]),
			    [[1, 3, 'step 1'], [2, 3, 'step 2'], [3, 3, 'step 3']]);
			assert.deepEqual(intTok.map((p) => p.m.params.progress), [1, 2]);
			assert.ok(!answers.a.result.isError && !answers.b.result.isError, JSON.stringify(answers));

			// The whole _meta goes to the server (the token rewritten).
			const r = await raw.request(callLine('m', 'use_tool', { tool: { toolbox: 'box', server: 'fx', name: 'meta' } },
			    { progressToken: 'p-meta', 'example.com/trace': { id: 7, tags: ['x'] }, plain: 'v' }));
			const meta = JSON.parse(r.json.result.content[0].text);
			assert.deepEqual(meta['example.com/trace'], { id: 7, tags: ['x'] }, JSON.stringify(meta));
			assert.equal(meta.plain, 'v');
			assert.ok(meta.progressToken !== undefined, 'a progress token is forwarded');
			await drain(raw, 100);
		});
	});
});

// ---------------------------------------------------------------------------

describe('cancellation', () => {
	test('AbortSignal: the server gets notifications/cancelled with its own id; nothing answered', T, async () => {
		await withWorkbench(FX_CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openOk(wb, 'box');
			const ac = new AbortController();
			const p = wb.useTool('box', 'fx', 'wait', { ms: 1500 }, { signal: ac.signal });
			await L.waitFor(async () => (await fixtureReceived(wb, 'box', 'fx')).some((m) =>
			    m.method === 'tools/call' && m.params?.name === 'wait'), 3000, 'the call at the server');
			ac.abort('test gave up');
			await L.rejection(p, 'the aborted call');
			let rec = null;
			await L.waitFor(async () => {
				rec = await fixtureReceived(wb, 'box', 'fx');
				return rec.some((m) => m.method === 'notifications/cancelled');
			}, 3000, 'notifications/cancelled at the server');
			const call = rec.find((m) => m.method === 'tools/call' && m.params?.name === 'wait');
			const cancels = rec.filter((m) => m.method === 'notifications/cancelled');
			assert.equal(cancels.length, 1, JSON.stringify(cancels));
			assert.deepEqual(cancels[0].params.requestId, call.id, 'the server\'s own request id');
			// The wait would have ended at 1.5 s: nothing arrives for the cancelled id.
			await L.sleep(1500);
			assert.deepEqual(unknownIdErrors(errors).map(String), [], 'no answer for the cancelled request');
			await wb.client.ping();
			assertOk(await wb.useTool('box', 'fx', 'meta', {}));
		});
	});

	test('server-everything: cancelling a long operation stops its progress; later calls work', TE, async () => {
		await withWorkbench(EV_CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openUntil(wb, 'ev', LRO);
			const ac = new AbortController();
			let seen = 0;
			const p = wb.useTool('ev', 'everything', LRO, { duration: 2, steps: 10 }, {
				signal: ac.signal,
				onprogress: () => {
					seen++;
					if (seen === 1)
						ac.abort('enough');
				},
			});
			const e = await L.rejection(p, 'the aborted call');
			assert.ok(e, 'rejected');
			assert.equal(seen, 1);
			// The server goes on with its loop (it ignores the abort) and
			// sends progress; the workbench must drop it: the SDK client
			// reports forwarded ones as progress for an unknown token.
			await L.sleep(2300);
			assert.equal(seen, 1, 'no progress callback after the cancel');
			// One may have been on its way before the cancel came (one 200 ms
			// step on a slow machine); the eight after it must not follow.
			assert.ok(errors.filter((e) => /unknown token/.test(String(e?.message))).length <= 1,
			    `progress forwarded for the cancelled call: ${errors.map(String)}`);
			assert.deepEqual(unknownIdErrors(errors).map(String), [], 'no answer for the cancelled request');
			const r = await wb.useTool('ev', 'everything', 'echo', { message: 'after cancel' });
			assert.equal(text(r), 'Echo: after cancel');
			const seen2 = [];
			const r2 = await wb.useTool('ev', 'everything', LRO, { duration: 0.2, steps: 2 },
			    { onprogress: (x) => seen2.push([x.progress, x.total]) });
			assertOk(r2);
			await L.sleep(50);
			assert.deepEqual([...seen2, ...lateFinalProgress(errors, 2)], [[1, 2], [2, 2]]);
		});
	});

	test('raw: a late answer after cancel is dropped (id 77); ping works', T, async () => {
		await withRaw(MOCK_CONFIG, {}, async (raw) => {
			await raw.initialize();
			await rawOpen(raw, 'dev');
			raw.send(useToolLine(77, 'dev', 'mock', 'sleep', { ms: 500 }));
			await L.sleep(100);
			raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'no longer needed' } });
			const lines = await drain(raw, 1000);
			assert.deepEqual(lines.filter((l) => /"id"\s*:\s*77\s*[,}]/.test(l)), [], 'nothing for id 77');
			assert.deepEqual(lines, [], 'nothing at all');
			const r = await raw.request({ jsonrpc: '2.0', id: 78, method: 'ping' });
			assert.equal(r.json.id, 78);
			assert.deepEqual(r.json.result, {});
			const e = await raw.request(useToolLine(79, 'dev', 'mock', 'echo', { message: 'still here' }));
			assert.equal(e.json.result?.content?.[0]?.text, 'still here', e.line);
		});
	});

	test('raw: a cancelled open_toolbox is not answered; the workbench stays healthy', T, async () => {
		const config = { toolboxes: { slow: box({ late: L.mock('--init-delay', '700') }), fast: box({ mock: L.mock() }) } };
		await withRaw(config, {}, async (raw) => {
			await raw.initialize();
			raw.send(callLine(9, 'open_toolbox', { toolbox_name: 'slow' }));
			await L.sleep(100);
			raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } });
			const lines = await drain(raw, 1200);
			assert.deepEqual(lines, [], 'no answer to the cancelled open');
			const r = await raw.request({ jsonrpc: '2.0', id: 10, method: 'ping' });
			assert.deepEqual(r.json.result, {});
			await rawOpen(raw, 'fast', 11);
			const o = await raw.request(callLine(12, 'open_toolbox', { toolbox_name: 'slow' }), 5000);
			assert.equal(o.json.id, 12);
			assert.ok(o.json.result && !o.json.result.isError, o.line);
		});
	});

	test('raw: a server cancelling its own request to the client is cancelled upstream with the client-side id', T, async () => {
		await withRaw(FX_CONFIG, {}, async (raw) => {
			await raw.initialize('2025-11-25', { sampling: {} });
			await rawOpen(raw, 'box');
			const params = { messages: [{ role: 'user', content: { type: 'text', text: 'q' } }], maxTokens: 5 };
			raw.send(useToolLine('ac', 'box', 'fx', 'ask_cancel', { method: 'sampling/createMessage', params, after_ms: 150 }));
			const req = await readUntil(raw, (m) => m.method === 'sampling/createMessage', 3000, 'the sampling request');
			assert.deepEqual(req.json.params, params, 'params intact');
			assert.notEqual(req.json.id, 'fx-1', 'a fresh id upstream');
			const canc = await readUntil(raw, (m) => m.method === 'notifications/cancelled', 3000, 'the cancellation');
			assert.deepEqual(canc.json.params.requestId, req.json.id, 'cancelled with the client-side id');
			const ans = await readUntil(raw, (m) => m.id === 'ac', 3000, 'the tool answer');
			assert.ok(ans.json.result && !ans.json.result.isError, ans.line);
			// Answering the cancelled request late is harmless.
			raw.send({ jsonrpc: '2.0', id: req.json.id, result: { model: 'm', role: 'assistant', content: { type: 'text', text: 'late' } } });
			const r = await raw.request({ jsonrpc: '2.0', id: 'p', method: 'ping' });
			assert.deepEqual(r.json.result, {});
			assert.equal(r.json.id, 'p');
		});
	});
});

// ---------------------------------------------------------------------------

describe('server-to-client requests', () => {
	test('sampling: the client\'s handler answers and the tool sees its text', TE, async () => {
		await withWorkbench(EV_CONFIG, { capabilities: { sampling: {} } }, async (wb) => {
			const asked = [];
			wb.client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
				asked.push(req.params);
				return { model: 'e2e-model', role: 'assistant', content: { type: 'text', text: 'SAMPLED-7f3a from the client' } };
			});
			await openUntil(wb, 'ev', 'trigger-sampling-request');
			const r = await wb.useTool('ev', 'everything', 'trigger-sampling-request', { prompt: 'Say hi', maxTokens: 20 });
			assertOk(r);
			assert.match(allText(r), /SAMPLED-7f3a from the client/);
			assert.match(allText(r), /e2e-model/);
			assert.equal(asked.length, 1);
			assert.equal(asked[0].maxTokens, 20);
			assert.match(JSON.stringify(asked[0].messages), /Say hi/);
		});
	});

	test('elicitation: accept and decline come back to the server', TE, async () => {
		await withWorkbench(EV_CONFIG, { capabilities: { elicitation: {} } }, async (wb) => {
			const answers = [
				{ action: 'accept', content: { name: 'Ada Lovelace', check: true } },
				{ action: 'decline' },
			];
			const asked = [];
			wb.client.setRequestHandler(ElicitRequestSchema, async (req) => {
				asked.push(req.params);
				return answers[asked.length - 1];
			});
			await openUntil(wb, 'ev', 'trigger-elicitation-request');
			let r = await wb.useTool('ev', 'everything', 'trigger-elicitation-request', {});
			assertOk(r);
			assert.match(allText(r), /- Name: Ada Lovelace/);
			assert.match(allText(r), /- Agreed to terms: true/);
			assert.equal(asked[0].requestedSchema?.type, 'object');
			r = await wb.useTool('ev', 'everything', 'trigger-elicitation-request', {});
			assertOk(r);
			assert.match(allText(r), /User declined/);
			assert.equal(asked.length, 2);
		});
	});

	test('URL elicitation: -32042 reaches the client whole (use_tool and native); the retry asks with mode url', TE, async () => {
		const url = 'https://example.com/e2e-login';
		const caps = { capabilities: { elicitation: { form: {}, url: {} } } };
		await withWorkbench({ toolMode: 'dynamic', ...EV_CONFIG }, caps, async (wb) => {
			const asked = [];
			wb.client.setRequestHandler(ElicitRequestSchema, async (req) => {
				asked.push(req.params);
				return { action: 'accept' };
			});
			await openUntil(wb, 'ev', 'trigger-url-elicitation');
			const calls = [
				(a) => wb.useTool('ev', 'everything', 'trigger-url-elicitation', a),
				(a) => wb.callTool('ev__everything__trigger-url-elicitation', a),
			];
			for (const [i, call] of calls.entries()) {
				const args = { url, errorPath: true, elicitationId: `e2e-${i}` };
				const e = await L.rejection(call(args), 'the error path');
				assert.equal(e.code, -32042, String(e));
				const wanted = e.data?.elicitations;
				assert.equal(wanted?.length, 1, JSON.stringify(e.data));
				assert.equal(wanted[0].mode, 'url');
				assert.equal(wanted[0].url, 'https://modelcontextprotocol.io');
				assert.ok(wanted[0].elicitationId, JSON.stringify(wanted[0]));
				const r = await call(args);
				assertOk(r);
				assert.match(allText(r), /User completed the URL elicitation flow/);
				assert.deepEqual(asked.at(-1), { mode: 'url', url, message: asked.at(-1).message, elicitationId: `e2e-${i}` });
			}
			assert.equal(asked.length, 2);
		});
	});

	test('fixture: notifications/elicitation/complete is relayed; a notification that is not JSON-RPC 2.0 is not', T, async () => {
		await withWorkbench(FX_CONFIG, { capabilities: { elicitation: { url: {} } } }, async (wb) => {
			const done = L.collectNotifications(wb.client, ElicitationCompleteNotificationSchema);
			const logs = L.collectNotifications(wb.client, LoggingMessageNotificationSchema);
			const errors = watchErrors(wb.client);
			await openOk(wb, 'box');
			const note = (method, params, extra = '', tail = '') =>
				`{"jsonrpc":"2.0"${extra},"method":"${method}","params":${JSON.stringify(params)}${tail}}`;
			const malformed = [
				note('notifications/message', { level: 'error', data: 'id null' }, ',"id":null'),
				'{"method":"notifications/message","params":{"level":"error","data":"no jsonrpc"}}',
				'{"jsonrpc":"1.0","method":"notifications/message","params":{"level":"error","data":"jsonrpc 1.0"}}',
				'{"jsonrpc":"1.0","jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"jsonrpc twice"}}',
				note('notifications/message', { level: 'error', data: 'two methods' }, '', ',"method":"x"'),
				note('notifications/message', { level: 'error', data: 'params twice' }, '', ',"params":{"level":"error","data":"the last"}'),
				note('notifications/elicitation/complete', { elicitationId: 'two ids' }, ',"id":null,"id":null'),
			];
			const lines = [
				...malformed,
				note('notifications/elicitation/complete', { elicitationId: 'e2e-done-1' }),
				note('notifications/message', { level: 'error', data: 'well formed' }),
			];
			const r = await wb.useTool('box', 'fx', 'send', { lines });
			assert.equal(text(r), `sent ${lines.length}`);
			await done.waitCount(1, 3000);
			await logs.waitCount(1, 3000);
			await L.sleep(200);
			assert.deepEqual(done.list.map((n) => n.params), [{ elicitationId: 'e2e-done-1' }]);
			assert.deepEqual(logs.list.map((n) => n.params.data), ['well formed']);
			assert.deepEqual(errors.map(String), [], 'no message the client could not take');
			// Five warnings are shown, the other two counted: the count
			// comes once the interval ends, or when the server stops.
			const dropped = wb.stderr.split('\n').filter((l) => l.includes('box/fx: dropping a notification that is not JSON-RPC 2.0'));
			assert.equal(dropped.length, 5, wb.stderr);
			assert.equal((await wb.useTool('box', 'fx', 'crash', {})).isError, true);
			await wb.waitStderr(/box\/fx: 2 more warnings like the above in the last \d+ s, not shown\n[^\n]*box\/fx: exited with status 5/);
		});
	});

	test('roots: the client\'s roots reach the server; roots/list_changed is relayed', TE, async () => {
		await withWorkbench(EV_CONFIG, { capabilities: { roots: { listChanged: true } } }, async (wb) => {
			let roots = [{ uri: 'file:///tmp/wb-e2e-root-a', name: 'Root Alpha' }];
			let asked = 0;
			wb.client.setRequestHandler(ListRootsRequestSchema, async () => {
				asked++;
				return { roots };
			});
			await openUntil(wb, 'ev', 'get-roots-list');
			let r = await wb.useTool('ev', 'everything', 'get-roots-list', {});
			assertOk(r);
			assert.match(text(r), /Root Alpha/);
			assert.match(text(r), /file:\/\/\/tmp\/wb-e2e-root-a/);
			assert.ok(asked >= 1);

			const before = asked;
			roots = [{ uri: 'file:///tmp/wb-e2e-root-b', name: 'Root Beta' }, { uri: 'file:///tmp/wb-e2e-root-c', name: 'Root Gamma' }];
			await wb.client.sendRootsListChanged();
			await L.waitFor(() => asked > before, 3000, 'the server to ask for roots again');
			// The answer reaches the server a moment after it asked.
			await L.waitFor(async () => /\(2 total\)/.test(text(r = await wb.useTool('ev', 'everything', 'get-roots-list', {}))),
			    3000, 'the server to have the new roots', 50).catch(() => {});
			assert.match(text(r), /Current MCP Roots \(2 total\)/, text(r));
			assert.match(text(r), /Root Beta/);
			assert.match(text(r), /Root Gamma/);
		});
	});

	test('server-everything without client capabilities offers none of these tools', TE, async () => {
		await withWorkbench(EV_CONFIG, { capabilities: {} }, async (wb) => {
			await openUntil(wb, 'ev', 'echo');
			await L.sleep(400);
			const json = await openOk(wb, 'ev');
			const names = L.openedTools(json).map((t) => t.name);
			for (const n of ['trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']) {
				assert.ok(!names.includes(n), `${n} offered without the capability`);
				const r = await wb.useTool('ev', 'everything', n, {});
				assert.equal(r.isError, true);
				assert.equal(text(r), `Error executing tool: Tool '${n}' not found in server 'everything'`);
			}
		});
	});

	test('raw, no capabilities: the server gets -32601 at once with its own id; ping is answered locally', T, async () => {
		await withRaw(FX_CONFIG, {}, async (raw) => {
			await raw.initialize('2025-11-25', {});
			await rawOpen(raw, 'box');
			const cases = [
				['sampling/createMessage', { messages: [], maxTokens: 1 }, '"s\\u00e9-1"'],
				['elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties: {} } }, '0'],
				['roots/list', undefined, '12345678901234567890'],
			];
			let i = 0;
			for (const [method, params, idRaw] of cases) {
				const t0 = Date.now();
				const r = await raw.request(useToolLine(`c${i++}`, 'box', 'fx', 'ask', { method, params, id_raw: idRaw }), 3000);
				assert.ok(Date.now() - t0 < 1000, `${method}: answered at once`);
				assert.ok(r.json.result && !r.json.result.isError, r.line);
				const childLine = r.json.result.content[0].text;
				const child = JSON.parse(childLine);
				assert.equal(child.error?.code, -32601, `${method}: ${childLine}`);
				assert.match(childLine, new RegExp(`"id"\\s*:\\s*${L.escapeRe(idRaw)}\\s*[,}]`), `${method}: id byte-exact: ${childLine}`);
			}
			// ping from the server: {} from the workbench, the client never sees it.
			const r = await raw.request(useToolLine('pg', 'box', 'fx', 'ask', { method: 'ping', id_raw: '"ping-1"' }), 3000);
			assert.ok(r.json.result && !r.json.result.isError, r.line);
			const child = JSON.parse(r.json.result.content[0].text);
			assert.equal(child.id, 'ping-1');
			assert.deepEqual(child.result, {});
			assert.deepEqual(await drain(raw, 200), [], 'no request reached the client');
		});
	});

	test('raw, capabilities declared: fresh id upstream; result and error return with the server\'s id', T, async () => {
		await withRaw(FX_CONFIG, {}, async (raw) => {
			await raw.initialize('2025-11-25', { sampling: {}, elicitation: {}, roots: { listChanged: true } });
			await rawOpen(raw, 'box');
			// Result.
			const sparams = { messages: [{ role: 'user', content: { type: 'text', text: 'hé' } }], maxTokens: 7 };
			raw.send(useToolLine('s', 'box', 'fx', 'ask', { method: 'sampling/createMessage', params: sparams, id_raw: '"s\\u00e9-1"' }));
			let q = await readUntil(raw, (m) => m.method === 'sampling/createMessage', 3000, 'sampling request');
			assert.deepEqual(q.json.params, sparams);
			assert.notEqual(q.json.id, 'sé-1', 'a fresh id upstream');
			const sres = { model: 'raw-model', role: 'assistant', content: { type: 'text', text: 'raw sampled' } };
			raw.send({ jsonrpc: '2.0', id: q.json.id, result: sres });
			let a = await readUntil(raw, (m) => m.id === 's', 3000, 'tool answer');
			let childLine = a.json.result.content[0].text;
			assert.match(childLine, /"id"\s*:\s*"s\\u00e9-1"\s*[,}]/, `id byte-exact: ${childLine}`);
			assert.deepEqual(JSON.parse(childLine).result, sres);

			// Error.
			raw.send(useToolLine('e', 'box', 'fx', 'ask', { method: 'elicitation/create', params: { message: 'name?', requestedSchema: { type: 'object', properties: {} } }, id_raw: '0' }));
			q = await readUntil(raw, (m) => m.method === 'elicitation/create', 3000, 'elicitation request');
			raw.send({ jsonrpc: '2.0', id: q.json.id, error: { code: -32042, message: 'user closed the dialog' } });
			a = await readUntil(raw, (m) => m.id === 'e', 3000, 'tool answer');
			childLine = a.json.result.content[0].text;
			assert.match(childLine, /"id"\s*:\s*0\s*[,}]/, childLine);
			assert.deepEqual(JSON.parse(childLine).error, { code: -32042, message: 'user closed the dialog' });

			// roots/list with an integer id.
			raw.send(useToolLine('r', 'box', 'fx', 'ask', { method: 'roots/list', id_raw: '12345678901234567890' }));
			q = await readUntil(raw, (m) => m.method === 'roots/list', 3000, 'roots request');
			raw.send({ jsonrpc: '2.0', id: q.json.id, result: { roots: [{ uri: 'file:///r', name: 'R' }] } });
			a = await readUntil(raw, (m) => m.id === 'r', 3000, 'tool answer');
			childLine = a.json.result.content[0].text;
			assert.match(childLine, /"id"\s*:\s*12345678901234567890\s*[,}]/, childLine);
			assert.deepEqual(JSON.parse(childLine).result, { roots: [{ uri: 'file:///r', name: 'R' }] });
		});
	});

	test('roots/list_changed from the client reaches every running server', T, async () => {
		const config = { toolboxes: { one: box({ a: L.fixtureServer(), b: L.fixtureServer() }), two: box({ c: L.fixtureServer() }) } };
		await withWorkbench(config, { capabilities: { roots: { listChanged: true } } }, async (wb) => {
			wb.client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }));
			await openOk(wb, 'one');
			await openOk(wb, 'two');
			// Running, not only listed (two/c's list may come from the
			// catalogue, written by one/a, while it still starts).
			for (const [t, s] of [['one', 'a'], ['one', 'b'], ['two', 'c']])
				await fixtureReceived(wb, t, s);
			await wb.client.sendRootsListChanged();
			for (const [t, s] of [['one', 'a'], ['one', 'b'], ['two', 'c']]) {
				await L.waitFor(async () => (await fixtureReceived(wb, t, s))
				    .some((m) => m.method === 'notifications/roots/list_changed'), 3000, `${t}/${s} to get roots/list_changed`);
			}
		});
	});
});

// ---------------------------------------------------------------------------

describe('logging', () => {
	test('server-everything: setLevel, simulated logging reaches the client with logger toolbox/server', TE, async () => {
		await withWorkbench(EV_CONFIG, {}, async (wb) => {
			assert.ok(wb.client.getServerCapabilities()?.logging, 'the workbench declares logging');
			const msgs = L.collectNotifications(wb.client, LoggingMessageNotificationSchema);
			await wb.client.setLoggingLevel('debug');
			await openOk(wb, 'ev');
			let r = await wb.useTool('ev', 'everything', 'toggle-simulated-logging', {});
			assertOk(r);
			assert.match(text(r), /Started simulated/);
			await msgs.waitCount(1, 3000);
			const m = msgs.list[0].params;
			assert.equal(m.logger, 'ev/everything', JSON.stringify(m));
			assert.ok(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'].includes(m.level));
			assert.match(String(m.data), /message/);
			r = await wb.useTool('ev', 'everything', 'toggle-simulated-logging', {});
			assert.match(text(r), /Stopped simulated/);
		});
	});

	test('fixture: setLevel goes to servers that declared logging, also those started later; logger kept or set', T, async () => {
		const config = {
			toolboxes: {
				box: box({ fx: L.fixtureServer(), nolog: L.fixtureServer('--no-logging') }),
			},
		};
		await withWorkbench(config, {}, async (wb) => {
			const msgs = L.collectNotifications(wb.client, LoggingMessageNotificationSchema);
			assert.deepEqual(await wb.client.setLoggingLevel('warning'), {});
			await openOk(wb, 'box');
			const levels = (rec) => rec.filter((m) => m.method === 'logging/setLevel').map((m) => m.params?.level);
			let fx = await fixtureReceived(wb, 'box', 'fx');
			assert.equal(fx[0].method, 'initialize');
			assert.deepEqual(levels(fx), ['warning'], `setLevel sent after initialize: ${JSON.stringify(fx)}`);
			const iInit = fx.findIndex((m) => m.method === 'notifications/initialized');
			const iLevel = fx.findIndex((m) => m.method === 'logging/setLevel');
			assert.ok(iInit >= 0 && iInit < iLevel, 'initialized comes before setLevel');
			assert.deepEqual(levels(await fixtureReceived(wb, 'box', 'nolog')), [], 'not to a server without logging');

			await wb.client.setLoggingLevel('error');
			await L.waitFor(async () => levels(await fixtureReceived(wb, 'box', 'fx')).length === 2, 3000, 'the second setLevel');
			fx = await fixtureReceived(wb, 'box', 'fx');
			assert.deepEqual(levels(fx), ['warning', 'error']);
			assert.deepEqual(levels(await fixtureReceived(wb, 'box', 'nolog')), []);

			assertOk(await wb.useTool('box', 'fx', 'log', { level: 'error', data: { k: 'no logger' } }));
			assertOk(await wb.useTool('box', 'fx', 'log', { level: 'critical', data: 'own logger', logger: 'custom-logger' }));
			assertOk(await wb.useTool('box', 'nolog', 'log', { level: 'alert', data: 'other server' }));
			await msgs.waitCount(3, 3000);
			assert.deepEqual(msgs.list.map((n) => n.params), [
				{ level: 'error', data: { k: 'no logger' }, logger: 'box/fx' },
				{ level: 'critical', data: 'own logger', logger: 'custom-logger' },
				{ level: 'alert', data: 'other server', logger: 'box/nolog' },
			]);
		});
	});

	test('fixture: a restarted server gets setLevel only once its initialize is answered', T, async () => {
		await withWorkbench(FX_CONFIG, {}, async (wb) => {
			assert.deepEqual(await wb.client.setLoggingLevel('warning'), {});
			await openOk(wb, 'box');
			const crashed = await wb.useTool('box', 'fx', 'crash', {});
			assert.equal(crashed.isError, true, JSON.stringify(crashed));
			// This call starts it again; the level changes while it starts.
			const later = fixtureReceived(wb, 'box', 'fx');
			assert.deepEqual(await wb.client.setLoggingLevel('error'), {});
			const rec = await later;
			const methods = rec.map((m) => m.method);
			assert.equal(methods[0], 'initialize', JSON.stringify(methods));
			const iInit = methods.indexOf('notifications/initialized');
			const iLevel = methods.indexOf('logging/setLevel');
			assert.ok(iInit > 0 && iLevel > iInit, `setLevel only after initialized: ${JSON.stringify(methods)}`);
			assert.equal(rec[iLevel].params?.level, 'error');
		});
	});
});

// ---------------------------------------------------------------------------

describe('tool list changes', () => {
	test('mock: after notify_list_changed open_toolbox shows added_1 (all pages) and use_tool calls it', T, async () => {
		const config = { toolboxes: { dev: box({ mock: L.mock('--tools', '5', '--page-size', '3') }) } };
		await withWorkbench(config, {}, async (wb) => {
			const gen = Array.from({ length: 5 }, (_, i) => `tool_${i}`);
			let json = await openOk(wb, 'dev');
			assert.deepEqual(L.openedTools(json).map((t) => t.name), [...FIXED_TOOLS, ...gen]);
			let r = await wb.useTool('dev', 'mock', 'added_1', {});
			assert.equal(text(r), "Error executing tool: Tool 'added_1' not found in server 'mock'");

			assert.equal(text(await wb.useTool('dev', 'mock', 'notify_list_changed', {})), 'ok');
			json = await L.waitFor(async () => {
				const j = await openOk(wb, 'dev');
				return L.openedTools(j).some((t) => t.name === 'added_1') ? j : null;
			}, 3000, 'added_1 in open_toolbox');
			assert.deepEqual(L.openedTools(json).map((t) => t.name), [...FIXED_TOOLS, ...gen, 'added_1']);
			r = await wb.useTool('dev', 'mock', 'added_1', { hello: 'new tool' });
			assertOk(r);
			assert.deepEqual(JSON.parse(text(r)), { hello: 'new tool' });

			assert.equal(text(await wb.useTool('dev', 'mock', 'notify_list_changed', {})), 'ok');
			await L.waitFor(async () => !(await wb.useTool('dev', 'mock', 'added_2', {})).isError, 3000, 'added_2 callable');
			json = await openOk(wb, 'dev');
			assert.deepEqual(L.openedTools(json).map((t) => t.name), [...FIXED_TOOLS, ...gen, 'added_1', 'added_2']);
		});
	});
});


describe('tool list changes, failing', () => {
	test('fixture: an error answer to the tools/list after list_changed keeps the server and its previous tools', T, async () => {
		await withWorkbench(FX_CONFIG, {}, async (wb) => {
			const before = L.openedTools(await openOk(wb, 'box')).map((t) => t.name);
			assert.equal(text(await wb.useTool('box', 'fx', 'relist_fails', {})), 'ok');
			await L.waitFor(() => /box\/fx: tools\/list after tools\/list_changed failed \(fixture list failure\); keeping its previous tools/.test(wb.stderr),
			    3000, 'the failure reported');
			assert.deepEqual(L.openedTools(await openOk(wb, 'box')).map((t) => t.name), before);
			const r = await wb.useTool('box', 'fx', 'meta', {});
			assertOk(r);
			assert.equal(wb.stderr.match(/fixture-server: started/g).length, 1, 'not restarted');
		});
	});
});

// ---------------------------------------------------------------------------

describe('timeouts', () => {
	test('callTimeoutMs: the exact text within ~1 s; the workbench still answers', T, async () => {
		const config = { callTimeoutMs: 300, toolboxes: { dev: box({ mock: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			const t0 = Date.now();
			const r = await wb.useTool('dev', 'mock', 'sleep', { ms: 2000 });
			const took = Date.now() - t0;
			// Well before the sleep's end (the text says the timeout ended it).
			assert.ok(took >= 250 && took < 1900, `answered after ${took} ms`);
			assert.equal(r.isError, true);
			assert.deepEqual(r.content, [{ type: 'text', text: timeoutText('sleep', 'mock', 'dev', 300, 'callTimeoutMs') }]);
			await wb.client.ping();
			assert.equal(text(await wb.useTool('dev', 'mock', 'echo', { message: 'alive' })), 'alive');
			// Calls shorter than the limit are untouched.
			assert.equal(text(await wb.useTool('dev', 'mock', 'sleep', { ms: 20 })), 'slept 20');
			// The late answer of the timed-out call (at 2 s) does not disturb anything.
			await L.sleep(1900 - (Date.now() - t0));
			assert.equal(text(await wb.useTool('dev', 'mock', 'echo', { message: 'after late' })), 'after late');
		});
	});

	test('per-server callTimeoutMs wins; native calls time out the same way', T, async () => {
		const config = {
			toolMode: 'dynamic',
			callTimeoutMs: 10000,
			toolboxes: { dev: box({ quick: { ...L.mock(), callTimeoutMs: 250 }, patient: L.mock() }) },
		};
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			let t0 = Date.now();
			let r = await wb.useTool('dev', 'quick', 'sleep', { ms: 3000 });
			assert.ok(Date.now() - t0 < 2500);
			assert.equal(text(r), timeoutText('sleep', 'quick', 'dev', 250, 'callTimeoutMs'));
			t0 = Date.now();
			r = await wb.callTool('dev__quick__sleep', { ms: 3000 });
			assert.ok(Date.now() - t0 < 2500);
			assert.equal(r.isError, true);
			assert.equal(text(r), timeoutText('sleep', 'quick', 'dev', 250, 'callTimeoutMs'));
			assert.equal(text(await wb.useTool('dev', 'patient', 'sleep', { ms: 600 })), 'slept 600');
		});
	});

	test('a timeout sends the server notifications/cancelled with its id', T, async () => {
		const config = { toolboxes: { box: box({ fx: { ...L.fixtureServer(), callTimeoutMs: 300 } }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'box');
			const r = await wb.useTool('box', 'fx', 'wait', { ms: 3000 });
			assert.equal(text(r), timeoutText('wait', 'fx', 'box', 300, 'callTimeoutMs'));
			let rec;
			await L.waitFor(async () => {
				rec = await fixtureReceived(wb, 'box', 'fx');
				return rec.some((m) => m.method === 'notifications/cancelled');
			}, 2000, 'notifications/cancelled at the server');
			const call = rec.find((m) => m.method === 'tools/call' && m.params?.name === 'wait');
			const canc = rec.find((m) => m.method === 'notifications/cancelled');
			assert.deepEqual(canc.params.requestId, call.id);
		});
	});

	test('progress restarts callTimeoutMs; callMaxTimeoutMs is a hard maximum', T, async () => {
		// Each limit is well apart from the others and from the call's
		// 2.4 s, so that a loaded machine's late timers change no verdict.
		const config = {
			callTimeoutMs: 800,
			callMaxTimeoutMs: 1600,
			toolboxes: { box: box({ free: { ...L.fixtureServer(), callMaxTimeoutMs: 20000 }, hard: L.fixtureServer() }) },
		};
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'box');
			// 2.4 s, progress every 200 ms
			const slowArgs = { steps: 12, interval_ms: 200, final_delay_ms: 50 };
			// With a progress token: every progress restarts the 800 ms timer.
			let seen = 0;
			let t0 = Date.now();
			const reported = [];
			const wire = L.tapMessages(wb.client);
			let r = await wb.useTool('box', 'free', 'progress', slowArgs, { onprogress: (p) => reported.push(p.progress) });
			assertOk(r, 'progress kept the call alive:');
			L.assertWireProgress(wire, reported, Array.from({ length: 12 }, (_, i) => i + 1));
			assert.ok(Date.now() - t0 >= 2300);
			// Without a token the server sends no progress: 800 ms.
			t0 = Date.now();
			r = await wb.useTool('box', 'free', 'progress', slowArgs);
			assert.ok(Date.now() - t0 < 2300, `${Date.now() - t0} ms`);
			assert.equal(text(r), timeoutText('progress', 'free', 'box', 800, 'callTimeoutMs'));
			// The hard maximum (top level) is not extended by progress.
			t0 = Date.now();
			seen = 0;
			r = await wb.useTool('box', 'hard', 'progress', slowArgs, { onprogress: () => seen++ });
			const took = Date.now() - t0;
			assert.ok(took >= 1500, `answered after ${took} ms`);
			assert.equal(r.isError, true);
			assert.equal(text(r), timeoutText('progress', 'hard', 'box', 1600, 'callMaxTimeoutMs'));
			assert.ok(seen >= 1 && seen < 12, `${seen} progress before the hard limit`);
			const atEnd = seen;
			await L.sleep(1000);
			assert.equal(seen, atEnd, 'no progress after the call ended');
			assertOk(await wb.useTool('box', 'hard', 'meta', {}));
		});
	});
});

// ---------------------------------------------------------------------------

describe('no stale state', () => {
	test('raw: a crash during a call with progress; the same token works on the restarted server', T, async () => {
		await withRaw(FX_CONFIG, {}, async (raw) => {
			await raw.initialize();
			await rawOpen(raw, 'box');
			raw.send(useToolLine(1, 'box', 'fx', 'progress', { steps: 5, interval_ms: 80, crash_at: 2 }, { progressToken: 'T' }));
			const crash = await readUntil(raw, (m) => m.id === 1, 5000, 'the answer to the crashed call');
			const prog = crash.others.map((l) => JSON.parse(l));
			assert.deepEqual(prog.map((m) => [m.method, m.params?.progressToken, m.params?.progress]),
			    [['notifications/progress', 'T', 1], ['notifications/progress', 'T', 2]]);
			assert.equal(crash.json.result?.isError, true, crash.line);
			const t = crash.json.result.content[0].text;
			assert.ok(t.startsWith(execErrorPrefix('progress', 'fx', 'box')), t);
			assert.match(t, /\b5\b/, 'exit status');

			// Same client token again, on the restarted server.
			raw.send(useToolLine(2, 'box', 'fx', 'progress', { steps: 3, interval_ms: 50, total: 3 }, { progressToken: 'T' }));
			const ok = await readUntil(raw, (m) => m.id === 2, 5000, 'the second answer');
			const prog2 = ok.others.map((l) => JSON.parse(l));
			assert.deepEqual(prog2.map((m) => [m.params?.progressToken, m.params?.progress, m.params?.total]),
			    [['T', 1, 3], ['T', 2, 3], ['T', 3, 3]]);
			assert.ok(!ok.json.result.isError, ok.line);
			// Nothing stray afterwards.
			assert.deepEqual(await drain(raw, 300), []);
		});
	});

	test('raw: progress of a cancelled call is not forwarded; the token can be reused', T, async () => {
		await withRaw(FX_CONFIG, {}, async (raw) => {
			await raw.initialize();
			await rawOpen(raw, 'box');
			// The server goes on sending progress and answers at 1 s anyway.
			raw.send(useToolLine(5, 'box', 'fx', 'progress', { steps: 10, interval_ms: 100, ignore_cancel: true }, { progressToken: 'C' }));
			const first = await readUntil(raw, (m) => m.method === 'notifications/progress', 3000, 'first progress');
			assert.equal(first.json.params.progressToken, 'C');
			raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } });
			const after = await drain(raw, 1300);
			// One progress may have been on its way; nothing for id 5.
			assert.ok(after.length <= 1, `lines after the cancel: ${after}`);
			assert.deepEqual(after.filter((l) => JSON.parse(l).id === 5), []);
			raw.send(useToolLine(6, 'box', 'fx', 'progress', { steps: 2, interval_ms: 50 }, { progressToken: 'C' }));
			const ok = await readUntil(raw, (m) => m.id === 6, 3000, 'the next answer');
			assert.deepEqual(ok.others.map((l) => JSON.parse(l).params?.progress), [1, 2]);
			assert.ok(!ok.json.result.isError, ok.line);
		});
	});
});
