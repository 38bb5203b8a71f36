// The remote client (remote.c and its parts), end to end through
// tests/remote-probe against SDK 1.x servers (remote-server.mjs): a
// Streamable HTTP session (JSON and event-stream answers, progress, the
// configured headers, the server's GET stream, a 404 for the session,
// DELETE at the end), the older HTTP+SSE transport, a hostile or absent
// server, and TLS with a certificate made here: trusted through
// SSL_CERT_FILE it works, untrusted or for another name it is refused
// with the reason.  What the workbench does with a remote member is not
// here: only the transport.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import https from 'node:https';
import path from 'node:path';
import readline from 'node:readline';
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';
import * as R from './remote-lib.mjs';

const PROBE = process.env.REMOTE_PROBE ? path.resolve(process.env.REMOTE_PROBE) :
    path.join(L.TESTS_DIR, 'remote-probe');
const T = (ms) => ms * L.SLOW;
const children = new Set();
const servers = new Set();	// Raw servers, closed after a failure too.

after(() => {
	R.stopServers();
	for (const c of children)
		c.kill('SIGKILL');
	for (const s of servers) {
		s.close();
		for (const sock of s.socks)
			sock.destroy();
	}
});

const INIT = (v = '2025-06-18') => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'probe', version: '1' } } });
const CALL = (id, name, args, meta) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });

const { startServer } = R;

// The probe on url: send(line), next(pred) for the first line after the
// last one taken that matches, close() for its exit and all it said.
function probe(url, { args = [], env = {} } = {}) {
	const proc = spawn(PROBE, [...args, url], { env: { ...process.env, ...env },
	    stdio: ['pipe', 'pipe', 'pipe'] });
	children.add(proc);
	const lines = [];
	let stderr = '';
	let taken = 0;
	readline.createInterface({ input: proc.stdout }).on('line', (l) => lines.push(l));
	proc.stderr.on('data', (d) => { stderr += d; });
	const exit = L.exitOf(proc);
	return {
		lines,
		send: (s) => proc.stdin.write(`${s}\n`),
		next: async (pred, what = String(pred)) => L.waitFor(() => {
			for (let i = taken; i < lines.length; i++)
				if (typeof pred === 'function' ? pred(lines[i]) : lines[i].includes(pred)) {
					taken = i + 1;
					return lines[i];
				}
			return null;
		}, T(8000), `${what}; probe said:\n${lines.join('\n')}\n${stderr}`),
		message: async (id) => {
			const l = await L.waitFor(() => lines.find((x) => x.startsWith('< ') &&
			    JSON.parse(x.slice(2)).id === id), T(8000), `answer ${id}; probe said:\n${lines.join('\n')}`);
			return JSON.parse(l.slice(2));
		},
		close: async () => {
			proc.stdin.end('close\n');
			const e = await L.withTimeout(exit, T(8000), 'probe exit');
			children.delete(proc);
			return { ...e, lines, stderr };
		}
	};
}

// initialize, the session ready, initialized.
async function begin(p, version = '2025-06-18') {
	p.send(INIT(version));
	const r = await p.message(1);
	assert.equal(r.result.serverInfo.name, 'remote-fixture');
	p.send(`ready ${r.result.protocolVersion}`);
	p.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
	return r;
}

function noNewlines(lines) {
	assert.ok(!lines.some((l) => l.startsWith('BROKEN')), 'a message with a newline');
}

