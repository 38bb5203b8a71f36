// Issue 41: remote servers as toolbox members, through the built
// workbench.  A toolbox holds servers reached over Streamable HTTP (SDK
// 1.x, a session per initialize; SDK v2, stateless 2026-07-28) and over
// HTTP+SSE (SDK 1.x SSEServerTransport), on http and on https with a
// certificate made here (trusted through SSL_CERT_FILE), all served by
// remote-server.mjs.  The SDK clients (1.x, and v2 pinned to 2026-07-28)
// open the toolbox, call, and see progress, elicitation, cancellation,
// the configured headers, search; the server killed and started again
// (an error that says so, then the server again, with backoff), a 404
// for its session (a new one), DELETE at idle stop and at the end, a
// shared workbench whose two sessions use one remote session, an
// untrusted certificate refused with the reason, and hostile remotes.

import fs from 'node:fs';
import path from 'node:path';
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as L from './lib.mjs';
import * as E from './eras-lib.mjs';
import * as R from './remote-lib.mjs';

const T = { timeout: 60000 * L.SLOW };

after(() => {
	R.stopServers();
	L.cleanup();
});

const { startServer, box } = R;

const names = (r) => L.openedTools(L.resultJson(r)).map((t) => `${t.server}/${t.name}`).sort();

describe('remote members over Streamable HTTP and HTTP+SSE', () => {
	test('open_toolbox lists their tools; calls, headers (${VAR} expanded), progress, elicitation, cancellation; DELETE at the end', T, async () => {
		const s = await startServer();
		const config = box({
			h: { type: 'http', url: s.url('/mcp'), headers: { 'X-Key': '${REMOTE_KEY}' } },
			j: { type: 'streamable-http', url: s.url('/mcp-json') },
			s: { type: 'sse', url: s.url('/sse') },
		});
		const wb = await L.startWorkbench(config, { env: { REMOTE_KEY: 'key-from-env-41' },
		    capabilities: { elicitation: {} } });
		try {
			const o = await wb.openToolbox('web');
			L.assertOk(o);
			assert.equal(L.resultJson(o).servers_connected, 3);
			for (const m of ['h', 'j', 's'])
				assert.ok(names(o).includes(`${m}/echo`), names(o).join(' '));
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'over http' })), 'echo: over http');
			assert.equal(L.text(await wb.useTool('web', 'j', 'echo', { text: 'json' })), 'echo: json');
			assert.equal(L.text(await wb.useTool('web', 's', 'echo', { text: 'over sse' })), 'echo: over sse');
			assert.equal(L.text(await wb.useTool('web', 'h', 'seen', {})), 'key: key-from-env-41');
			assert.doesNotMatch(wb.stderr, /key-from-env-41/, 'a header value in the log');

			for (const m of ['h', 's']) {
				const seen = [];
				const wire = L.tapMessages(wb.client);
				const r = await wb.useTool('web', m, 'slow', { steps: 3 },
				    { onprogress: (p) => seen.push(p.progress) });
				assert.equal(L.text(r), 'done 3');
				L.assertWireProgress(wire, seen, [1, 2, 3], `progress from ${m}`);
				const totals = wire.filter((x) => x.method === 'notifications/progress').map((x) => x.params.total);
				assert.deepEqual(totals, [3, 3, 3], `progress totals from ${m}`);
			}

			const asked = [];
			wb.client.setRequestHandler(ElicitRequestSchema, async (req) => {
				asked.push(req.params.message);
				return { action: 'accept', content: { answer: 'blue' } };
			});
			assert.equal(L.text(await wb.useTool('web', 'h', 'ask', { question: 'colour?' })), 'accept: blue');
			assert.equal(L.text(await wb.useTool('web', 's', 'ask', { question: 'again?' })), 'accept: blue');
			assert.deepEqual(asked, ['colour?', 'again?']);

			const ac = new AbortController();
			const p = wb.useTool('web', 'h', 'wait', { ms: 20000 }, { signal: ac.signal });
			await L.sleep(300);
			ac.abort();
			await assert.rejects(p);
			await L.waitFor(async () => (await s.stats()).cancelled === 1, 5000, 'the server told of the cancellation');
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'after' })), 'echo: after');
		} finally {
			await wb.close();
		}
		// Both Streamable sessions ended with a DELETE before the exit.
		assert.equal((await s.stats()).deletes, 2);
		await s.stop();
	});

	test('search_tools finds a remote tool once a session opened the toolbox', T, async () => {
		const s = await startServer();
		await L.withWorkbench(box({ r: { type: 'http', url: s.url('/mcp') } }), {}, async (wb) => {
			await L.openOk(wb, 'web');
			const found = await wb.callTool('search_tools', { query: 'report progress' });
			L.assertOk(found);
			assert.match(L.text(found), /"slow"/);
		});
		await s.stop();
	});

	test('a 2026-07-28 server (SDK v2, stateless) for a 2025 client and a 2026-07-28 client; a 2026-07-28 client to a 2025 server', T, async () => {
		const s = await startServer();
		const config = box({ v: { type: 'http', url: s.url('/v2') }, h: { type: 'http', url: s.url('/mcp') } });
		await L.withWorkbench(config, {}, async (wb) => {
			await L.openOk(wb, 'web');
			assert.equal(L.text(await wb.useTool('web', 'v', 'echo', { text: 'a' })), 'v2 echo: a');
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'b' })), 'echo: b');
		});
		await E.withV2(config, 'pin', {}, async (wb) => {
			assert.equal(L.resultJson(await wb.openToolbox('web')).servers_connected, 2);
			assert.equal(L.text(await wb.useTool('web', 'v', 'echo', { text: 'c' })), 'v2 echo: c');
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'd' })), 'echo: d');
			const seen = [];
			const wire = L.tapMessages(wb.client);
			const r = await wb.useTool('web', 'h', 'slow', { steps: 2 },
			    { onprogress: (p) => seen.push(p.progress) });
			assert.equal(L.text(r), 'done 2');
			L.assertWireProgress(wire, seen, [1, 2]);
		});
		await s.stop();
	});
});

