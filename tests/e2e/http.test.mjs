// The HTTP layer (http.c) behind tests/http-echo: the SDKs' Streamable
// HTTP transports (SDK 1.x and the v2 client) against it, and the limits
// and rules with real sockets.  Every wait is for an event (a response, a
// close, a line), bounded by the test's timeout.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';
import * as L from './lib.mjs';

const ECHO = process.env.HTTP_ECHO
	? path.resolve(process.env.HTTP_ECHO)
	: path.join(L.TESTS_DIR, 'http-echo');
const T = { timeout: 60000 };
const live = new Set();

after(() => {
	for (const p of live)
		p.kill('SIGKILL');
	L.cleanup();
});

// Start http-echo with args; resolves once it says where it listens.
function startEcho(...args) {
	const proc = spawn(ECHO, args, { stdio: ['ignore', 'pipe', 'pipe'] });
	live.add(proc);
	proc.on('exit', () => live.delete(proc));
	let stderr = '';
	proc.stderr.on('data', (d) => { stderr += d; });
	return new Promise((resolve, reject) => {
		let out = '';
		proc.stdout.on('data', (d) => {
			out += d;
			const m = out.match(/listening on (\d+)\n/);
			if (m) {
				const port = Number(m[1]);
				resolve({ proc, port, url: `http://127.0.0.1:${port}/mcp`,
					get stderr() { return stderr; },
					stop() { proc.kill('SIGTERM'); } });
			}
		});
		proc.on('exit', (code) => reject(new Error(`http-echo exited ${code}: ${stderr}`)));
	});
}

const JSON_HEADERS = {
	'content-type': 'application/json',
	accept: 'application/json, text/event-stream',
};

function rpc(id, method, params) {
	return JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
}

async function post(url, body, headers = {}) {
	const res = await fetch(url, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body });
	return { status: res.status, headers: res.headers, text: await res.text() };
}

// Raw bytes on a socket: resolves with all that came back once the server
// closed it.
function rawExchange(port, bytes) {
	return new Promise((resolve, reject) => {
		const sock = net.connect(port, '127.0.0.1');
		let got = Buffer.alloc(0);
		// The socket is never ended from here: the server closes it.
		sock.on('connect', () => sock.write(bytes));
		sock.on('data', (d) => { got = Buffer.concat([got, d]); });
		sock.on('error', reject);
		sock.on('close', () => resolve(got.toString('latin1')));
	});
}

const Passthrough = z.object({}).passthrough();

// What both SDK generations do against the echo: initialize, plain and
// SSE-framed answers, an event on the GET stream, the session's end.
async function sdkRound(client, transport, onLog) {
	await L.withTimeout(client.connect(transport), 15000, 'connect');
	assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
	assert.deepEqual(await client.ping(), {});
	const r = await client.request({ method: 'echo/plain', params: { a: 1, s: 'é\u2028' } }, Passthrough);
	assert.deepEqual(r, { method: 'echo/plain', echo: { a: 1, s: 'é\u2028' } });
	// The answer as an SSE stream, a notification before it.
	const logs = [];
	onLog((n) => logs.push(n.params.data));
	const s = await client.request({ method: 'echo/sse', params: { b: 2 } }, Passthrough);
	assert.deepEqual(s, { method: 'echo/sse', echo: { b: 2 } });
	assert.ok(logs.includes('before the answer'), `logs: ${JSON.stringify(logs)}`);
	// The GET stream opens after notifications/initialized: push until
	// the echo says the event went on it, then the event arrives there.
	for (let i = 0; ; i++) {
		const p = await client.request({ method: 'push', params: { hello: 'stream', i } }, Passthrough);
		assert.equal(p.method, 'push');
		if (p.delivered)
			break;
		await L.waitFor(() => true, 10);
		assert.ok(i < 500, 'the GET stream never opened');
	}
	await L.waitFor(() => logs.some((d) => d && d.hello === 'stream'), 10000, 'the GET stream event');
	const id = transport.sessionId;
	await transport.terminateSession();
	const gone = await post(transport._url.href, rpc(9, 'ping'), { 'mcp-session-id': id });
	assert.equal(gone.status, 404);
	assert.equal(JSON.parse(gone.text).error.code, -32001);
	await client.close();
}