describe('Streamable HTTP', () => {
	test('a session: tools, a call, progress, headers, the GET stream, DELETE', async () => {
		const s = await startServer();
		const p = probe(`http://127.0.0.1:${s.port}/mcp`, { args: ['-H', 'X-Key: secret-value-1'] });
		await begin(p);
		p.send('session');
		assert.match(await p.next('session '), /^session [0-9a-f-]{36}$/);
		p.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
		assert.deepEqual((await p.message(2)).result.tools.map((t) => t.name), ['echo', 'slow', 'seen', 'ask', 'wait']);
		p.send(CALL(3, 'echo', { text: 'hi there' }));
		assert.equal((await p.message(3)).result.content[0].text, 'echo: hi there');
		p.send(CALL(4, 'slow', { steps: 3 }, { progressToken: 'tok' }));
		assert.equal((await p.message(4)).result.content[0].text, 'done 3');
		const progress = p.lines.filter((l) => l.includes('notifications/progress'));
		assert.equal(progress.length, 3);
		p.send(CALL(5, 'seen', {}));
		assert.equal((await p.message(5)).result.content[0].text, 'key: secret-value-1');
		// Several in flight at once, over the pool.
		for (let i = 10; i < 20; i++)
			p.send(CALL(i, 'echo', { text: `n${i}` }));
		for (let i = 10; i < 20; i++)
			assert.equal((await p.message(i)).result.content[0].text, `echo: n${i}`);
		const e = await p.close();
		assert.equal(e.code, 0);
		noNewlines(e.lines);
		assert.ok(!e.stderr.includes('secret-value'), 'a header value was logged');
		const st = await s.stats();
		assert.equal(st.deletes, 1, 'DELETE at the end');
		assert.ok(st.gets >= 1, 'the GET stream was opened');
		s.stop();
	});

	test('JSON answers (enableJsonResponse)', async () => {
		const s = await startServer();
		const p = probe(`http://localhost:${s.port}/mcp-json`);
		await begin(p);
		p.send(CALL(2, 'echo', { text: 'json' }));
		assert.equal((await p.message(2)).result.content[0].text, 'echo: json');
		assert.equal((await p.close()).code, 0);
		s.stop();
	});

	test('a 404 for the session: lost, then a new session on the same remote', async () => {
		const s = await startServer();
		const p = probe(`http://127.0.0.1:${s.port}/mcp`);
		await begin(p);
		p.send('session');
		const first = await p.next('session ');
		await s.forget();
		p.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
		await p.next((l) => l === 'lost', 'lost');
		p.send('session');
		assert.equal(await p.next('session '), 'session none');
		p.send(INIT().replace('"id":1', '"id":7'));
		await p.message(7);
		p.send('session');
		const second = await p.next('session ');
		assert.notEqual(second, first);
		p.send('ready 2025-06-18');
		p.send(CALL(8, 'echo', { text: 'again' }));
		assert.equal((await p.message(8)).result.content[0].text, 'echo: again');
		await p.close();
		s.stop();
	});
});

describe('a 2026-07-28 server (SDK v2, stateless)', () => {
	const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28',
	    'io.modelcontextprotocol/clientCapabilities': {} };
	const req = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method,
	    params: { ...params, _meta: META } });

	// Without Mcp-Method, Mcp-Name and MCP-Protocol-Version from the
	// message the server refuses every request (SEP-2243).
	test('discover, a call, a resource: the headers the message names', async () => {
		const s = await startServer();
		const p = probe(`http://127.0.0.1:${s.port}/v2`);
		p.send(req(1, 'server/discover', {}));
		assert.deepEqual((await p.message(1)).result.supportedVersions, ['2026-07-28']);
		p.send(req(2, 'tools/call', { name: 'echo', arguments: { text: 'modern' } }));
		const r = await p.message(2);
		assert.equal(r.result.content[0].text, 'v2 echo: modern');
		assert.equal(r.result.resultType, 'complete');
		let st = await s.stats();
		assert.equal(st.mcpMethod, 'tools/call');
		assert.equal(st.mcpName, 'echo');
		// A name that is no plain field value goes in Base64: the server
		// decodes it, finds it agrees with the body, and looks it up.
		p.send(req(3, 'resources/read', { uri: 'v2://n\u00f6te ' }));
		assert.match((await p.message(3)).error.message, /Resource not found/);
		st = await s.stats();
		assert.equal(st.mcpName, `=?base64?${Buffer.from('v2://n\u00f6te ').toString('base64')}?=`);
		p.send('session');
		assert.equal(await p.next('session '), 'session none');
		const e = await p.close();
		noNewlines(e.lines);
		assert.equal((await s.stats()).deletes, 0, 'no session, no DELETE');
		s.stop();
	});
});

