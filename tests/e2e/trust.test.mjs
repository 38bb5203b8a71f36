// Issue "Trust nothing on disk or from a server", items 5 to 8: a hostile
// server must not stall, bloat or deface the workbench.  Its resource
// templates cannot stall a lookup; calls parked for a modern client's retry
// hold a bounded number of bytes; its control characters reach no terminal;
// and the guardian knows every process group, whatever happened to an
// earlier guardian or to the pipe to it.
//
// Time limits go through H.T (stretched under valgrind and ASan).

import { spawnSync } from 'node:child_process';
import { describe, test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';
import * as H from './hostile-lib.mjs';
import * as E from './eras-lib.mjs';

const T = H.T;

after(H.cleanupAll);
afterEach(H.cleanupAll);

// ---------------------------------------------------------------------------
// Item 7: control characters from a server never reach a terminal raw.

// What a hostile server writes: an OSC title change ended by BEL, SGR
// colours, a carriage return that would overwrite the line, a tab, a C1
// CSI as UTF-8 (U+009B) and as a raw byte (not UTF-8), DEL, and an e-acute
// that is plain text.
const NASTY = '\\033]0;pwned\\007\\033[31mred\\033[0m a\\rb\\tc \\302\\233 \\233 \\177 \\303\\251';
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[31mred\\x1b[0m a\\x0db\tc \\xc2\\x9b \\x9b \\x7f \u00e9';

// A server that says NASTY on stderr, then exits with status 3.
function nastyServer() {
	return { command: 'sh', args: ['-c', `printf '${NASTY}\\n' >&2; exit 3`] };
}

// The control characters in bytes written for a terminal (tab and newline
// are fine), and whether the bytes are valid UTF-8.
function controls(buf) {
	const text = buf.toString('utf8');
	return { utf8: H.isUtf8(buf), found: [...text].filter((c) => /[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(c)) };
}

function assertClean(buf, what) {
	const c = controls(buf);
	assert.ok(c.utf8, `${what}: not valid UTF-8: ${JSON.stringify(buf.toString('latin1').slice(-600))}`);
	assert.deepEqual(c.found, [], `${what}: control characters: ${JSON.stringify(buf.toString('latin1').slice(-600))}`);
}

function stderrBytes(s) {
	return Buffer.from(s.stderrTail, 'latin1');
}

describe('control characters from servers (item 7)', () => {
	test('the stderr relay and the log line quoting a failed server\'s last words are escaped; utf-8 and tab pass', { timeout: T(20000) }, async () => {
		const config = { toolboxes: { b: { description: 'nasty', mcpServers: { x: nastyServer() } } } };
		const s = H.startSession(config);
		await s.initialize();
		const l = await s.open('b');
		assert.equal(l.json?.result?.isError, true, l.text.slice(0, 300));
		await L.waitFor(() => /b\/x: exited with status 3/.test(s.stderrTail), T(5000), 'the failure logged');
		const err = stderrBytes(s);
		assertClean(err, 'stderr');
		const text = err.toString('utf8');
		assert.ok(text.includes(`[b/x] ${SHOWN}\n`), `relayed line: ${JSON.stringify(text)}`);
		assert.ok(text.includes(`b/x: exited with status 3. Last stderr: ${SHOWN}\n`), `log line: ${JSON.stringify(text)}`);
		// The client gets the words as JSON, which escapes what it must.
		assert.match(H.text(l), /Last stderr: \u001b\]0;pwned\u0007/);
		await s.close();
		H.forget(s);
	});

	test('a running server\'s stderr, and tool names quoted in warnings, are escaped', { timeout: T(20000) }, async () => {
		const config = {
			toolMode: 'dynamic',
			toolboxes: { b: { description: 'nasty', mcpServers: { m: L.mock('--tool-name', 'bad\u001b[2Jname\r') } } },
		};
		const s = H.startSession(config);
		await s.initialize();
		const l = await s.open('b');
		assert.equal(l.json?.result?.isError, undefined, l.text.slice(0, 300));
		await L.waitFor(() => /b\/m: tool name/.test(s.stderrTail), T(5000), 'the warning about the name');
		const said = 'osc \u001b]2;x\u0007 cr \r over \u009b c1';
		const r = await s.useTool('b', 'm', 'stderr', { text: `${said}\n` });
		assert.equal(r.json?.result?.isError, undefined, r.text.slice(0, 300));
		await L.waitFor(() => s.stderrTail.includes('[b/m] osc'), T(5000), 'the relayed line');
		const err = stderrBytes(s);
		assertClean(err, 'stderr');
		const text = err.toString('utf8');
		assert.ok(text.includes('[b/m] osc \\x1b]2;x\\x07 cr \\x0d over \\xc2\\x9b c1\n'), JSON.stringify(text.slice(-2000)));
		assert.ok(text.includes("tool name 'b__m__bad\\x1b[2Jname\\x0d'"), JSON.stringify(text.slice(-2000)));
		await s.close();
		H.forget(s);
	});

	test('--probe text output escapes a server\'s words; --json keeps them as JSON', { timeout: T(20000) }, () => {
		const file = L.writeConfig({ toolboxes: { b: { description: 'nasty', mcpServers: { x: nastyServer() } } } });
		const run = (...args) => spawnSync(L.WORKBENCH, ['--probe', ...args, '-c', file], {
			env: L.workbenchEnv(), timeout: T(10000),
		});
		let r = run();
		assert.equal(r.status, 1, r.stderr.toString('latin1'));
		assertClean(r.stdout, '--probe stdout');
		assertClean(r.stderr, '--probe stderr');
		assert.equal(r.stdout.toString('utf8'), `b/x: failed: exited with status 3. Last stderr: ${SHOWN}\n`);
		r = run('--json');
		assert.equal(r.status, 1);
		const j = JSON.parse(r.stdout.toString('utf8'));
		assert.match(j.servers[0].error, /Last stderr: \u001b\]0;pwned\u0007\u001b\[31mred/);
	});
});

// ---------------------------------------------------------------------------
// Item 5: URI templates cannot stall the loop.

describe('URI templates (item 5)', () => {
	const NTPL = 20000;
	const CAP = 1000;		// resource templates kept per server
	// x and many a's: each hostile template x{a}...{a}Z<i> fails on it
	// only after much backtracking; y and many '{', each of which looks
	// for its '}' to the end of y{{{...{Z<i> (50 of the first 1000).
	const URI = `x${'a'.repeat(60)}`;
	const BRACES = `y${'{'.repeat(8000)}`;

	function read(s, uri) {
		const id = s.newId();
		return { id, line: JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri } }) };
	}

	test(`a server listing ${NTPL} hostile templates: unmatched reads take one step budget each, a call to another server is answered within 1 s meanwhile, the templates past ${CAP} are ignored with one warning`, { timeout: T(120000) }, async (t) => {
		const config = {
			toolboxes: {
				h: {
					description: 'templates',
					mcpServers: {
						t: L.mock('--name', 't', '--resources', '0', '--templates', String(NTPL), '--page-size', '500'),
						ok: L.mock('--name', 'ok'),
					},
				},
			},
		};
		const s = H.startSession(config);
		await s.initialize();
		const l = await s.open('h', 60000);
		assert.equal(l.json?.result?.isError, undefined, l.text.slice(0, 300));
		const templates = (await s.request('resources/templates/list', {}, 20000)).json.result.resourceTemplates;
		assert.equal(templates.length, CAP, 'the first templates are kept');
		assert.equal(templates[0].uriTemplate, 'mock://item/{id}');
		const warned = s.stderrTail.split('\n').filter((x) => x.includes('resource templates; keeping the first'));
		assert.deepEqual(warned, [`mcp-workbench: h/t: resources/templates/list lists more than ${CAP} resource templates; keeping the first ${CAP}`]);

		// Three unmatched reads, then a call to the other server, at once.
		const reads = [read(s, URI), read(s, BRACES), read(s, `${URI}b`), read(s, BRACES)];
		const call = `{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"h","server":"ok","name":"echo"},"arguments":{"message":"meanwhile"}}}}`;
		const t0 = Date.now();
		await s.write(reads.map((r) => r.line).concat([call, '']).join('\n'));
		const others = [];
		const answer = await s.waitId('call', 1000, others);
		const took = Date.now() - t0;
		assert.equal(H.text(answer), 'meanwhile');
		assert.ok(took < T(1000), `the call was answered after ${took} ms`);
		for (const r of reads) {
			const a = others.find((x) => x.json?.id === r.id) ?? await s.waitId(r.id, 5000);
			assert.equal(a.json.error?.code, -32002, a.text.slice(0, 300));
		}
		// A URI of a real template still reaches its server.
		const item = await s.request('resources/read', { uri: 'mock://item/7' }, 5000);
		assert.ok(item.json.result, item.text.slice(0, 300));

		// The worst lookup: an unmatched URI, alone, a few times.
		let worst = 0;
		for (let i = 0; i < 6; i++) {
			const r = read(s, i % 2 === 0 ? URI : BRACES);
			const t1 = process.hrtime.bigint();
			await s.sendLine(r.line);
			await s.waitId(r.id, 5000);
			worst = Math.max(worst, Number(process.hrtime.bigint() - t1) / 1e6);
		}
		t.diagnostic(`an unmatched read against ${CAP} hostile templates: at most ${worst.toFixed(1)} ms, round trip included`);
		await s.close();
		H.forget(s);
	});
});

