// Issue 41: what a remote member (remote-server.mjs's /mcp-x over
// Streamable HTTP, /sse-x over HTTP+SSE) asks of the client and offers
// besides tools, through the built workbench: sampling/createMessage,
// roots/list and notifications/message (after logging/setLevel) relayed
// to the client; its prompts (named {toolbox}__{server}__{prompt}),
// resources and templates, with completion/complete; an answer over
// maxMessageBytes and a stalled answer fail the call alone; and --status
// of a shared workbench names a remote member by its URL.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
	CreateMessageRequestSchema,
	ListRootsRequestSchema,
	LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as L from './lib.mjs';
import * as R from './remote-lib.mjs';

const T = { timeout: 60000 * L.SLOW };

after(() => {
	R.stopServers();
	L.cleanup();
});

const { startServer, box } = R;

const CAPS = { sampling: {}, roots: { listChanged: true } };

describe('a remote member asks the client', () => {
	test('sampling/createMessage, roots/list, notifications/message after logging/setLevel: over Streamable HTTP and HTTP+SSE', T, async () => {
		const s = await startServer();
		const config = box({ h: { type: 'http', url: s.url('/mcp-x') }, s: { type: 'sse', url: s.url('/sse-x') } });
		await L.withWorkbench(config, { capabilities: CAPS }, async (wb) => {
			const sampled = [];
			wb.client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
				sampled.push(req.params.messages[0].content.text);
				return { model: 'test-model', role: 'assistant',
				    content: { type: 'text', text: `answer ${sampled.length}` } };
			});
			let rootsAsked = 0;
			wb.client.setRequestHandler(ListRootsRequestSchema, async () => {
				rootsAsked++;
				return { roots: [{ uri: 'file:///tmp/wb-remote-root-a', name: 'A' },
				    { uri: 'file:///tmp/wb-remote-root-b', name: 'B' }] };
			});
			const logs = L.collectNotifications(wb.client, LoggingMessageNotificationSchema);
			const o = await wb.openToolbox('web');
			L.assertOk(o);
			assert.equal(L.resultJson(o).servers_connected, 2, L.text(o));
			await wb.client.setLoggingLevel('info');
			for (const [i, m] of ['h', 's'].entries()) {
				const r = await wb.useTool('web', m, 'sample', { prompt: `question from ${m}` });
				assert.equal(L.text(r), `sampled (test-model): answer ${i + 1}`, `sampling through ${m}`);
				assert.deepEqual(sampled.slice(i), [`question from ${m}`]);

				const before = rootsAsked;
				const rr = await wb.useTool('web', m, 'roots', {});
				assert.equal(L.text(rr), 'roots: file:///tmp/wb-remote-root-a file:///tmp/wb-remote-root-b', `roots through ${m}`);
				assert.ok(rootsAsked > before, `the client was asked for its roots (${m})`);

				logs.reset();
				assert.equal(L.text(await wb.useTool('web', m, 'log', { text: `note ${m}` })), `logged note ${m}`);
				// The server sends debug first, then info: at level info
				// the first is not the client's.
				await logs.waitCount(1, 5000 * L.SLOW);
				assert.deepEqual(logs.list.map((n) => [n.params.level, n.params.data]), [['info', `note ${m}`]],
				    `the log through ${m}`);
			}
		});
		await s.stop();
	});
});

describe('a remote member\'s prompts, resources and completions', () => {
	test('prompts/list + prompts/get, resources/list + resources/read (and a template), completion/complete', T, async () => {
		const s = await startServer();
		await L.withWorkbench(box({ r: { type: 'http', url: s.url('/mcp-x') } }), {}, async (wb) => {
			await L.openOk(wb, 'web');
			await L.waitFor(async () => (await wb.client.listPrompts()).prompts.length > 0, 5000 * L.SLOW, 'the prompts listed');
			const prompts = (await wb.client.listPrompts()).prompts;
			assert.deepEqual(prompts.map((p) => p.name), ['web__r__greet']);
			assert.match(prompts[0].description, /Greets someone\./);
			const g = await wb.client.getPrompt({ name: 'web__r__greet', arguments: { name: 'Ada' } });
			assert.equal(g.messages[0].content.text, 'Hello, Ada!');

			const resources = (await wb.client.listResources()).resources;
			assert.deepEqual(resources.map((r) => r.uri), ['remote://note']);
			const note = await wb.client.readResource({ uri: 'remote://note' });
			assert.deepEqual(note.contents, [{ uri: 'remote://note', text: 'a remote note' }]);
			const templates = (await wb.client.listResourceTemplates()).resourceTemplates;
			assert.deepEqual(templates.map((t) => t.uriTemplate), ['remote://item/{id}']);
			const item = await wb.client.readResource({ uri: 'remote://item/7' });
			assert.equal(item.contents[0].text, 'item 7');

			let c = await wb.client.complete({ ref: { type: 'ref/prompt', name: 'web__r__greet' },
			    argument: { name: 'name', value: 'Al' } });
			assert.deepEqual(c.completion.values, ['Alice', 'Albert']);
			c = await wb.client.complete({ ref: { type: 'ref/resource', uri: 'remote://item/{id}' },
			    argument: { name: 'id', value: '1' } });
			assert.deepEqual(c.completion.values, ['1', '12']);
		});
		await s.stop();
	});
});