describe('HTTP+SSE (2024-11-05)', () => {
	test('the endpoint event, then POSTs answered on the stream', async () => {
		const s = await startServer();
		const p = probe(`http://127.0.0.1:${s.port}/sse`, { args: ['-t', 'sse'] });
		p.send(INIT('2024-11-05'));
		assert.equal((await p.message(1)).result.protocolVersion, '2024-11-05');
		p.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
		p.send(CALL(2, 'echo', { text: 'legacy' }));
		assert.equal((await p.message(2)).result.content[0].text, 'echo: legacy');
		p.send(CALL(3, 'slow', { steps: 2 }, { progressToken: 7 }));
		assert.equal((await p.message(3)).result.content[0].text, 'done 2');
		const e = await p.close();
		noNewlines(e.lines);
		assert.equal((await s.stats()).deletes, 0, 'no DELETE in the older transport');
		s.stop();
	});

	test('the stream ends: the remote fails, saying so', async () => {
		const s = await startServer();
		const p = probe(`http://127.0.0.1:${s.port}/sse`, { args: ['-t', 'sse'] });
		p.send(INIT('2024-11-05'));
		await p.message(1);
		s.stop();
		assert.match(await p.next('failed '), /stream of messages ended|connection/);
		await p.close();
	});
});

describe('a hostile or absent server', () => {
	test('a redirect is not followed: the error names where to', async () => {
		const s = await startServer();
		const p = probe(`http://127.0.0.1:${s.port}/redirect`);
		p.send(INIT());
		assert.match(await p.next('refused '), /HTTP 302, redirected to http:\/\/elsewhere\.example\/mcp/);
		await p.close();
		s.stop();
	});

	test('a head too large is refused', async () => {
		const s = await startServer();
		const p = probe(`http://127.0.0.1:${s.port}/huge`);
		p.send(INIT());
		assert.match(await p.next('refused '), /head too large/);
		await p.close();
		s.stop();
	});

	test('no server: failed, with the reason; a server killed mid-session: failed', async () => {
		const s = await startServer();
		const port = s.port;
		const p = probe(`http://127.0.0.1:${port}/mcp`);
		await begin(p);
		p.send(CALL(2, 'echo', { text: 'x' }));
		await p.message(2);
		s.stop();
		// Its stream ends, is opened again, and cannot be: failed.
		assert.match(await p.next('failed '), /Connection refused/);
		p.send(CALL(3, 'echo', { text: 'x' }));
		assert.match(await p.next('send failed'), /Broken pipe/);
		await p.close();
		const q = probe(`http://127.0.0.1:${port}/mcp`);
		q.send(INIT());
		assert.match(await q.next('failed '), /Connection refused/);
		await q.close();
	});

	test('a refusal quotes the JSON-RPC error the server gave', async () => {
		const s = await startServer();
		const p = probe(`http://127.0.0.1:${s.port}/mcp`);
		p.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
		assert.match(await p.next('refused '), /HTTP 400: Bad Request: Server not initialized/);
		await p.close();
		s.stop();
	});

	// A server of raw bytes: answer(socket, request head) for each request.
	// then(socket, body) after, when given.
	async function raw(answer, then) {
		const srv = net.createServer((sock) => {
			let got = '';
			sock.on('data', (d) => {
				got += d.toString('latin1');
				const end = got.indexOf('\r\n\r\n');
				if (end < 0)
					return;
				const len = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? 0);
				if (got.length < end + 4 + len)
					return;
				const head = got.slice(0, end);
				const body = got.slice(end + 4, end + 4 + len);
				got = got.slice(end + 4 + len);
				answer(sock, head);
				if (then !== undefined)
					then(sock, body);
			});
			sock.on('error', () => {});
		});
		srv.socks = new Set();
		srv.on('connection', (sock) => {
			srv.socks.add(sock);
			sock.on('close', () => srv.socks.delete(sock));
		});
		servers.add(srv);
		await new Promise((r) => srv.listen(0, '127.0.0.1', r));
		return { port: srv.address().port, close: () => srv.close() };
	}

	test('hostile framing: a body too large, a bad chunk, a bad session id', async () => {
		const big = await raw((sock) => {
			sock.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n' +
			    `Content-Length: ${17 * 1024 * 1024}\r\n\r\n`);
			sock.write(Buffer.alloc(17 * 1024 * 1024, 0x20));
		});
		const chunk = await raw((sock) => sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n' +
		    'Content-Type: application/json\r\n\r\nzz\r\n'));
		const sid = await raw((sock) => sock.write('HTTP/1.1 200 OK\r\nMcp-Session-Id: a b\r\n' +
		    'Content-Length: 0\r\n\r\n'));
		const event = await raw((sock) => {
			sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ');
			sock.write(Buffer.alloc(17 * 1024 * 1024, 0x61));
			sock.end('\n\n');
		});
		for (const [srv, re] of [[big, /a response body of more than 16777216 bytes/],
		    [chunk, /a bad chunk size/], [sid, /a bad Mcp-Session-Id/],
		    [event, /answer was too large/]]) {
			const p = probe(`http://127.0.0.1:${srv.port}/mcp`);
			p.send(INIT());
			assert.match(await p.next('refused '), re);
			const e = await p.close();
			assert.equal(e.code, 0);
			srv.close();
		}
	});

	test('a head that stalls; a DELETE never answered ends the remote anyway', async () => {
		const stall = await raw((sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Type: appl'));
		let p = probe(`http://127.0.0.1:${stall.port}/mcp`, { args: ['-s', '300'] });
		p.send(INIT());
		assert.match(await p.next('refused '), /the response stalled/);
		await p.close();
		stall.close();
		let deletes = 0;
		const mute = await raw((sock, head) => {
			if (head.startsWith('DELETE')) {
				deletes++;
				return;		// Never answered.
			}
			const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} });
			sock.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n' +
			    `Content-Length: ${body.length}\r\n\r\n${body}`);
		});
		p = probe(`http://127.0.0.1:${mute.port}/mcp`);
		p.send(INIT());
		await p.message(1);
		const t0 = Date.now();
		const e = await p.close();
		assert.equal(e.code, 0);
		assert.equal(deletes, 1);
		assert.ok(Date.now() - t0 < T(4000), `closed after ${Date.now() - t0} ms`);
		mute.close();
	});

	test('HTTP+SSE: an endpoint of another origin, or none, fails the remote', async () => {
		const other = await raw((sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n' +
		    'event: endpoint\ndata: http://evil.example/messages\n\n'));
		const none = await raw((sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n' +
		    ': waiting\n\n'));
		let p = probe(`http://127.0.0.1:${other.port}/sse`, { args: ['-t', 'sse'] });
		assert.match(await p.next('failed '), /another origin/);
		await p.close();
		p = probe(`http://127.0.0.1:${none.port}/sse`, { args: ['-t', 'sse', '-c', '300'] });
		p.send(INIT());
		assert.match(await p.next('failed '), /no endpoint event/);
		await p.close();
		other.close();
		none.close();
	});

	test('a POST stream kept open after its answer gives its connection back', async () => {
		// Each request answered on an event stream that never ends: the
		// pool's four connections would all be held, and the fifth line
		// would wait for ever.
		const srv = await raw((sock) => {
			sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n' +
			    'Transfer-Encoding: chunked\r\n\r\n');
		}, (sock, body) => {
			const id = JSON.parse(body).id;
			const ev = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { n: id } })}\n\n`;
			sock.write(`${Buffer.byteLength(ev).toString(16)}\r\n${ev}\r\n`);
		});
		const p = probe(`http://127.0.0.1:${srv.port}/mcp`);
		for (let i = 1; i <= 6; i++)
			p.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
		for (let i = 1; i <= 6; i++)
			assert.equal((await p.message(i)).result.n, i);
		await p.close();
		srv.close();
	});

	test('an IPv6 literal', async (t) => {
		const srv = net.createServer((sock) => sock.on('data', () => sock.end('HTTP/1.1 200 OK\r\n' +
		    'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}')));
		const ok = await new Promise((r) => {
			srv.once('error', () => r(false));
			srv.listen(0, '::1', () => r(true));
		});
		if (!ok) {
			t.skip('no IPv6 loopback here');
			return;
		}
		const p = probe(`http://[::1]:${srv.address().port}/mcp`);
		p.send(INIT());
		assert.equal(await p.next('< '), '< {}');
		await p.close();
		srv.close();
	});

	test('bad URLs and headers are refused at open, naming no value', async () => {
		for (const [url, args, re] of [
			['ftp://h/x', [], /only http/],
			['http://user:pw@h/x', [], /user information/],
			['http://127.0.0.1:1/x', ['-H', 'Host: evil'], /transport's to set/],
			['http://127.0.0.1:1/x', ['-H', 'X-Bad: a\r\nX-Evil: 1'], /control character/]
		]) {
			const r = spawnSync(PROBE, [...args, url], { input: '', encoding: 'utf8' });
			assert.equal(r.status, 2, url);
			assert.match(r.stdout, re);
			assert.ok(!r.stdout.includes('pw') && !r.stdout.includes('X-Evil'));
		}
	});
});

