#!/usr/bin/env node
// A small stdio MCP server (one JSON-RPC message per line, no SDK) used by
// relay.test.mjs for what neither the C mock nor server-everything can show:
// what a server receives from the workbench (notifications/cancelled with
// its own ids, logging/setLevel, roots/list_changed, _meta), and
// server-to-client requests sent whatever the client declared.
//
// Flags: --no-logging   do not declare the logging capability
//        --name NAME    serverInfo.name
//        --prompts      declare prompts: one, meta, whose message is the
//                       JSON of the params._meta prompts/get received
//
// Tools (arguments in braces):
//   wait {ms}            answers "waited MS" after ms unless cancelled first
//   progress {steps, interval_ms, total?, message?, crash_at?, ignore_cancel?,
//             final_delay_ms?}
//                        sends `steps` notifications/progress with the token
//                        of params._meta.progressToken (on after a
//                        cancellation with ignore_cancel); with crash_at = i it
//                        exits (code 5) right after progress i; answers
//                        (final_delay_ms after the last progress) JSON
//                        {"token": <token received>, "steps": N}
//   meta {}              answers JSON of the params._meta it received
//   ask {method, params?, id_raw?, progress?}
//                        sends a request to the client (id: id_raw as raw
//                        JSON text, default "fx-N") and answers with the raw
//                        line of the response it got; with progress, sends
//                        progress 1 before asking and 2 once answered
//   ask_big {method, bytes}
//                        sends a request to the client and, without waiting
//                        for its answer, answers with a text of bytes 'x'
//   ask_cancel {method, params?, after_ms?}
//                        sends a request, after after_ms (default 100) sends
//                        notifications/cancelled for it, answers JSON {"id"}
//   ask_and_answer {method}
//                        sends a request to the client and answers the call
//                        "gave up on ID" in the same write: the call is over
//                        before anyone can answer the request
//   log {level, data, logger?}
//                        sends notifications/message, answers "logged"
//   log_many {count, level?, data?}
//                        sends count notifications/message in one write,
//                        then answers "logged N"
//   send {lines}         writes each of lines (strings) as it is, answers
//                        "sent N"
//   relist_fails {}      answers "ok", then sends tools/list_changed and
//                        answers the next tools/list with an error
//   received {}          answers JSON of every request and notification the
//                        server received so far: [{method, id?, params?}]
//   crash {code?}        exits with code (default 5), no answer
//   init_roots {}        with --roots-on-init (a roots/list request sent
//                        right after initialize), the raw answer it got

let logging = true;
let rootsOnInit = false;
let prompts = false;
let initRoots = null;	// the raw answer to the roots/list asked at start
let name = 'fixture-server';
for (let i = 2; i < process.argv.length; i++) {
	if (process.argv[i] === '--no-logging')
		logging = false;
	else if (process.argv[i] === '--roots-on-init')
		rootsOnInit = true;
	else if (process.argv[i] === '--prompts')
		prompts = true;
	else if (process.argv[i] === '--name')
		name = process.argv[++i];
}

process.stderr.write(`fixture-server: started pid=${process.pid}\n`);

const received = [];
const waiting = new Map();	// JSON.stringify(id) of a tools/call -> {cancel()}
const asked = new Map();	// JSON.stringify(id) of our request -> resolve(line)
let seq = 0;
let listFails = false;	// the next tools/list answers an error

