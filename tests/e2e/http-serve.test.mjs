// The workbench serving MCP over Streamable HTTP (--listen): the SDK 1.x
// StreamableHTTPClientTransport and the v2 client over HTTP (pinned to
// 2026-07-28, and auto) against real servers shared between sessions.
// Every wait is for an event (an answer, a line of stderr, an exit).

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as L from './lib.mjs';
import * as H from './http-lib.mjs';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const T = { timeout: 60000 };

after(() => L.cleanup());

const FIXTURE = { toolboxes: { fx: { description: 'fixture', mcpServers: { f: L.fixtureServer(), g: L.fixtureServer('--name', 'g') } } } };

function names(list) {
	return list.tools.map((t) => t.name).sort();
}

describe('http: one client at a time', () => {
	test('SDK 1.x over HTTP: initialize, tools/list, open_toolbox, use_tool', T, async () => {
		await H.withListener(FIXTURE, {}, async (wb) => {
			assert.match(wb.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
			const c = await H.client1(wb.url);
			assert.match(c.sessionId, /^[0-9a-f]{32}$/);
			assert.equal(c.client.getServerVersion().name, 'mcp-workbench');
			assert.deepEqual(names(await c.client.listTools()), ['open_toolbox', 'search_tools', 'use_tool']);
			const open = await c.openToolbox('fx');
			assert.ok(!open.isError, L.resultText(open));
			assert.match(L.resultText(open), /"name":"wait"/);
			const r = await c.useTool('fx', 'f', 'wait', { ms: 1 });
			assert.equal(L.resultText(r), 'waited 1');
			await c.close();
		});
	});

	for (const mode of ['pin', 'auto']) {
		test(`v2 client (${mode}) over HTTP: lists, open_toolbox, use_tool, statelessly`, T, async () => {
			await H.withListener(FIXTURE, {}, async (wb) => {
				const c = await H.client2(wb.url, mode);
				assert.equal(c.sessionId, undefined, 'a 2026-07-28 client has no session');
				assert.deepEqual(names(await c.client.listTools()), ['open_toolbox', 'search_tools', 'use_tool']);
				const p = await c.client.listPrompts();
				assert.ok(Array.isArray(p.prompts));
				const open = await c.openToolbox('fx');
				assert.ok(!open.isError, L.resultText(open));
				const r = await c.useTool('fx', 'f', 'wait', { ms: 2 });
				assert.equal(L.resultText(r), 'waited 2');
				await c.close();
			});
		});
	}
});

describe('http: sessions share servers', () => {
	test('two SDK 1.x sessions and a v2 client: one server, every answer to its own caller under concurrency', T, async () => {
		await H.withListener(FIXTURE, {}, async (wb) => {
			const a = await H.client1(wb.url);
			const b = await H.client1(wb.url);
			const m = await H.client2(wb.url, 'pin');
			assert.notEqual(a.sessionId, b.sessionId);
			await a.openToolbox('fx');
			await b.openToolbox('fx');
			const calls = [];
			for (let i = 0; i < 16; i++) {
				calls.push(a.useTool('fx', 'f', 'wait', { ms: 1000 + i }).then((r) => ['a', i, L.resultText(r)]));
				calls.push(b.useTool('fx', 'f', 'wait', { ms: 2000 + i }).then((r) => ['b', i, L.resultText(r)]));
				calls.push(m.useTool('fx', 'f', 'wait', { ms: 3000 + i }).then((r) => ['m', i, L.resultText(r)]));
			}
			// The server waits ms each: 1-3 s, all at once.
			for (const [who, i, text] of await Promise.all(calls))
				assert.equal(text, `waited ${{ a: 1000, b: 2000, m: 3000 }[who] + i}`, `${who} call ${i}`);
			assert.equal(wb.starts(/\[fx\/f\] fixture-server: started/g), 1, 'one server process for every session');
			await Promise.all([a.close(), b.close(), m.close()]);
		});
	});
});

const ELICIT = { method: 'elicitation/create', params: { message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } };

// What the fixture server received so far, asked through a session.
async function received(c) {
	return JSON.parse(L.resultText(await c.useTool('fx', 'f', 'received', {})));
}

describe('http: streams', () => {
	test('SDK 1.x: progress and elicitation come on the calling session\'s POST stream, not to another session', T, async () => {
		await H.withListener(FIXTURE, {}, async (wb) => {
			const asked = [];
			const a = await H.client1(wb.url, {
				capabilities: { elicitation: {} },
				handlers: [[ElicitRequestSchema, async (req) => {
					asked.push(req.params.message);
					return { action: 'accept', content: { name: 'Ada' } };
				}]],
			});
			const b = await H.client1(wb.url, {
				capabilities: { elicitation: {} },
				handlers: [[ElicitRequestSchema, async () => {
					throw new Error('asked the wrong session');
				}]],
			});
			await a.openToolbox('fx');
			await b.openToolbox('fx');
			const seen = [];
			let wire = L.tapMessages(a.client);
			const r = await a.useTool('fx', 'f', 'progress', { steps: 3, interval_ms: 5 },
			    { onprogress: (p) => seen.push(p.progress) });
			L.assertWireProgress(wire, seen, [1, 2, 3]);
			assert.equal(JSON.parse(L.resultText(r)).steps, 3);
			// The server asks the client while b works on another one (a
			// 2025 server's request goes to the session of the one call
			// in flight on it).
			const busy = b.useTool('fx', 'g', 'wait', { ms: 300 }).catch((err) => err);
			const seenAsk = [];
			wire = L.tapMessages(a.client);
			const e = await a.useTool('fx', 'f', 'ask', { ...ELICIT, progress: true },
			    { onprogress: (p) => seenAsk.push(p.progress) });
			assert.deepEqual(asked, ['name?']);
			assert.equal(JSON.parse(L.resultText(e)).result.content.name, 'Ada');
			L.assertWireProgress(wire, seenAsk, [1, 2], 'ask');
			assert.equal(L.resultText(await busy), 'waited 300');
			await Promise.all([a.close(), b.close()]);
		});
	});

	for (const mode of ['pin', 'auto']) {
		test(`v2 client (${mode}): progress on the POST's stream, elicitation through MRTR across POSTs`, T, async () => {
			await H.withListener(FIXTURE, {}, async (wb) => {
				const asked = [];
				const c = await H.client2(wb.url, mode, {
					capabilities: { elicitation: {} },
					handlers: { 'elicitation/create': async (req) => {
						asked.push(req.params.message);
						return { action: 'accept', content: { name: 'Grace' } };
					} },
				});
				const seen = [];
				const wire = L.tapMessages(c.client);
				const r = await c.useTool('fx', 'f', 'progress', { steps: 2, interval_ms: 5 },
				    { onprogress: (p) => seen.push(p.progress) });
				L.assertWireProgress(wire, seen, [1, 2]);
				assert.equal(JSON.parse(L.resultText(r)).steps, 2);
				const e = await c.useTool('fx', 'f', 'ask', ELICIT);
				assert.deepEqual(asked, ['name?']);
				assert.equal(JSON.parse(L.resultText(e)).result.content.name, 'Grace');
				await c.close();
			});
		});
	}

	test('v2 client (pin) in dynamic mode: subscriptions/listen is a POST answered as a stream of list changes, ended by its close', T, async () => {
		await H.withListener(FIXTURE, { args: ['--mode', 'dynamic'] }, async (wb) => {
			const c = await H.client2(wb.url, 'pin');
			const changed = [];
			c.client.setNotificationHandler('notifications/tools/list_changed', (n) => changed.push(n));
			const listen = await c.client.listen({ toolsListChanged: true });
			assert.deepEqual(listen.honoredFilter, { toolsListChanged: true });
			assert.equal(L.resultText(await c.callTool('fx__f__wait', { ms: 3 })), 'waited 3');
			await L.waitFor(() => changed.length > 0, 10000, 'tools/list_changed under the subscription');
			await listen.close();
			assert.equal(L.resultText(await c.useTool('fx', 'f', 'wait', { ms: 4 })), 'waited 4');
			await c.close();
		});
	});

	test('SDK 1.x in dynamic mode: tools/list_changed comes on the session\'s GET stream', T, async () => {
		await H.withListener(FIXTURE, { args: ['--mode', 'dynamic'] }, async (wb) => {
			const c = await H.client1(wb.url);
			const changed = L.collectNotifications(c.client, ToolListChangedNotificationSchema);
			const open = await c.openToolbox('fx');
			assert.ok(!open.isError);
			await changed.waitCount(1, 10000);
			const list = await c.client.listTools();
			assert.ok(list.tools.some((t) => t.name === 'fx__f__wait'), JSON.stringify(names(list)));
			await c.close();
		});
	});
});

describe('http: sessions end', () => {
	test('DELETE ends the session: its call cancelled at the server, its id then 404; no id is 400', T, async () => {
		await H.withListener(FIXTURE, {}, async (wb) => {
			const a = await H.client1(wb.url);
			const b = await H.client1(wb.url);
			await a.openToolbox('fx');
			await b.openToolbox('fx');
			const pending = a.useTool('fx', 'f', 'wait', { ms: 60000 }).catch((e) => e);
			await L.waitFor(async () => (await received(b)).some((m) => m.params?.arguments?.ms === 60000), 10000, 'the call at the server');
			const id = a.sessionId;
			await a.transport.terminateSession();
			await L.waitFor(async () => (await received(b)).some((m) => m.method === 'notifications/cancelled'), 10000, 'the cancellation at the server');
			const gone = await H.post(wb.url, H.rpc(9, 'ping'), { 'mcp-session-id': id });
			assert.equal(gone.status, 404);
			assert.equal(JSON.parse(gone.text).error.code, -32001);
			const none = await H.post(wb.url, H.rpc(9, 'tools/list'));
			assert.equal(none.status, 400);
			assert.match(JSON.parse(none.text).error.message, /Mcp-Session-Id/);
			const bad = await H.post(wb.url, H.rpc(9, 'ping'), { 'mcp-session-id': b.sessionId, 'mcp-protocol-version': '1999-01-01' });
			assert.equal(bad.status, 400);
			assert.ok(await pending);
			await Promise.all([a.close(), b.close()]);
		});
	});

	test('a client that closes its connection cancels its call at the server (2025 session and 2026-07-28 request)', T, async () => {
		await H.withListener(FIXTURE, {}, async (wb) => {
			const a = await H.client1(wb.url);
			const m = await H.client2(wb.url, 'pin');
			const watcher = await H.client1(wb.url);
			await a.openToolbox('fx');
			await watcher.openToolbox('fx');
			const cancels = async () => (await received(watcher)).filter((x) => x.method === 'notifications/cancelled').length;
			const ac1 = new AbortController();
			const p1 = a.useTool('fx', 'f', 'wait', { ms: 60001 }, { signal: ac1.signal }).catch((e) => e);
			await L.waitFor(async () => (await received(watcher)).some((x) => x.params?.arguments?.ms === 60001), 10000, 'call 1 at the server');
			// The SDK 1.x client sends notifications/cancelled itself on
			// abort: close the connection under it instead.
			a.transport._abortController?.abort();
			await L.waitFor(async () => (await cancels()) >= 1, 10000, 'the first cancellation');
			const ac2 = new AbortController();
			const p2 = m.useTool('fx', 'f', 'wait', { ms: 60002 }, { signal: ac2.signal }).catch((e) => e);
			await L.waitFor(async () => (await received(watcher)).some((x) => x.params?.arguments?.ms === 60002), 10000, 'call 2 at the server');
			ac2.abort();
			await L.waitFor(async () => (await cancels()) >= 2, 10000, 'the second cancellation');
			const got = (await received(watcher)).filter((x) => x.method === 'notifications/cancelled');
			assert.equal(got.length, 2, JSON.stringify(got));
			ac1.abort();
			await Promise.all([p1, p2]);
			await Promise.all([a.close(), m.close(), watcher.close()]);
		});
	});

	test('GET: one stream a session, a newer one ends the older; 406 without Accept: text/event-stream, 405 without a session', T, async () => {
		await H.withListener(FIXTURE, { args: ['--mode', 'dynamic'] }, async (wb) => {
			const res = await H.post(wb.url, H.rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
			const sid = res.headers.get('mcp-session-id');
			assert.equal((await H.post(wb.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': sid })).status, 202);
			const get = () => fetch(wb.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } });
			const first = await get();
			assert.equal(first.status, 200);
			assert.match(first.headers.get('content-type'), /^text\/event-stream/);
			const firstBody = first.text();
			const second = await get();
			assert.equal(second.status, 200);
			assert.equal(await L.withTimeout(firstBody, 10000, 'the first stream ends'), '');
			// The second gets what comes: open_toolbox changes the list.
			const reader = second.body.getReader();
			let got = '';
			const changed = (async () => {
				while (!got.includes('notifications/tools/list_changed')) {
					const { value, done } = await reader.read();
					if (done)
						break;
					got += Buffer.from(value).toString();
				}
				return got;
			})();
			const open = await H.post(wb.url, H.rpc(2, 'tools/call', { name: 'open_toolbox', arguments: { toolbox_name: 'fx' } }), { 'mcp-session-id': sid });
			assert.equal(open.status, 200);
			assert.match(await L.withTimeout(changed, 10000, 'list_changed on the second stream'), /event: message\ndata: \{"jsonrpc":"2.0","method":"notifications\/tools\/list_changed"/);
			await reader.cancel();
			const json = await fetch(wb.url, { headers: { accept: 'application/json', 'mcp-session-id': sid } });
			assert.equal(json.status, 406);
			const none = await fetch(wb.url, { headers: { accept: 'text/event-stream' } });
			assert.equal(none.status, 405);
			assert.equal(none.headers.get('allow'), 'GET, POST, DELETE');
		});
	});

	test('an idle session expires after httpSessionTimeoutMs: then 404', T, async () => {
		// Long enough for the ping to come first on a loaded machine
		// under ASan (300 ms was not), short enough to wait for.
		const IDLE = 2000 * ({ asan: 3, valgrind: 10 }[process.env.WB_TEST_SLOW] ?? 1);
		await H.withListener({ ...FIXTURE, httpSessionTimeoutMs: IDLE }, {}, async (wb) => {
			const res = await H.post(wb.url, H.rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
			assert.equal(res.status, 200);
			const id = res.headers.get('mcp-session-id');
			assert.match(id, /^[0-9a-f]{32}$/);
			assert.equal((await H.post(wb.url, H.rpc(2, 'ping'), { 'mcp-session-id': id })).status, 200);
			await wb.waitStderr(new RegExp(`session ${id.slice(0, 8)} expired after ${IDLE} ms`), 2 * IDLE + 5000);
			assert.equal((await H.post(wb.url, H.rpc(3, 'ping'), { 'mcp-session-id': id })).status, 404);
		});
	});
});

describe('http: the MCP Inspector', () => {
	const INSPECTOR = path.join(L.TESTS_DIR, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

	// The Inspector's CLI, one method; its parsed output (exit 0, or 5 for
	// a tool result with isError, when status says so).
	function inspect(url, ...args) {
		return inspectStatus(0, url, ...args);
	}

	function inspectStatus(status, url, ...args) {
		const home = L.makeTempDir('wb-inspector-');
		const r = spawnSync(L.NODE, [INSPECTOR, '--cli', url, '--transport', 'http', ...args], {
			encoding: 'utf8',
			timeout: 60000,
			env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') },
		});
		assert.equal(r.status, status, `inspector ${args.join(' ')}: ${r.stderr}\n${r.stdout}`);
		return status === 0 ? JSON.parse(r.stdout) : r.stdout + r.stderr;
	}

	// Six runs of the Inspector's CLI, each a node process loading its
	// bundle: seconds each on a loaded machine.
	test('the Inspector CLI with --transport http: tools/list, open_toolbox, use_tool, prompts/list, resources/list; with a token header', { timeout: 300000 }, async () => {
		const config = { ...FIXTURE, httpToken: 'inspector-token-0123456789' };
		await H.withListener(config, {}, async (wb) => {
			const auth = ['--header', 'Authorization: Bearer inspector-token-0123456789'];
			const list = inspect(wb.url, ...auth, '--method', 'tools/list');
			assert.deepEqual(names(list), ['open_toolbox', 'search_tools', 'use_tool']);
			// Each run is a session of its own: open_toolbox, then the
			// same call over the Inspector's JSON arguments.
			const open = inspect(wb.url, ...auth, '--method', 'tools/call', '--tool-name', 'open_toolbox', '--tool-arg', 'toolbox_name=fx');
			assert.match(L.resultText(open), /"name":"wait"/);
			const call = inspectStatus(5, wb.url, ...auth, '--method', 'tools/call', '--tool-name', 'use_tool',
			    '--tool-arg', 'tool={"toolbox":"fx","server":"f","name":"wait"}', '--tool-arg', 'arguments={"ms":7}');
			assert.match(call, /"code":"tool_is_error"/);
			assert.ok(Array.isArray(inspect(wb.url, ...auth, '--method', 'prompts/list').prompts));
			assert.ok(Array.isArray(inspect(wb.url, ...auth, '--method', 'resources/list').resources));
			const home = L.makeTempDir('wb-inspector-');
			const denied = spawnSync(L.NODE, [INSPECTOR, '--cli', wb.url, '--transport', 'http', '--method', 'tools/list'], {
				encoding: 'utf8', timeout: 60000, env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') },
			});
			assert.notEqual(denied.status, 0);
			assert.match(denied.stdout + denied.stderr, /401|Unauthorized|auth_required/i);
		});
	});
});

describe('http: large results', () => {
	test('3,000,000-byte results (streamed through the workbench) reach each HTTP session whole, in both member orders, while another session calls', T, async () => {
		const config = { toolboxes: { b: { mcpServers: { a: L.mock('--hostile') } } } };
		await H.withListener(config, {}, async (wb) => {
			const a = await H.client1(wb.url);
			const m = await H.client2(wb.url, 'pin');
			await a.openToolbox('b');
			const small = (async () => {
				for (let i = 0; i < 20; i++)
					assert.equal(L.resultText(await m.useTool('b', 'a', 'echo', { message: `m${i}` })), `m${i}`);
			})();
			for (const name of ['big', 'big_id_last', 'big']) {
				const r = await a.useTool('b', 'a', name, { bytes: 3000000 });
				const t = L.resultText(r);
				assert.equal(t.length, 3000000, name);
				assert.ok(/^x+$/.test(t), name);
			}
			const r = await m.useTool('b', 'a', 'big', { bytes: 3000000 });
			assert.equal(L.resultText(r).length, 3000000);
			await small;
			await Promise.all([a.close(), m.close()]);
		});
	});
});

describe('http: the curl session of the README and the manual', () => {
	// The block as written, the port alone changed; the manual's copy
	// must be the same text.
	function readmeBlock() {
		const readme = fs.readFileSync(path.join(L.REPO_DIR, 'README.md'), 'utf8');
		const at = readme.indexOf('<!-- curl-session:');
		assert.ok(at >= 0, 'README has the curl session');
		const start = readme.indexOf('```sh\n', at) + 6;
		return readme.slice(start, readme.indexOf('```', start));
	}

	function manualBlock() {
		const page = fs.readFileSync(path.join(L.REPO_DIR, 'man', 'mcp-workbench.1'), 'utf8');
		const at = page.indexOf('.\\" curl-session:');
		assert.ok(at >= 0, 'the manual has the curl session');
		const start = page.indexOf('.Bd -literal -offset indent\n', at) + 28;
		return page.slice(start, page.indexOf('.Ed\n', start)).replaceAll('\\e', '\\');
	}

	test('runs as written: initialize, the session id, open_toolbox, a call, DELETE', T, async () => {
		const script = readmeBlock();
		assert.equal(manualBlock(), script, 'the manual and the README show the same session');
		const home = L.makeTempDir('wb-curl-home-');
		fs.mkdirSync(path.join(home, 'src'));
		fs.writeFileSync(path.join(home, 'src', 'hello.txt'), 'hi\n');
		const config = { toolboxes: { dev: { description: 'Development tools', mcpServers: {
			filesystem: { ...L.filesystemServer(path.join(home, 'src')), toolFilters: ['read_*', 'list_directory'] },
		} } } };
		await H.withListener(config, {}, async (wb) => {
			assert.match(script, /^URL=http:\/\/127\.0\.0\.1:8931\/mcp$/m);
			const run = script.replace(/^URL=.*$/m, `URL=${wb.url}`);
			const out = await new Promise((resolve, reject) => {
				execFile('sh', ['-c', run], { env: { ...process.env, HOME: home }, timeout: 60000 }, (err, stdout, stderr) =>
					err ? reject(Object.assign(err, { stdout, stderr })) : resolve(stdout));
			});
			const lines = out.split('\n');
			assert.match(lines[0], /"serverInfo":\{"name":"mcp-workbench"/, out);
			assert.match(lines.find((l) => l.includes('"id":2,')) ?? '', /"result":.*"servers":\[\{"server":"filesystem","tools":\[/, out);
			assert.match(out, /\[FILE\] hello\.txt/, out);
			assert.match(out, /^DELETE: 200$/m, out);
			const gone = await H.post(wb.url, H.rpc(9, 'ping'), { 'mcp-session-id': '0'.repeat(32) });
			assert.equal(gone.status, 404);
		});
	});
});