describe('a hostile remote member through the workbench', () => {
	test('an answer over maxMessageBytes fails its call saying so (Streamable HTTP and HTTP+SSE); the next call works', T, async () => {
		const s = await startServer();
		const config = box({ h: { type: 'http', url: s.url('/mcp-x') }, s: { type: 'sse', url: s.url('/sse-x') } },
		    { maxMessageBytes: 65536 });
		await L.withWorkbench(config, {}, async (wb) => {
			await L.openOk(wb, 'web');
			for (const m of ['h', 's']) {
				assert.equal(L.text(await wb.useTool('web', m, 'big', { bytes: 1000 })), 'x'.repeat(1000));
				const r = await wb.useTool('web', m, 'big', { bytes: 200000 });
				assert.ok(r.isError, `${m}: ${JSON.stringify(r).slice(0, 300)}`);
				assert.match(L.text(r), /the result is \d+ bytes, more than the 65536-byte limit \(maxMessageBytes\)/);
				assert.equal(L.text(await wb.useTool('web', m, 'echo', { text: 'after' })), 'echo: after');
			}
			assert.match(wb.stderr, /web\/h: dropped a message of \d+ bytes \(limit 65536\)/);
		});
		await s.stop();
	});

	test('a stalled answer (head sent, body never ends) fails its call by callTimeoutMs; the next call works', T, async () => {
		const s = await startServer();
		const member = { type: 'http', url: s.url('/mcp-x'), callTimeoutMs: 1500 };
		await L.withWorkbench(box({ h: member }), {}, async (wb) => {
			await L.openOk(wb, 'web');
			const began = Date.now();
			const r = await L.withTimeout(wb.useTool('web', 'h', 'stall', {}), 20000 * L.SLOW, 'the stalled call to fail');
			const took = Date.now() - began;
			assert.ok(r.isError, JSON.stringify(r));
			assert.match(L.text(r), /timed out after 1500 ms \(callTimeoutMs\)/);
			assert.ok(took >= 1400, `failed after ${took} ms, before callTimeoutMs`);
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'next' })), 'echo: next');
		});
		await s.stop();
	});
});

describe('--status of a shared workbench', () => {
	test('names a remote member by its URL as written, never a header value', { ...T, skip: L.NO_SHARING }, async () => {
		const s = await startServer();
		const dir = L.makeTempDir('wb-share-');
		const url = s.url('/mcp-x');
		const file = L.writeConfig(box({ h: { type: 'http', url, headers: { 'X-Key': '${REMOTE_KEY}' } } },
		    { share: true, shareDir: dir, shareLingerMs: 500 }));
		const env = { REMOTE_KEY: 'status-secret-41' };
		const a = await L.startWorkbench(file, { env });
		let daemon = 0;
		try {
			await L.openOk(a, 'web');
			assert.equal(L.text(await a.useTool('web', 'h', 'echo', { text: 'a' })), 'echo: a');
			const st = L.runCli(['-c', file, '--status', '--json'], { env });
			assert.equal(st.status, 0, st.all);
			const json = JSON.parse(st.stdout);
			daemon = json.pid ?? 0;
			const h = json.servers.find((x) => x.server === 'h');
			assert.ok(h !== undefined, st.stdout);
			assert.equal(h.url, url);
			assert.equal(h.toolbox, 'web');
			const txt = L.runCli(['-c', file, '--status'], { env });
			assert.equal(txt.status, 0, txt.all);
			assert.match(txt.stdout, new RegExp(`^server web/h: ${L.escapeRe(url)}, `, 'm'));
			assert.doesNotMatch(txt.stdout, /server web\/h: pid/);
			assert.doesNotMatch(st.all + txt.all, /status-secret-41/);
		} finally {
			await a.close();
		}
		if (daemon > 0)
			await L.waitFor(() => !L.pidAlive(daemon), 10000 * L.SLOW, 'the shared workbench ended');
		await s.stop();
	});
});