describe('supervision of a remote member', () => {
	test('killed: calls fail saying so; started again: reached again after the backoff', T, async () => {
		let s = await startServer();
		const port = s.port;
		await L.withWorkbench(box({ h: { type: 'http', url: s.url('/mcp') } }), {}, async (wb) => {
			await L.openOk(wb, 'web');
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'one' })), 'echo: one');
			await s.stop();
			const r = await wb.useTool('web', 'h', 'echo', { text: 'two' });
			assert.ok(r.isError, JSON.stringify(r));
			assert.match(L.text(r), /127\.0\.0\.1:\d+: (connection refused|Connection refused|the server closed the connection|the connection ended)/i);
			s = await startServer('--port', String(port));
			await L.waitFor(async () => {
				const again = await wb.useTool('web', 'h', 'echo', { text: 'three' });
				return !again.isError && L.text(again) === 'echo: three';
			}, 15000, 'the server reached again');
			assert.match(wb.stderr, /web\/h: .*(refused|closed|ended)/i);
		});
		await s.stop();
	});

	test('a 404 for its session: a new session (initialize again), calls go on', T, async () => {
		const s = await startServer();
		await L.withWorkbench(box({ h: { type: 'http', url: s.url('/mcp') } }), {}, async (wb) => {
			await L.openOk(wb, 'web');
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'one' })), 'echo: one');
			assert.equal((await s.stats()).inits, 1);
			await s.forget();
			const r = await wb.useTool('web', 'h', 'echo', { text: 'two' });
			if (r.isError)
				assert.match(L.text(r), /ended its session \(HTTP 404\)/);
			await L.waitFor(async () => {
				const again = await wb.useTool('web', 'h', 'echo', { text: 'three' });
				return !again.isError && L.text(again) === 'echo: three';
			}, 10000, 'calls on the new session');
			assert.equal((await s.stats()).inits, 2);
		});
		await s.stop();
	});

	test('idleTimeoutMs ends its session with a DELETE; the next call reaches it again', T, async () => {
		const s = await startServer();
		await L.withWorkbench(box({ h: { type: 'http', url: s.url('/mcp'), idleTimeoutMs: 300 } }), {}, async (wb) => {
			await L.openOk(wb, 'web');
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'one' })), 'echo: one');
			await L.waitFor(async () => (await s.stats()).deletes === 1, 5000, 'a DELETE at idle stop');
			await wb.waitStderr(/web\/h: stopped after 300 ms without traffic/);
			assert.equal(L.text(await wb.useTool('web', 'h', 'echo', { text: 'two' })), 'echo: two');
			assert.equal((await s.stats()).inits, 2);
		});
		await s.stop();
	});
});