function out(obj) {
	process.stdout.write((typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n');
}

function answer(id, result) {
	out({ jsonrpc: '2.0', id, result });
}

function text(id, t, isError = false) {
	const r = { content: [{ type: 'text', text: t }] };
	if (isError)
		r.isError = true;
	answer(id, r);
}

const obj = { type: 'object' };
const TOOLS = [
	{ name: 'wait', description: 'Waits ms milliseconds.', inputSchema: obj },
	{ name: 'progress', description: 'Sends progress notifications.', inputSchema: obj },
	{ name: 'meta', description: 'Answers with the _meta it received.', inputSchema: obj },
	{ name: 'ask', description: 'Sends a request to the client.', inputSchema: obj },
	{ name: 'ask_big', description: 'Sends a request to the client and answers at once with bytes x.', inputSchema: obj },
	{ name: 'ask_cancel', description: 'Sends a request to the client, then cancels it.', inputSchema: obj },
	{ name: 'ask_and_answer', description: 'Sends a request to the client and answers at once.', inputSchema: obj },
	{ name: 'log', description: 'Sends notifications/message.', inputSchema: obj },
	{ name: 'log_many', description: 'Sends many notifications/message.', inputSchema: obj },
	{ name: 'send', description: 'Writes the given lines as they are.', inputSchema: obj },
	{ name: 'relist_fails', description: 'Announces a list change, then fails tools/list once.', inputSchema: obj },
	{ name: 'received', description: 'Lists what the server received.', inputSchema: obj },
	{ name: 'init_roots', description: 'The answer to the roots/list asked at start.', inputSchema: obj },
	{ name: 'crash', description: 'Exits without answering.', inputSchema: obj },
];

function callTool(id, params) {
	const a = params?.arguments ?? {};
	const meta = params?._meta;
	switch (params?.name) {
	case 'wait': {
		const key = JSON.stringify(id);
		const t = setTimeout(() => {
			waiting.delete(key);
			text(id, `waited ${a.ms}`);
		}, a.ms ?? 0);
		waiting.set(key, { cancel: () => clearTimeout(t) });
		return;
	}
	case 'progress': {
		const token = meta?.progressToken;
		const steps = a.steps ?? 3;
		let i = 0;
		const key = JSON.stringify(id);
		const tick = () => {
			i++;
			if (token !== undefined) {
				const p = { progressToken: token, progress: i };
				if (a.total !== undefined)
					p.total = a.total;
				if (a.message !== undefined)
					p.message = `${a.message} ${i}`;
				out({ jsonrpc: '2.0', method: 'notifications/progress', params: p });
			}
			if (a.crash_at === i) {
				process.stderr.write('fixture-server: crashing\n');
				process.exit(5);
			}
			if (i < steps) {
				t = setTimeout(tick, a.interval_ms ?? 50);
			} else {
				const done = () => {
					waiting.delete(key);
					text(id, JSON.stringify({ token: token ?? null, steps }));
				};
				if (a.final_delay_ms)
					t = setTimeout(done, a.final_delay_ms);
				else
					done();
			}
		};
		let t = setTimeout(tick, a.interval_ms ?? 50);
		if (!a.ignore_cancel)
			waiting.set(key, { cancel: () => clearTimeout(t) });
		return;
	}
	case 'meta':
		text(id, JSON.stringify(meta ?? null));
		return;
	case 'ask': {
		const rid = a.id_raw ?? JSON.stringify(`fx-${++seq}`);
		const key = JSON.stringify(JSON.parse(rid));
		const token = a.progress ? meta?.progressToken : undefined;
		const progress = (n) => token !== undefined &&
		    out({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: n } });
		progress(1);
		asked.set(key, (line) => {
			progress(2);
			text(id, line);
		});
		const p = a.params === undefined ? '' : `,"params":${JSON.stringify(a.params)}`;
		out(`{"jsonrpc":"2.0","id":${rid},"method":${JSON.stringify(a.method)}${p}}`);
		return;
	}
	case 'ask_big':
		asked.set(JSON.stringify(`fx-${++seq}`), () => {});
		out({ jsonrpc: '2.0', id: `fx-${seq}`, method: a.method });
		text(id, 'x'.repeat(a.bytes ?? 0));
		return;
	case 'ask_cancel': {
		const rid = `fx-${++seq}`;
		asked.set(JSON.stringify(rid), () => {});
		const m = { jsonrpc: '2.0', id: rid, method: a.method };
		if (a.params !== undefined)
			m.params = a.params;
		out(m);
		setTimeout(() => {
			asked.delete(JSON.stringify(rid));
			out({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rid, reason: 'fixture gave up' } });
			text(id, JSON.stringify({ id: rid }));
		}, a.after_ms ?? 100);
		return;
	}
	case 'ask_and_answer': {
		const rid = `fx-${++seq}`;
		out(JSON.stringify({ jsonrpc: '2.0', id: rid, method: a.method }) + '\n' +
		    JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `gave up on ${rid}` }] } }));
		return;
	}
	case 'log': {
		const p = { level: a.level ?? 'info', data: a.data ?? 'fixture log' };
		if (a.logger !== undefined)
			p.logger = a.logger;
		out({ jsonrpc: '2.0', method: 'notifications/message', params: p });
		text(id, 'logged');
		return;
	}
	case 'log_many': {
		const line = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: a.level ?? 'info', data: a.data ?? 'fixture log' } });
		out(Array(a.count ?? 1).fill(line).join('\n'));
		text(id, `logged ${a.count ?? 1}`);
		return;
	}
	case 'send':
		for (const line of a.lines ?? [])
			out(line);
		text(id, `sent ${(a.lines ?? []).length}`);
		return;
	case 'relist_fails':
		listFails = true;
		text(id, 'ok');
		out({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
		return;
	case 'received':
		text(id, JSON.stringify(received));
		return;
	case 'init_roots':
		text(id, initRoots ?? 'none');
		return;
	case 'crash':
		process.stderr.write('fixture-server: crashing\n');
		process.exit(a.code ?? 5);
		return;
	default:
		out({ jsonrpc: '2.0', id, error: { code: -32602, message: `Unknown tool: ${params?.name}` } });
	}
}

