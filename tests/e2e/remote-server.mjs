#!/usr/bin/env node
// A remote MCP server of SDK 1.x for the remote client's tests
// (remote.test.mjs): Streamable HTTP on /mcp (a session per
// initialize; /mcp-json answers with JSON bodies instead of event
// streams) and the older HTTP+SSE on /sse (POSTs to /messages), over
// http, or https with --tls CERT KEY.  Prints "listening PORT" once it
// listens.
//
// /v2 is an SDK v2 server of 2026-07-28 alone (stateless; echo and a
// resource v2://note).
//
// Tools: echo {text} answers "echo: TEXT"; slow {steps} sends progress
// notifications first (an event stream); seen answers the X-Key header
// its request came with.  /admin/forget drops every Streamable session
// (the next request with its id gets a 404); /admin/stats answers
// {deletes, gets, sni, mcpMethod, mcpName, cancelled, inits}; /redirect
// answers 302; /huge answers a head of 64 KiB.  ask {question} elicits
// an answer from the client; wait {ms} waits, and counts a cancellation
// (stats.cancelled).  --port N listens on N (a server started again).
//
// /mcp-x and /sse-x serve more (remote-relay.test.mjs): sample {prompt}
// asks the client for a sampling/createMessage, roots lists the
// client's roots, log {text} sends notifications/message (level info),
// big {bytes} answers a text that long; a prompt greet {name} (its
// name completed from Alice, Albert, Bob), a resource remote://note
// and a template remote://item/{id} (id completed from 1, 12, 2).  A
// call of stall, on any path, is answered with a JSON head and half a
// body that never ends.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { McpServer as V2Server, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { z } from 'zod';

const args = process.argv.slice(2);
const portAt = args.indexOf('--port');
const port = portAt >= 0 ? Number(args.splice(portAt, 2)[1]) : 0;
const tls = args[0] === '--tls' ? { cert: fs.readFileSync(args[1]), key: fs.readFileSync(args[2]) } : null;
const streams = new Map();	// Streamable sessions: id -> transport
const legacy = new Map();	// HTTP+SSE sessions: id -> transport
const stats = { deletes: 0, gets: 0, sni: null, mcpMethod: null, mcpName: null, cancelled: 0, inits: 0 };
let lastKey = null;

function mcp(more = false) {
	const s = new McpServer({ name: 'remote-fixture', version: '1.0.0' },
	    more ? { capabilities: { logging: {} } } : undefined);
	if (more)
		extras(s);
	s.registerTool('echo', { description: 'Echoes text.', inputSchema: { text: z.string() } },
	    async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }));
	s.registerTool('slow', { description: 'Reports progress.', inputSchema: { steps: z.number() } },
	    async ({ steps }, extra) => {
		const token = extra._meta?.progressToken;
		for (let i = 1; i <= steps; i++) {
			if (token !== undefined)
				await extra.sendNotification({ method: 'notifications/progress',
				    params: { progressToken: token, progress: i, total: steps } });
			await new Promise((r) => setTimeout(r, 20));
		}
		return { content: [{ type: 'text', text: `done ${steps}` }] };
	});
	s.registerTool('seen', { description: 'The X-Key header seen.', inputSchema: {} },
	    async () => ({ content: [{ type: 'text', text: `key: ${lastKey}` }] }));
	s.registerTool('ask', { description: 'Asks the user.', inputSchema: { question: z.string() } },
	    async ({ question }) => {
		const r = await s.server.elicitInput({ message: question,
		    requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } } });
		return { content: [{ type: 'text', text: `${r.action}: ${r.content?.answer}` }] };
	});
	s.registerTool('wait', { description: 'Waits.', inputSchema: { ms: z.number() } },
	    async ({ ms }, extra) => new Promise((resolve) => {
		const t = setTimeout(() => resolve({ content: [{ type: 'text', text: 'waited' }] }), ms);
		extra.signal.addEventListener('abort', () => {
			clearTimeout(t);
			stats.cancelled++;
			resolve({ content: [{ type: 'text', text: 'cancelled' }] });
		});
	}));
	return s;
}

// What /mcp-x and /sse-x serve besides.
function extras(s) {
	const text = (t) => ({ content: [{ type: 'text', text: t }] });
	s.registerTool('sample', { description: 'Asks the client to sample.', inputSchema: { prompt: z.string() } },
	    async ({ prompt }) => {
		const r = await s.server.createMessage({ maxTokens: 20,
		    messages: [{ role: 'user', content: { type: 'text', text: prompt } }] });
		return text(`sampled (${r.model}): ${r.content.text}`);
	});
	s.registerTool('roots', { description: 'Lists the client roots.', inputSchema: {} },
	    async () => text(`roots: ${(await s.server.listRoots()).roots.map((r) => r.uri).join(' ')}`));
	s.registerTool('log', { description: 'Logs a message.', inputSchema: { text: z.string() } },
	    async ({ text: t }, extra) => {
		await s.server.sendLoggingMessage({ level: 'info', logger: 'fixture', data: t }, extra.sessionId);
		await s.server.sendLoggingMessage({ level: 'debug', logger: 'fixture', data: `debug ${t}` }, extra.sessionId);
		return text(`logged ${t}`);
	});
	s.registerTool('big', { description: 'A long answer.', inputSchema: { bytes: z.number() } },
	    async ({ bytes }) => text('x'.repeat(bytes)));
	s.registerTool('stall', { description: 'Never answered (remote-server.mjs stalls it).', inputSchema: {} },
	    async () => text('not stalled'));
	s.registerPrompt('greet', { description: 'Greets someone.',
	    argsSchema: { name: completable(z.string(), (v) => ['Alice', 'Albert', 'Bob'].filter((n) => n.startsWith(v))) } },
	    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }] }));
	s.registerResource('note', 'remote://note', { description: 'A remote note.', mimeType: 'text/plain' },
	    async (uri) => ({ contents: [{ uri: uri.href, text: 'a remote note' }] }));
	s.registerResource('item', new ResourceTemplate('remote://item/{id}', { list: undefined,
	    complete: { id: (v) => ['1', '12', '2'].filter((n) => n.startsWith(v)) } }),
	    { description: 'An item.', mimeType: 'text/plain' },
	    async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `item ${id}` }] }));
}