// ---------------------------------------------------------------------------
// Item 6: calls parked for a modern client's retry hold a bounded number of
// bytes, their server's questions and answers together.

describe('parked calls (item 6)', () => {
	const MAX = 4 * 1024 * 1024;		// maxMessageBytes
	const CAP = 2 * MAX;			// bytes parked in all
	const META = { ...E.META, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } };
	const config = { maxMessageBytes: MAX, toolboxes: { box: { description: 'x', mcpServers: { f: L.fixtureServer() } } } };
	const use = (id, server, name, args, extra = {}) => E.modern(id, 'tools/call',
	    { name: 'use_tool', arguments: { tool: { toolbox: 'box', server, name }, arguments: args }, ...extra }, META);

	async function ask(s, id, name, args, extra, server = 'f') {
		await s.send(use(id, server, name, args, extra));
		return (await s.waitId(id, 20000)).json;
	}

	function retry(id, name, args, first) {
		const key = Object.keys(first.result.inputRequests)[0];
		return { requestState: first.result.requestState, inputResponses: { [key]: { roots: [] } } };
	}

	test(`answers kept for parked calls: at most ${CAP} bytes in all; past that the retry gets an error saying so, and memory stays bounded`, { timeout: T(120000) }, async (t) => {
		const BYTES = 3 * 1024 * 1024;
		const N = 16;
		const s = H.startSession(config);
		const args = { method: 'roots/list', bytes: BYTES };
		// One call parked and retried first: every buffer has grown once.
		let first = await ask(s, 'warm', 'ask_big', args);
		assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first).slice(0, 300));
		let r = await ask(s, 'warm-retry', 'ask_big', args, retry('warm-retry', 'ask_big', args, first));
		assert.equal(r.result?.content?.[0]?.text?.length, BYTES, JSON.stringify(r).slice(0, 300));
		const base = H.hwmKb(s.pid);
		const parked = [];
		for (let i = 0; i < N; i++) {
			first = await ask(s, `c${i}`, 'ask_big', args);
			assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first).slice(0, 300));
			parked.push(first);
		}
		// The server answers in order: once a later call's answer is in,
		// so is every big one.
		const after = await ask(s, 'after', 'meta', {});
		assert.equal(after.result?.resultType, 'complete', JSON.stringify(after).slice(0, 300));
		const grew = H.hwmKb(s.pid) - base;
		t.diagnostic(`${N} parked calls answered with ${BYTES} bytes each: peak RSS grew by ${grew} kB`);
		if (H.CHECK_RSS)
			assert.ok(grew < (CAP + 2 * MAX) / 1024, `peak RSS grew by ${grew} kB`);
		const kept = Math.floor(CAP / (BYTES + 100));
		for (let i = 0; i < N; i++) {
			r = await ask(s, `r${i}`, 'ask_big', args, retry(`r${i}`, 'ask_big', args, parked[i]));
			if (i < kept) {
				assert.equal(r.result?.content?.[0]?.text?.length, BYTES, `retry ${i}: ${JSON.stringify(r).slice(0, 300)}`);
				continue;
			}
			assert.equal(r.result?.isError, true, `retry ${i}: ${JSON.stringify(r).slice(0, 300)}`);
			assert.match(r.result.content[0].text, new RegExp(`: its answer \\(\\d+ bytes\\) did not fit in the ${CAP} bytes mcp-workbench keeps for calls waiting for the client's retry \\(twice maxMessageBytes\\)$`));
		}
		await s.close();
		H.forget(s);
	});

	test(`questions of parked calls count too: past ${CAP} bytes the 2025 server's request gets an error saying why, and its call goes on unparked`, { timeout: T(60000) }, async () => {
		const pad = 'p'.repeat(1900 * 1024);
		const args = { method: 'roots/list', params: { pad } };
		// A 2025 server's question is attributable while one call is in
		// progress on it: a server per call.
		const servers = {};
		for (let i = 0; i < 5; i++)
			servers[`f${i}`] = L.fixtureServer();
		const s = H.startSession({ ...config, toolboxes: { box: { description: 'x', mcpServers: servers } } });
		const parked = [];
		for (let i = 0; i < 4; i++) {
			const first = await ask(s, `q${i}`, 'ask', args, {}, `f${i}`);
			assert.equal(first.result?.resultType, 'input_required', `call ${i}: ${JSON.stringify(first).slice(0, 300)}`);
			parked.push(first);
		}
		// The fifth question does not fit: the server is told, and the
		// answer it then makes (the raw line of that error) is the call's.
		const fifth = await ask(s, 'q4', 'ask', args, {}, 'f4');
		assert.equal(fifth.result?.resultType, 'complete', JSON.stringify(fifth).slice(0, 300));
		const told = JSON.parse(fifth.result.content[0].text);
		assert.equal(told.error?.code, -32603, fifth.result.content[0].text);
		assert.match(told.error.message, new RegExp(`mcp-workbench keeps at most ${CAP} bytes for calls waiting for the client's input \\(twice maxMessageBytes\\)`));
		// The parked ones are answered by their retries.
		for (let i = 0; i < 4; i++) {
			const r = await ask(s, `a${i}`, 'ask', args, retry(`a${i}`, 'ask', args, parked[i]), `f${i}`);
			assert.equal(r.result?.resultType, 'complete', JSON.stringify(r).slice(0, 300));
			assert.deepEqual(JSON.parse(r.result.content[0].text).result, { roots: [] });
		}
		await s.close();
		H.forget(s);
	});
});