function handle(line) {
	let m;
	try {
		m = JSON.parse(line);
	} catch {
		return;
	}
	if (m.method === undefined) {
		// A response to one of our requests.
		const key = JSON.stringify(m.id);
		const r = asked.get(key);
		if (r) {
			asked.delete(key);
			r(line);
		}
		return;
	}
	const rec = { method: m.method };
	if ('id' in m)
		rec.id = m.id;
	if (m.params !== undefined)
		rec.params = m.params;
	if (m.method !== 'tools/call' || m.params?.name !== 'received')
		received.push(rec);
	if (!('id' in m)) {
		if (m.method === 'notifications/cancelled') {
			const key = JSON.stringify(m.params?.requestId);
			const w = waiting.get(key);
			if (w) {
				w.cancel();
				waiting.delete(key);
			}
		}
		return;
	}
	switch (m.method) {
	case 'initialize': {
		const caps = { tools: { listChanged: true } };
		if (logging)
			caps.logging = {};
		if (prompts)
			caps.prompts = {};
		answer(m.id, {
			protocolVersion: m.params?.protocolVersion ?? '2025-11-25',
			capabilities: caps,
			serverInfo: { name, version: '1.0.0' },
		});
		if (rootsOnInit) {
			asked.set(JSON.stringify('init-roots'), (line) => {
				initRoots = line;
			});
			out({ jsonrpc: '2.0', id: 'init-roots', method: 'roots/list' });
		}
		return;
	}
	case 'ping':
	case 'logging/setLevel':
		answer(m.id, {});
		return;
	case 'tools/list':
		if (listFails) {
			listFails = false;
			out({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: 'fixture list failure' } });
			return;
		}
		answer(m.id, { tools: TOOLS });
		return;
	case 'tools/call':
		callTool(m.id, m.params);
		return;
	case 'prompts/list':
		answer(m.id, { prompts: prompts ? [{ name: 'meta', description: 'The _meta of prompts/get.' }] : [] });
		return;
	case 'prompts/get':
		answer(m.id, { messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify(m.params?._meta ?? null) } }] });
		return;
	default:
		out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
	}
}

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
	buf += d;
	let i;
	while ((i = buf.indexOf('\n')) >= 0) {
		const line = buf.slice(0, i);
		buf = buf.slice(i + 1);
		if (line.trim() !== '')
			handle(line);
	}
});
process.stdin.on('end', () => process.exit(0));