describe('https', () => {
	const dir = L.makeTempDir('wb-remote-tls-');
	// A certificate for localhost (a name only), one for another name.
	const cert = (name, cn) => R.cert(dir, name, cn);

	test('trusted through SSL_CERT_FILE: a session, SNI sent; untrusted or another name: refused',
	    { skip: !R.haveOpenssl && 'no openssl' }, async () => {
		const [pem, key] = cert('localhost', 'localhost');
		const [wpem, wkey] = cert('wrong', 'wrong.example');
		const s = await startServer('--tls', pem, key);
		const w = await startServer('--tls', wpem, wkey);
		const trust = { SSL_CERT_FILE: pem, SSL_CERT_DIR: dir };

		const p = probe(`https://localhost:${s.port}/mcp`, { env: trust });
		await begin(p);
		p.send(CALL(2, 'echo', { text: 'over tls' }));
		assert.equal((await p.message(2)).result.content[0].text, 'echo: over tls');
		assert.equal((await p.close()).code, 0);
		const st = await new Promise((resolve, reject) => {
			https.get({ host: '127.0.0.1', servername: 'localhost', port: s.port,
			    path: '/admin/stats', ca: fs.readFileSync(pem) }, (res) => {
				let b = '';
				res.on('data', (d) => { b += d; });
				res.on('end', () => resolve(JSON.parse(b)));
			}).on('error', reject);
		});
		assert.equal(st.sni, 'localhost', 'SNI names the host');
		assert.equal(st.deletes, 1);
		const legacy = probe(`https://localhost:${s.port}/sse`, { args: ['-t', 'sse'], env: trust });
		legacy.send(INIT('2024-11-05'));
		await legacy.message(1);
		await legacy.close();

		// Not trusted: the system's store does not know it.
		const u = probe(`https://localhost:${s.port}/mcp`, { env: { SSL_CERT_FILE: '/nonexistent', SSL_CERT_DIR: '/nonexistent' } });
		u.send(INIT());
		assert.match(await u.next('failed '), /certificate is refused: self-signed certificate/);
		await u.close();

		// Trusted, but for a name other than the URL's (hostname checks).
		const m = probe(`https://127.0.0.1:${s.port}/mcp`, { env: trust });
		m.send(INIT());
		assert.match(await m.next('failed '), /certificate is refused: IP address mismatch/);
		await m.close();
		const n = probe(`https://localhost:${w.port}/mcp`, { env: { SSL_CERT_FILE: wpem, SSL_CERT_DIR: dir } });
		n.send(INIT());
		assert.match(await n.next('failed '), /certificate is refused: [Hh]ostname mismatch/);
		await n.close();
		s.stop();
		w.stop();
	});

	// A probe of another build (REMOTE_PROBE, sanitizers) links more.
	test('the program needs libc alone: libssl is opened at run time',
	    { skip: process.env.REMOTE_PROBE !== undefined && 'another build' }, () => {
		const r = spawnSync('readelf', ['-d', PROBE], { encoding: 'utf8' });
		if (r.status !== 0)
			return;
		const needed = r.stdout.split('\n').filter((l) => l.includes('(NEEDED)'));
		assert.ok(needed.length >= 1);
		assert.ok(needed.every((l) => /libc\.so|ld-linux|libc\.musl/.test(l)), needed.join('\n'));
	});
});