describe('a shared workbench', () => {
	test('two sessions use one remote session of a member', { ...T, skip: L.NO_SHARING }, async () => {
		const s = await startServer();
		const dir = L.makeTempDir('wb-share-');
		const file = L.writeConfig(box({ h: { type: 'http', url: s.url('/mcp') } },
		    { share: true, shareDir: dir, shareLingerMs: 500 }));
		const a = await L.startWorkbench(file);
		const b = await L.startWorkbench(file);
		let daemon = 0;
		try {
			await L.openOk(a, 'web');
			await L.openOk(b, 'web');
			assert.equal(L.text(await a.useTool('web', 'h', 'echo', { text: 'a' })), 'echo: a');
			assert.equal(L.text(await b.useTool('web', 'h', 'echo', { text: 'b' })), 'echo: b');
			assert.equal((await s.stats()).inits, 1, 'one remote session for both');
			const st = L.runCli(['-c', file, '--status', '--json']);
			assert.equal(st.status, 0, st.all);
			const json = JSON.parse(st.stdout);
			daemon = json.pid ?? 0;
			assert.match(st.stdout, /"web\/h"|"h"/);
		} finally {
			await a.close();
			await b.close();
		}
		await L.waitFor(async () => (await s.stats()).deletes === 1, 10000, 'the DELETE when the shared workbench ends');
		if (daemon > 0)
			await L.waitFor(() => !L.pidAlive(daemon), 10000, 'the shared workbench ended');
		await s.stop();
	});
});

describe('https', () => {
	const dir = L.makeTempDir('wb-remote-tls-');
	const cert = (name, cn) => R.cert(dir, name, cn);

	test('a certificate trusted through SSL_CERT_FILE: calls; untrusted, or for another name: refused with the reason',
	    { ...T, skip: !R.haveOpenssl && 'no openssl' }, async () => {
		const [pem, key] = cert('localhost', 'localhost');
		const [wpem, wkey] = cert('wrong', 'wrong.example');
		const s = await startServer('--tls', pem, key);
		const w = await startServer('--tls', wpem, wkey);
		const config = box({
			t: { type: 'http', url: s.url('/mcp', 'localhost') },
			n: { type: 'http', url: w.url('/mcp', 'localhost') },
		});
		// Both trusted: the second is refused for its name alone.
		const bundle = path.join(dir, 'both.pem');
		fs.writeFileSync(bundle, fs.readFileSync(pem, 'utf8') + fs.readFileSync(wpem, 'utf8'));
		const trust = { SSL_CERT_FILE: bundle, SSL_CERT_DIR: dir };
		const check = L.runCli(['-c', L.writeConfig(config), '--check'], { env: trust });
		assert.equal(check.status, 0, check.all);
		await L.withWorkbench(config, { env: trust }, async (wb) => {
			const o = await wb.openToolbox('web');
			assert.equal(L.resultJson(o).servers_connected, 1, L.text(o));
			assert.equal(L.text(await wb.useTool('web', 't', 'echo', { text: 'tls' })), 'echo: tls');
			const r = await wb.useTool('web', 'n', 'echo', { text: 'x' });
			assert.ok(r.isError);
			assert.match(L.text(r), /certificate is refused: [Hh]ostname mismatch/);
		});
		assert.equal((await s.stats()).sni, 'localhost');
		await L.withWorkbench(box({ t: { type: 'http', url: s.url('/mcp', 'localhost') } }),
		    { env: { SSL_CERT_FILE: '/nonexistent', SSL_CERT_DIR: '/nonexistent' } }, async (wb) => {
			const o = await wb.openToolbox('web');
			assert.ok(o.isError, JSON.stringify(o));
			assert.match(L.text(o), /certificate is refused: self-signed certificate/);
		});
		await s.stop();
		await w.stop();
	});
});

