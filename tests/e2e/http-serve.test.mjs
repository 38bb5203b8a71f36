// The workbench serving MCP over Streamable HTTP (--listen): the SDK 1.x
// StreamableHTTPClientTransport and the v2 client over HTTP (pinned to
// 2026-07-28, and auto) against real servers shared between sessions.
// Every wait is for an event (an answer, a line of stderr, an exit).

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';
import * as H from './http-lib.mjs';

const T = { timeout: 60000 };

after(() => L.cleanup());

const FIXTURE = { toolboxes: { fx: { description: 'fixture', mcpServers: { f: L.fixtureServer() } } } };

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
			assert.equal(wb.starts(), 1, 'one server process for every session');
			await Promise.all([a.close(), b.close(), m.close()]);
		});
	});
});