describe('http: the SDK transports', () => {
	test('SDK 1.x StreamableHTTPClientTransport: initialize, JSON and SSE answers, a GET stream event, DELETE', T, async () => {
		const e = await startEcho();
		const transport = new Transport1(new URL(e.url));
		const client = new Client1({ name: 'http-e2e-1', version: '1.0.0' });
		await sdkRound(client, transport, (fn) =>
			client.setNotificationHandler(LoggingMessageNotificationSchema, fn));
		e.stop();
	});

	test('SDK v2 StreamableHTTPClientTransport: the same', T, async () => {
		const e = await startEcho();
		const transport = new Transport2(new URL(e.url));
		const client = new Client2({ name: 'http-e2e-2', version: '2.0.0' });
		await sdkRound(client, transport, (fn) =>
			client.setNotificationHandler('notifications/message', fn));
		e.stop();
	});

	test('a token: 401 without it, the SDK client with it', T, async () => {
		const e = await startEcho('--token', 's3cret-token');
		const r = await post(e.url, rpc(1, 'ping'));
		assert.equal(r.status, 401);
		assert.equal(r.headers.get('www-authenticate'), 'Bearer');
		assert.equal((await post(e.url, rpc(1, 'ping'), { authorization: 'Bearer wrong' })).status, 401);
		const transport = new Transport1(new URL(e.url), {
			requestInit: { headers: { Authorization: 'Bearer s3cret-token' } },
		});
		const client = new Client1({ name: 'http-e2e-tok', version: '1.0.0' });
		await L.withTimeout(client.connect(transport), 15000, 'connect');
		assert.deepEqual(await client.ping(), {});
		await client.close();
		e.stop();
	});

	test('a non-loopback address without a token: refused at startup, with how to set one', T, () => {
		const r = spawnSync(ECHO, ['--listen', '0.0.0.0:0'], { encoding: 'utf8', timeout: 10000 });
		assert.equal(r.status, 1);
		assert.match(r.stderr, /0\.0\.0\.0:0 is not a loopback address: listening there needs a token\..*"httpToken"/);
		const u = spawnSync(ECHO, ['--listen', 'example.com:80'], { encoding: 'utf8', timeout: 10000 });
		assert.match(u.stderr, /not a numeric IPv4 address \(names are not looked up/);
	});
});

describe('http: framing and rules on the wire', () => {
	test('keep-alive: several POSTs on one TCP connection', T, async () => {
		const e = await startEcho();
		const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
		const sockets = new Set();
		const reused = [];
		for (let i = 0; i < 5; i++) {
			const body = rpc(i, 'echo/ka', { i });
			const res = await new Promise((resolve, reject) => {
				const req = http.request(e.url, { method: 'POST', agent, headers: JSON_HEADERS }, (res) => {
					let t = '';
					res.on('data', (d) => { t += d; });
					res.on('end', () => resolve({ status: res.statusCode, text: t }));
				});
				req.on('socket', (s) => sockets.add(s));
				req.on('error', reject);
				req.end(body);
				reused.push(req);
			});
			assert.equal(res.status, 200);
			assert.deepEqual(JSON.parse(res.text).result.echo, { i });
		}
		assert.equal(sockets.size, 1);
		assert.deepEqual(reused.map((r) => r.reusedSocket), [false, true, true, true, true]);
		agent.destroy();
		e.stop();
	});

	test('a chunked POST body is read (curl and Go send them)', T, async () => {
		const e = await startEcho();
		const res = await new Promise((resolve, reject) => {
			const req = http.request(e.url, { method: 'POST', headers: JSON_HEADERS }, (res) => {
				let t = '';
				res.on('data', (d) => { t += d; });
				res.on('end', () => resolve({ status: res.statusCode, text: t }));
			});
			req.on('error', reject);
			const body = rpc(5, 'echo/chunked', { x: 'y'.repeat(5000) });
			req.write(body.slice(0, 10));
			req.write(body.slice(10, 3000));
			req.end(body.slice(3000));
		});
		assert.equal(res.status, 200);
		assert.equal(JSON.parse(res.text).result.echo.x.length, 5000);
		e.stop();
	});

	test('413 for a body over maxMessageBytes, 431 for fields over 16 KiB; the server goes on', T, async () => {
		const e = await startEcho('--max-body', '4096');
		const big = rpc(1, 'echo/big', { pad: 'x'.repeat(10000) });
		const r = await post(e.url, big);
		assert.equal(r.status, 413);
		assert.match(JSON.parse(r.text).error.message, /maxMessageBytes/);
		// Chunked: found past the cap while reading.
		const c = await new Promise((resolve, reject) => {
			const req = http.request(e.url, { method: 'POST', headers: JSON_HEADERS }, (res) => {
				res.resume();
				res.on('end', () => resolve(res.statusCode));
			});
			req.on('error', (err) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? null : reject(err)));
			req.write(big.slice(0, 3000));
			req.end(big.slice(3000));
		});
		assert.equal(c, 413);
		const h = await post(e.url, rpc(2, 'ping'), { 'x-padding': 'p'.repeat(17 * 1024) });
		assert.equal(h.status, 431);
		assert.equal((await post(e.url, rpc(3, 'ping'))).status, 200);
		e.stop();
	});

	test('Origin: loopback and allowed origins pass, others 403; a rebound Host 403', T, async () => {
		const e = await startEcho('--origin', 'https://app.example.com');
		const ping = rpc(1, 'ping');
		assert.equal((await post(e.url, ping, { origin: 'http://evil.example' })).status, 403);
		assert.equal((await post(e.url, ping, { origin: 'http://localhost:6274' })).status, 200);
		assert.equal((await post(e.url, ping, { origin: 'http://[::1]:1' })).status, 200);
		assert.equal((await post(e.url, ping, { origin: 'https://app.example.com' })).status, 200);
		assert.equal((await post(e.url, ping, { origin: 'null' })).status, 403);
		const rebound = await rawExchange(e.port, `POST /mcp HTTP/1.1\r\nHost: attacker.example:${e.port}\r\n` +
			`Content-Type: application/json\r\nContent-Length: ${ping.length}\r\n\r\n${ping}`);
		assert.match(rebound, /^HTTP\/1\.1 403 /);
		e.stop();
	});

	test('garbage gets 400 and the connection is closed', T, async () => {
		const e = await startEcho();
		const tls = await rawExchange(e.port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc]));
		assert.match(tls, /^HTTP\/1\.1 400 Bad Request\r\n/);
		const text = await rawExchange(e.port, 'hello world\r\nthis is not http\r\n\r\n');
		assert.match(text, /^HTTP\/1\.1 400 /);
		assert.match(text, /Connection: close\r\n/);
		const smuggle = await rawExchange(e.port, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n' +
			'Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n0\r\n\r\n');
		assert.match(smuggle, /^HTTP\/1\.1 400 /);
		assert.equal((await post(e.url, rpc(1, 'ping'))).status, 200);
		e.stop();
	});

	test('a slow-loris connection is closed after the timeout while a real client keeps working', T, async () => {
		const e = await startEcho('--request-ms', '1500');
		const client = new Client1({ name: 'http-e2e-busy', version: '1.0.0' });
		await client.connect(new Transport1(new URL(e.url)));
		const started = Date.now();
		let closed = false;
		const slow = rawExchange(e.port, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl')
			.then((got) => { closed = true; return got; });
		let calls = 0;
		while (!closed) {
			const r = await client.request({ method: 'echo/busy', params: { calls } }, Passthrough);
			assert.equal(r.echo.calls, calls);
			calls++;
		}
		const got = await slow;
		assert.match(got, /^HTTP\/1\.1 408 Request Timeout\r\n/);
		assert.ok(Date.now() - started >= 1400, 'closed before its time');
		assert.ok(calls > 3, `only ${calls} calls while the slow one waited`);
		await client.close();
		e.stop();
	});

	test('64 connections busy, a 65th waits in the backlog, unrefused, and is served once one closes', T, async () => {
		const e = await startEcho('--request-ms', '60000');
		const socks = [];
		for (let i = 0; i < 64; i++) {
			const s = net.connect(e.port, '127.0.0.1');
			s.on('error', () => {});
			socks.push(s);
			await new Promise((r) => s.on('connect', r));
		}
		// Each of the 64 is taken (a request on each proves it).
		await Promise.all(socks.map((s, i) => new Promise((resolve) => {
			const body = rpc(i, 'echo/hold', { i });
			s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
			s.once('data', (d) => { assert.match(d.toString(), /^HTTP\/1\.1 200 /); resolve(); });
		})));
		const waiting = post(e.url, rpc(99, 'ping'));
		socks.pop().destroy();
		assert.equal((await waiting).status, 200);
		for (const s of socks)
			s.destroy();
		e.stop();
	});

	test('a client that does not read its GET stream is closed past its limit; the others are not held up', T, async () => {
		const e = await startEcho('--out-limit', String(2 * 1024 * 1024));
		// A session whose GET stream is read by the SDK client.
		const reader = new Client1({ name: 'http-e2e-reader', version: '1.0.0' });
		const rt = new Transport1(new URL(e.url));
		let events = 0;
		reader.setNotificationHandler(LoggingMessageNotificationSchema, () => { events++; });
		await reader.connect(rt);
		// A session whose GET stream is never read.
		const init = await post(e.url, rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }));
		const sid = init.headers.get('mcp-session-id');
		const stuck = net.connect(e.port, '127.0.0.1');
		stuck.on('error', () => {});
		await new Promise((r) => stuck.on('connect', r));
		stuck.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\n\r\n`);
		await new Promise((r) => stuck.once('data', r));
		stuck.pause();
		// Flood both sessions' streams, 256 KiB a call; a third client pings.
		const pinger = new Client1({ name: 'http-e2e-pinger', version: '1.0.0' });
		await pinger.connect(new Transport1(new URL(e.url)));
		await L.waitFor(async () => (await reader.request({ method: 'push', params: {} }, Passthrough)).delivered, 10000, 'reader GET stream');
		let gone = false;
		let floods = 0;
		while (!gone) {
			const f = JSON.parse((await post(e.url, rpc(2, 'flood', { count: 4, size: 65536 }), { 'mcp-session-id': sid })).text).result;
			gone = f.gone;
			const g = await reader.request({ method: 'flood', params: { count: 4, size: 65536 } }, Passthrough);
			assert.equal(g.gone, false, 'the reading client was closed');
			assert.deepEqual(await pinger.ping(), {});
			floods++;
			assert.ok(floods < 400, 'the stuck stream was never closed');
		}
		await L.waitFor(() => events >= floods * 4, 20000, 'the reader\'s events');
		stuck.destroy();
		await reader.close();
		await pinger.close();
		e.stop();
	});
});