describe('hostile remotes, and the configuration', () => {
	test('a redirect, a head too large, a server that never answers: the member fails saying why; the others serve', T, async () => {
		const s = await startServer();
		const config = box({
			ok: { type: 'http', url: s.url('/mcp') },
			moved: { type: 'http', url: s.url('/redirect') },
			huge: { type: 'http', url: s.url('/huge') },
			gone: { type: 'sse', url: 'http://127.0.0.1:1/sse' },
		});
		await L.withWorkbench(config, {}, async (wb) => {
			const o = await wb.openToolbox('web');
			assert.equal(L.resultJson(o).servers_connected, 1, L.text(o));
			const errors = {};
			for (const m of ['moved', 'huge', 'gone'])
				errors[m] = L.text(await wb.useTool('web', m, 'echo', { text: 'x' }));
			assert.match(errors.moved, /redirect.*http:\/\/elsewhere\.example\/mcp|elsewhere\.example/);
			assert.match(errors.huge, /head|header|too large/i);
			assert.match(errors.gone, /refused/i);
			assert.equal(L.text(await wb.useTool('web', 'ok', 'echo', { text: 'fine' })), 'echo: fine');
		});
		await s.stop();
	});

	test('--check takes the Claude Code form, names members by URL, never header values; errors that say so', T, () => {
		const good = L.writeConfig(box({
			context7: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { CONTEXT7_API_KEY: 'sk-secret-41' } },
			legacy: { type: 'sse', url: 'http://10.0.0.5:8080/sse' },
		}));
		const r = L.runCli(['-c', good, '--check']);
		assert.equal(r.status, 0, r.all);
		assert.match(r.stdout, /context7: http:\/\/127\.0\.0\.1:9\/mcp \(http\)/);
		assert.match(r.stdout, /legacy: http:\/\/10\.0\.0\.5:8080\/sse \(sse\)/);
		assert.doesNotMatch(r.all, /sk-secret-41/);
		const bad = (member, re) => {
			const x = L.runCli(['-c', L.writeConfig(box({ m: member })), '--check']);
			assert.equal(x.status, 1, x.all);
			assert.match(x.stderr, re);
		};
		bad({ command: 'x', url: 'http://a/' }, /"command" and "url" together/);
		bad({ type: 'http' }, /"type": "http" needs a "url"/);
		bad({ type: 'sse' }, /"type": "sse" needs a "url"/);
		bad({ url: 'ftp://a/' }, /only http:\/\/ and https:\/\/ URLs/);
		bad({}, /missing "command" \(the program to run\) or "url"/);
		bad({ url: 'http://a/', headers: { 'Bad Name': 'x' } }, /invalid header name/);
		bad({ url: 'http://a/', type: 'websocket' }, /type/);
	});

	test('--probe reports a remote member ready with its tools, or failed with the reason', T, async () => {
		const s = await startServer();
		const file = L.writeConfig(box({ h: { type: 'http', url: s.url('/mcp') }, x: { type: 'sse', url: 'http://127.0.0.1:1/sse' } }));
		const r = L.runCli(['--probe', '-c', file]);
		assert.equal(r.status, 1, r.all);
		assert.match(r.stdout, /web\/h.*ready.*5 tools?/);
		assert.match(r.stdout, /web\/x.*failed.*refused/i);
		await s.stop();
	});
});