// SDK v2, modern only (2026-07-28, stateless), behind a web-standard handler.
const v2 = createMcpHandler(() => {
	const s = new V2Server({ name: 'remote-v2', version: '2.0.0' });
	s.registerTool('echo', { description: 'Echoes text.',
	    inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } } }) },
	    async (a) => ({ content: [{ type: 'text', text: `v2 echo: ${a.text}` }] }));
	s.registerResource('note', 'v2://note', { description: 'A note.', mimeType: 'text/plain' },
	    async (uri) => ({ contents: [{ uri: uri.href, text: 'a note' }] }));
	return s;
}, { legacy: 'reject' });

async function modern(req, res) {
	stats.mcpMethod = req.headers['mcp-method'] ?? null;
	stats.mcpName = req.headers['mcp-name'] ?? null;
	const parts = [];
	for await (const p of req)
		parts.push(p);
	const headers = new Headers();
	for (const [k, v] of Object.entries(req.headers))
		headers.set(k, Array.isArray(v) ? v.join(', ') : v);
	const r = await v2.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method,
	    headers, body: req.method === 'POST' ? Buffer.concat(parts) : undefined }));
	res.writeHead(r.status, Object.fromEntries(r.headers));
	if (r.body !== null)
		for await (const chunk of r.body)
			res.write(chunk);
	res.end();
}

async function body(req) {
	const parts = [];
	for await (const p of req)
		parts.push(p);
	const text = Buffer.concat(parts).toString('utf8');
	return text === '' ? undefined : JSON.parse(text);
}

async function streamable(req, res, json, more = false) {
	const sid = req.headers['mcp-session-id'];
	if (req.method === 'DELETE')
		stats.deletes++;
	if (req.method === 'GET')
		stats.gets++;
	const parsed = req.method === 'POST' ? await body(req) : undefined;
	if (parsed?.method === 'initialize')
		stats.inits++;
	if (parsed?.method === 'tools/call' && parsed.params?.name === 'stall') {
		res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
		res.write('{"jsonrpc":"2.0","id":');
		return;
	}
	let t = sid !== undefined ? streams.get(sid) : undefined;
	if (sid !== undefined && t === undefined) {
		res.writeHead(404, { 'content-type': 'application/json' });
		res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
		return;
	}
	if (t === undefined) {
		t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(),
		    enableJsonResponse: json,
		    onsessioninitialized: (id) => streams.set(id, t) });
		t.onclose = () => {
			if (t.sessionId !== undefined)
				streams.delete(t.sessionId);
		};
		await mcp(more).connect(t);
	}
	await t.handleRequest(req, res, parsed);
}

async function handle(req, res) {
	const url = new URL(req.url, 'http://x');
	lastKey = req.headers['x-key'] ?? lastKey;
	if (req.socket.servername)
		stats.sni = req.socket.servername;
	switch (url.pathname) {
	case '/mcp':
		return streamable(req, res, false);
	case '/mcp-json':
		return streamable(req, res, true);
	case '/mcp-x':
		return streamable(req, res, false, true);
	case '/v2':
		return modern(req, res);
	case '/sse':
	case '/sse-x': {
		const t = new SSEServerTransport('/messages', res);
		legacy.set(t.sessionId, t);
		t.onclose = () => legacy.delete(t.sessionId);
		await mcp(url.pathname === '/sse-x').connect(t);
		return;
	}
	case '/messages': {
		const t = legacy.get(url.searchParams.get('sessionId'));
		if (t === undefined) {
			res.writeHead(404).end('no session');
			return;
		}
		return t.handlePostMessage(req, res, await body(req));
	}
	case '/admin/forget':
		streams.clear();
		res.writeHead(200).end('forgotten');
		return;
	case '/admin/stats':
		res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
		return;
	case '/redirect':
		res.writeHead(302, { location: 'http://elsewhere.example/mcp' }).end();
		return;
	case '/huge':
		res.writeHead(200, { 'x-huge': 'a'.repeat(64 * 1024) }).end('{}');
		return;
	default:
		res.writeHead(404).end();
	}
}

const server = tls !== null ? https.createServer(tls, handle) : http.createServer(handle);
server.maxHeaderSize = 128 * 1024;
server.listen(port, '127.0.0.1', () => {
	process.stdout.write(`listening ${server.address().port}\n`);
});
