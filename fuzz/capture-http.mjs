// Capture the requests real clients send, as seeds for fuzz_http:
//	node fuzz/capture-http.mjs   (from the repository, after make)
// Starts tests/http-echo behind a recording TCP relay and runs the SDK 1.x
// and v2 StreamableHTTPClientTransports and node's http (a chunked body)
// through it; each connection's client bytes become one file of
// fuzz/corpus/http/ (named sdk-N: node's fetch pools its connections, so
// one connection may carry both SDKs' requests), after a first byte that fuzz_http reads as its
// settings (0x2f: a 1 MiB body cap, reads of 6 bytes).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const req = createRequire(path.join(root, 'tests', 'package.json'));
const load = async (m) => import(pathToFileURL(req.resolve(m)).href);
const { Client: C1 } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport: T1 } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { Client: C2, StreamableHTTPClientTransport: T2 } = await load('@modelcontextprotocol/client');
const { z } = await load('zod');

const echo = spawn(path.join(root, 'tests', 'http-echo'), [], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((r) => echo.stdout.on('data', (d) => r(Number(/listening on (\d+)/.exec(d)[1]))));
let n = 0;
const out = path.join(root, 'fuzz', 'corpus', 'http');
const relay = net.createServer((c) => {
	const s = net.connect(port, '127.0.0.1');
	const file = path.join(out, `sdk-${++n}`);
	const got = [Buffer.from([0x2f])];
	let written = false;
	c.on('data', (d) => { got.push(d); s.write(d); });
	s.on('data', (d) => c.write(d));
	const done = () => {
		if (!written && got.length > 1)
			fs.writeFileSync(file, Buffer.concat(got));
		written = true;
		c.destroy();
		s.destroy();
	};
	c.on('close', done);
	s.on('close', done);
	c.on('error', () => {});
	s.on('error', () => {});
});
await new Promise((r) => relay.listen(0, '127.0.0.1', r));
const url = new URL(`http://127.0.0.1:${relay.address().port}/mcp`);
const P = z.object({}).passthrough();
for (const [name, C, T] of [['sdk1', C1, T1], ['sdk2', C2, T2]]) {
	const t = new T(url);
	const c = new C({ name: `capture-${name}`, version: '1.0.0' });
	await c.connect(t);
	await c.ping();
	await c.request({ method: 'echo/sse', params: { a: 'é' } }, P);
	await c.request({ method: 'push', params: { b: 1 } }, P);
	await t.terminateSession();
	await c.close();
}
await new Promise((resolve) => {
	const r = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
		res.resume();
		res.on('end', resolve);
	});
	r.write('{"jsonrpc":"2.0",');
	r.end('"id":1,"method":"ping"}');
});
await new Promise((r) => setTimeout(r, 200));	// The relay's last files.
relay.close();
echo.kill();
