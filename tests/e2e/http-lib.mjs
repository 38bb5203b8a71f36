// Helpers for the suites of the workbench serving Streamable HTTP
// (--listen): a listening workbench, and SDK clients over HTTP (SDK 1.x,
// and the v2 client pinned to 2026-07-28, 'auto' or legacy).

import { spawn } from 'node:child_process';
import net from 'node:net';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';
import * as L from './lib.mjs';

export const MODERN = '2026-07-28';

// Start `mcp-workbench -c CONFIG --listen ADDR` (ADDR 127.0.0.1:0 unless
// opts.listen); resolves once it says where it serves.  opts: args, env
// (added to ours), listen (null: none on the command line).
export function startListener(config, opts = {}) {
	const configPath = typeof config === 'string' ? config : L.writeConfig(config);
	const listen = opts.listen === undefined ? '127.0.0.1:0' : opts.listen;
	const args = ['-c', configPath, ...(listen !== null ? ['--listen', listen] : []), ...(opts.args ?? [])];
	const proc = spawn(L.WORKBENCH, args, {
		stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'],
		env: { ...L.workbenchEnv(), ...opts.env },
	});
	L.adopt(proc);
	let stderr = '';
	let stdout = '';
	proc.stdout.on('data', (d) => { stdout += d; });
	const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
	return new Promise((resolve, reject) => {
		proc.stderr.on('data', (d) => {
			stderr += d;
			L.notePids(stderr.slice(-8192));
			const m = stderr.match(/serving MCP over Streamable HTTP at (http:\/\/(.*):(\d+)\/mcp)\n/);
			if (m && !wb.url) {
				wb.url = m[1];
				wb.host = m[2];
				wb.port = Number(m[3]);
				resolve(wb);
			}
		});
		const wb = {
			proc,
			pid: proc.pid,
			exited,
			configPath,
			url: null,
			get stderr() { return stderr; },
			get stdout() { return stdout; },
			async waitStderr(re, ms = 10000 * L.SLOW) {
				return L.waitFor(() => re.test(stderr), ms, `stderr matching ${re}\nstderr so far:\n${stderr}`);
			},
			starts(re = /fixture-server: started pid=(\d+)/g) {
				return [...stderr.matchAll(re)].length;
			},
			async stop() {
				proc.kill('SIGTERM');
				const r = await L.withTimeout(exited, 6000 * L.SLOW, 'exit after SIGTERM');
				L.notePids(stderr);
				return r;
			},
		};
		exited.then((r) => {
			if (!wb.url)
				reject(Object.assign(new Error(`workbench exited ${r.code} before listening:\n${stderr}`), { exit: r, stderr }));
		});
	});
}

export async function withListener(config, opts, fn) {
	const wb = await startListener(config, opts);
	try {
		return await fn(wb);
	} finally {
		if (wb.proc.exitCode === null && wb.proc.signalCode === null)
			await wb.stop().catch(() => L.killWorkbench(wb.pid, 'escalation: no exit after SIGTERM'));
	}
}

function tools(client, callTool) {
	return {
		client,
		callTool,
		openToolbox(name, options) {
			return callTool('open_toolbox', { toolbox_name: name }, options);
		},
		useTool(toolbox, server, name, args, options) {
			const a = { tool: { toolbox, server, name } };
			if (args !== undefined)
				a.arguments = args;
			return callTool('use_tool', a, options);
		},
	};
}

// An SDK 1.x client over StreamableHTTPClientTransport.  opts:
// capabilities, headers (sent with every request), handlers {schema: fn}.
export async function client1(url, opts = {}) {
	const transport = new Transport1(new URL(url), { requestInit: { headers: opts.headers ?? {} } });
	const client = new Client1({ name: 'wb-http-1', version: '1.0.0' }, { capabilities: opts.capabilities ?? {} });
	for (const [schema, fn] of opts.handlers ?? [])
		client.setRequestHandler(schema, fn);
	await L.withTimeout(client.connect(transport), 15000, 'SDK 1.x connect over HTTP');
	return {
		...tools(client, (name, args, options) => client.callTool({ name, arguments: args }, undefined, options)),
		transport,
		get sessionId() { return transport.sessionId; },
		async close() { await L.withTimeout(client.close(), 6000, 'SDK 1.x close').catch(() => {}); },
	};
}