// ---------------------------------------------------------------------------
// Item 8: the guardian, and process groups signalled only while ours.

// A process's state and parent (Linux /proc), or null once it is gone.
function procState(pid) {
	return L.processes().find((p) => p.pid === pid) ?? null;
}

describe('the guardian (item 8)', () => {
	async function opened(config, name) {
		const s = H.startSession(config);
		await s.initialize();
		const l = await s.open(name);
		assert.equal(l.json?.result?.isError, undefined, `open_toolbox ${name}: ${l.text.slice(0, 500)}`);
		await s.allStarted(config, name);
		return s;
	}

	test('a guardian that dies is replaced at once and told every group: SIGKILL of the workbench then still ends the grandchildren of servers started before', { timeout: T(30000) }, async () => {
		const config = {
			toolboxes: {
				b: { description: 'first', mcpServers: { a: L.mock('--grandchild'), c: L.mock('--grandchild') } },
				d: { description: 'later', mcpServers: { e: L.mock('--name', 'e') } },
			},
		};
		const s = await opened(config, 'b');
		await L.waitFor(() => s.grandchildren.size === 2, T(3000), 'the grandchildren');
		await L.waitFor(() => H.guardians(s.pid).length === 1, T(3000), 'the guardian');
		const first = H.guardians(s.pid)[0];
		process.kill(first, 'SIGKILL');
		await L.waitFor(() => H.guardians(s.pid).some((g) => g !== first), T(3000), 'a new guardian');
		await L.waitFor(() => /the guardian process is gone; starting another/.test(s.stderrTail), T(3000), 'the loss said');
		// A server started now is told to the new guardian as well.
		const l = await s.open('d');
		assert.equal(l.json?.result?.isError, undefined, l.text.slice(0, 300));
		const grandchildren = [...s.grandchildren];
		const pids = [...s.pids];
		assert.ok(L.killWorkbench(s.pid, 'deliberate: a guardian replaced, then the workbench killed'));
		await L.within(s.exited, T(3000));
		await L.waitFor(() => grandchildren.every((p) => !L.pidAlive(p)), T(4000),
		    `the grandchildren ${grandchildren} gone`);
		await L.waitFor(() => H.survivors(pids).length === 0, T(4000), 'every server gone');
		H.forget(s);
	});

	test('a server that exits leaving a process that ignores SIGTERM: that process becomes the workbench\'s (a subreaper), so its group is signalled while it is ours; SIGKILL ends it 1 s later and the workbench reaps it', { timeout: T(30000) }, async () => {
		const config = { toolboxes: { b: { description: 'x', mcpServers: { g: L.mock('--ignore-sigterm', '--grandchild') } } } };
		const s = await opened(config, 'b');
		await L.waitFor(() => s.grandchildren.size === 1, T(3000), 'the grandchild');
		const leader = s.pidOf('b/g');
		const gc = [...s.grandchildren][0];
		const r = await s.useTool('b', 'g', 'crash', {});
		assert.match(H.text(r), /exited with status 3/);
		const st = procState(gc);
		assert.ok(st !== null && st.state !== 'Z', `the left-behind process lives on SIGTERM: ${JSON.stringify(st)}`);
		assert.equal(st.ppid, s.pid, 'it is the workbench\'s child now');
		assert.equal(st.pgrp, leader, 'in the server\'s group');
		await L.waitFor(() => procState(gc) === null, T(4000), 'it killed and reaped');
		assert.deepEqual(H.children(s.pid), [], 'no child left');
		await s.close();
		H.forget(s);
	});
});