// A v2 client over its StreamableHTTPClientTransport: mode 'pin'
// (2026-07-28 only), 'auto' or 'legacy'.
export async function client2(url, mode, opts = {}) {
	const transport = new Transport2(new URL(url), { requestInit: { headers: opts.headers ?? {} } });
	const client = new Client2({ name: 'wb-http-2', version: '2.0.0' }, {
		versionNegotiation: { mode: mode === 'pin' ? { pin: MODERN } : mode },
		capabilities: opts.capabilities ?? {},
	});
	for (const [method, fn] of Object.entries(opts.handlers ?? {}))
		client.setRequestHandler(method, fn);
	await L.withTimeout(client.connect(transport), 15000, `v2 connect over HTTP (${mode})`);
	return {
		...tools(client, (name, args, options) => client.callTool({ name, arguments: args }, options)),
		transport,
		get sessionId() { return transport.sessionId; },
		async close() { await L.withTimeout(client.close(), 6000, 'v2 close').catch(() => {}); },
	};
}

export const JSON_HEADERS = {
	'content-type': 'application/json',
	accept: 'application/json, text/event-stream',
};

export function rpc(id, method, params) {
	return JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
}

export async function post(url, body, headers = {}) {
	const res = await fetch(url, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body });
	return { status: res.status, headers: res.headers, text: await res.text() };
}

// Raw bytes on a socket: resolves with all that came back once the server
// closed it (never ended from here).
export function rawExchange(port, bytes, host = '127.0.0.1') {
	return new Promise((resolve, reject) => {
		const sock = net.connect(port, host);
		let got = Buffer.alloc(0);
		sock.on('connect', () => sock.write(bytes));
		sock.on('data', (d) => { got = Buffer.concat([got, d]); });
		sock.on('error', reject);
		sock.on('close', () => resolve(got.toString('latin1')));
	});
}

// A 2025 session by hand: initialize (capabilities as given), initialized;
// post(body) returns what H.post does, with the session's headers.
export async function rawSession(url, opts = {}) {
	const init = rpc(0, 'initialize', { protocolVersion: '2025-11-25', capabilities: opts.capabilities ?? {}, clientInfo: { name: 'raw', version: '1' } });
	const r = await post(url, init, opts.headers);
	if (r.status !== 200)
		throw new Error(`initialize: ${r.status} ${r.text}`);
	const sid = r.headers.get('mcp-session-id');
	const hdr = { ...opts.headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
	const s = {
		sid,
		hdr,
		post: (body, more = {}) => post(url, body, { ...hdr, ...more }),
		call: (id, name, args) => s.post(rpc(id, 'tools/call', { name, arguments: args })),
	};
	await s.post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
	return s;
}

// A POST whose answer is read as it comes: events() yields each SSE
// event's data parsed (or the JSON answer once), until the stream ends.
export async function streamingPost(url, body, headers = {}) {
	const res = await fetch(url, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body });
	const reader = res.body.getReader();
	const dec = new TextDecoder();
	let text = '';
	return {
		status: res.status,
		headers: res.headers,
		async *events() {
			if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
				for (;;) {
					const { done, value } = await reader.read();
					if (done)
						break;
					text += dec.decode(value, { stream: true });
				}
				if (text !== '')
					yield JSON.parse(text);
				return;
			}
			for (;;) {
				let end;
				while ((end = text.indexOf('\n\n')) >= 0) {
					const ev = text.slice(0, end);
					text = text.slice(end + 2);
					const data = ev.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
					if (data !== '')
						yield JSON.parse(data);
				}
				const { done, value } = await reader.read();
				if (done)
					return;
				text += dec.decode(value, { stream: true });
			}
		},
	};
}

// Start a proxy process (its own process group); resolves once its port
// takes connections: {stderr, stop()}.
export async function startProxy(cmd, args, port) {
	const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
	let err = '';
	p.stderr.on('data', (d) => { err += d; });
	await L.waitFor(() => new Promise((resolve) => {
		const s = net.connect(port, '127.0.0.1');
		s.on('connect', () => { s.destroy(); resolve(true); });
		s.on('error', () => resolve(false));
	}), 20000, `${cmd} listening:\n${err}`);
	return {
		get stderr() { return err; },
		stop() {
			try {
				process.kill(-p.pid, 'SIGKILL');
			} catch {}
		},
	};
}

// A loopback port free now (for a program that takes its port as given).
export function freePort() {
	return new Promise((resolve) => {
		const s = net.createServer().listen(0, '127.0.0.1', () => {
			const { port } = s.address();
			s.close(() => resolve(port));
		});
	});
}
