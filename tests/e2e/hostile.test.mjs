// Issue 6: hostile input from the client and misbehaving servers.  Neither
// side may crash or hang the workbench, make it lose or duplicate a message,
// write anything but valid UTF-8 JSON lines, or grow its memory without
// bound; servers left behind must be gone after shutdown.
//
// The client side speaks raw bytes (hostile-lib.mjs); the servers are the C
// mock with --hostile (tools that break the protocol on purpose), --linger
// (survives stdin EOF), --ignore-sigterm and --grandchild.

import { spawnSync } from 'node:child_process';
import { describe, test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';
import * as H from './hostile-lib.mjs';

const T = H.T;

// Memory bounds hold for the plain binary only (see hostile-lib.mjs).
function assertRss(ok, msg) {
	if (H.CHECK_RSS)
		assert.ok(ok, msg);
}

after(H.cleanupAll);
// A failed test leaves its workbench (maybe spinning) and servers behind.
afterEach(H.cleanupAll);

const LIMIT = 16777216;		// maxMessageBytes default
const MB = 1024;		// kB per MB, for VmRSS (kB)

function box(servers, description = 'Hostile box') {
	return { description, mcpServers: servers };
}

// The usual configuration: a hostile server that lingers past stdin EOF,
// a well-behaved one, and one with a call timeout.
const CONFIG = {
	toolboxes: {
		b: box({
			a: L.mock('--hostile', '--linger', '--tools', '1'),
			ok: L.mock('--name', 'ok'),
			t: { ...L.mock('--hostile'), callTimeoutMs: 500 },
		}),
	},
};

async function session(config = CONFIG, opts = {}) {
	const s = H.startSession(config, opts);
	await s.initialize();
	return s;
}

async function opened(config = CONFIG, name = 'b', opts = {}) {
	const s = await session(config, opts);
	const l = await s.open(name);
	assert.equal(l.json?.result?.isError, undefined, `open_toolbox ${name}: ${l.text.slice(0, 500)}`);
	// Their start lines, which tests count, may come after the answer.
	await s.allStarted(config, name);
	return s;
}

// Every stdout line must be one valid UTF-8 JSON-RPC message.
function assertWellFormed(l, what = '') {
	assert.ok(H.isUtf8(l.buf), `${what}: answer is not valid UTF-8: ${JSON.stringify(l.buf.toString('latin1').slice(0, 300))}`);
	assert.ok(l.json !== undefined && l.json !== null && typeof l.json === 'object' && !Array.isArray(l.json),
	    `${what}: answer is not a JSON object: ${l.text.slice(0, 300)}`);
	assert.equal(l.json.jsonrpc, '2.0', `${what}: ${l.text.slice(0, 300)}`);
}

function assertError(l, codes, id, what = '') {
	assertWellFormed(l, what);
	assert.equal(l.json.result, undefined, `${what}: expected an error, got ${l.text.slice(0, 300)}`);
	assert.ok(codes.includes(l.json.error?.code), `${what}: code ${l.json.error?.code} not in ${codes}: ${l.text.slice(0, 300)}`);
	assert.equal(typeof l.json.error.message, 'string', what);
	assert.ok(Object.is(l.json.id, id), `${what}: id ${JSON.stringify(l.json.id)}, expected ${JSON.stringify(id)}`);
}

function assertToolError(l, re, what = '') {
	assertWellFormed(l, what);
	assert.equal(l.json.result?.isError, true, `${what}: expected isError: ${l.text.slice(0, 400)}`);
	if (re)
		assert.match(H.text(l), re, what);
}

function assertText(l, expected, what = '') {
	assertWellFormed(l, what);
	assert.ok(!l.json.result?.isError, `${what}: unexpected error: ${l.text.slice(0, 400)}`);
	assert.equal(H.text(l), expected, what);
}

// Close the session; the workbench exits 0 and leaves no process behind.
async function finish(s, extraPgids = []) {
	const r = await s.close(5000);
	assert.ok(r !== null, `workbench did not exit within ${T(5)} s of stdin EOF; ${s.describe()}`);
	assert.equal(r.code, 0, `exit status; ${s.describe()}`);
	const pgids = [...s.pids, ...extraPgids];
	// Servers still exiting are the guardian's: 0.5 s, SIGTERM, 1 s, SIGKILL.
	try {
		await L.waitFor(() => H.survivors(pgids).length === 0, T(3000), 'server process groups to be empty');
	} catch {
		assert.deepEqual(H.survivors(pgids), [], 'processes left running after shutdown');
	}
	for (const g of s.grandchildren)
		assert.equal(L.pidAlive(g), false, `grandchild ${g} left running`);
	H.forget(s);
}

// Lines arriving within settle ms, then up to a ping's answer.
// The client leaves by close(): the workbench must exit 0 within 3.5 s.
async function exitsAfter(s, close, what) {
	const t0 = Date.now();
	close();
	const r = await L.within(s.exited, T(5000));
	assert.ok(r !== null, what);
	assert.equal(r.code, 0);
	assert.ok(r.at - t0 < T(3500), `exited after ${r.at - t0} ms`);
}

async function quiet(s, settle = 150) {
	await L.sleep(settle);
	return s.drain();
}

function useToolLine(id, toolbox, server, name, args, extra = {}) {
	const a = { tool: { toolbox, server, name } };
	if (args !== undefined)
		a.arguments = args;
	return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${JSON.stringify({ name: 'use_tool', arguments: a, ...extra })}}`;
}

// ===========================================================================

describe('hostile client', () => {
	test('garbage lines get one error each (id null) and the session goes on', { timeout: T(20000) }, async () => {
		const s = await session();
		const P = [-32700];
		const I = [-32600];
		const cases = [
			['this is not json', P, null],
			['{', P, null],
			['}', P, null],
			['tru', P, null],
			['{"a" "b"}', P, null],
			['{"jsonrpc":"2.0","id":1,"method":"ping"} trailing', P, null],
			['{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}', P, null],
			['{"jsonrpc":"2.0","id":"a\tb","method":"ping"}', P, null],	// raw control character
			[Buffer.from('{"jsonrpc":"2.0",\0"id":1,"method":"ping"}', 'latin1'), P, null],
			[Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\0', 'latin1'), P, null],
			[Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x0d]), P, null],
			['[]', [...I, ...P], null],
			['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', [...I, ...P], null],
			['42', [...I, ...P], null],
			['null', [...I, ...P], null],
			['"a string"', [...I, ...P], null],
			['true', [...I, ...P], null],
			['{}', I, null],
			['{"jsonrpc":"1.0","id":5,"method":"ping"}', I, 5],
			['{"id":6,"method":"ping"}', I, 6],
			['{"jsonrpc":"2.0","id":7}', I, 7],
			['{"jsonrpc":"2.0","id":8,"method":42}', I, 8],
			['{"jsonrpc":"2.0","id":9,"method":"no/such/method"}', [-32601], 9],
		];
		for (const [line, codes, id] of cases) {
			await s.sendLine(line);
			const got = await s.drain();
			const what = `line ${JSON.stringify(String(line)).slice(0, 80)}`;
			assert.equal(got.length, 1, `${what}: expected one answer, got ${got.map((g) => g.text).join(' | ')}`);
			assertError(got[0], codes, id, what);
		}
		// Ignored: notifications of unknown methods, answers to nothing, blank lines.
		for (const line of ['{"jsonrpc":"2.0","method":"no/such/notification"}',
		    '{"jsonrpc":"2.0","id":10,"result":{}}', '{"jsonrpc":"2.0","id":11,"error":{"code":1,"message":"x"}}',
		    '', '\r']) {
			await s.sendLine(line);
			const got = await s.drain();
			assert.deepEqual(got.map((g) => g.text), [], `line ${JSON.stringify(line)} must get no answer`);
		}
		const l = await s.request('tools/list');
		assert.equal(l.json.result.tools.length, 3, 'the session goes on');
		await finish(s);
	});

	test('truncated lines, then valid ones; split and CRLF lines', { timeout: T(20000) }, async () => {
		const s = await session();
		// A partial line waits for its newline; nothing is answered meanwhile.
		await s.write('{"jsonrpc":"2.0","id":"t1","method":"pi');
		await L.sleep(200);
		assert.equal(s.lines.length, 0, 'no answer to half a line');
		await s.write('\n{"jsonrpc":"2.0","id":"t2","method":"ping"}\n');
		let l = await s.readLine();
		assertError(l, [-32700], null, 'truncated line');
		l = await s.readLine();
		assert.equal(l.text, '{"jsonrpc":"2.0","id":"t2","result":{}}');
		// Several truncated lines and a valid one in a single write.
		await s.write('{"jsonrpc":"2.0","id":"t3","meth\n{"jsonrpc":\n{\n{"jsonrpc":"2.0","id":"t4","method":"ping"}\n');
		for (let i = 0; i < 3; i++)
			assertError(await s.readLine(), [-32700], null, `truncated ${i}`);
		assert.equal((await s.readLine()).json.id, 't4');
		// One byte per write.
		const one = '{"jsonrpc":"2.0","id":"t5","method":"ping"}\n';
		for (const ch of one) {
			await s.write(ch);
			await L.sleep(1);
		}
		assert.equal((await s.readLine()).text, '{"jsonrpc":"2.0","id":"t5","result":{}}');
		// CRLF framing.
		await s.write('{"jsonrpc":"2.0","id":"t6","method":"ping"}\r\n');
		assert.equal((await s.readLine()).text, '{"jsonrpc":"2.0","id":"t6","result":{}}');
		assert.deepEqual((await s.drain()).map((g) => g.text), [], 'nothing else');
		await finish(s);
	});

	test('a 100 MB line gets one error naming its size and the limit; memory stays bounded', { timeout: T(30000) }, async () => {
		const s = await session();
		const chunk = Buffer.alloc(1 << 20, 'a');
		const head = '{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"';
		const tail = '"}}}';
		const total = head.length + 100 * chunk.length + tail.length;
		// Written in chunks, with answers read as they come (none should).
		await s.write(head);
		for (let i = 0; i < 100; i++)
			await s.write(chunk);
		// The next message follows in the same write as the end of the big one.
		await s.write(tail + '\n{"jsonrpc":"2.0","id":"after-1","method":"ping"}\n');
		const got = [];
		const l = await s.waitId('after-1', 15000, got);
		assert.equal(l.text, '{"jsonrpc":"2.0","id":"after-1","result":{}}');
		assert.equal(got.length, 1, `one answer for the big line: ${got.map((g) => g.text).join(' | ')}`);
		assertError(got[0], [-32600, -32700], 'big-1', '100 MB line');
		assert.ok(got[0].json.error.message.includes(String(total)), `size ${total} named: ${got[0].text}`);
		assert.ok(got[0].json.error.message.includes(String(LIMIT)), `limit named: ${got[0].text}`);
		// The id at the end cannot be seen: still exactly one error.
		await s.write('{"jsonrpc":"2.0","method":"ping","params":{"pad":"');
		for (let i = 0; i < 20; i++)
			await s.write(chunk);
		await s.write('"},"id":"late"}\n');
		const got2 = await s.drain(15000);
		assert.equal(got2.length, 1, `one answer: ${got2.map((g) => g.text).join(' | ')}`);
		assert.ok(got2[0].json.id === null || got2[0].json.id === 'late', got2[0].text);
		assertError(got2[0], [-32600, -32700], got2[0].json.id, '20 MB line, id last');
		const hwm = H.hwmKb(s.pid);
		assertRss(hwm < 64 * MB, `peak RSS ${hwm} kB must stay well below the 100 MB line`);
		await finish(s);
	});

	test('a line over the limit whose id is not an id (abc, -, 1.5, a raw control character): the error has id null', { timeout: T(20000) }, async () => {
		const s = await session({ ...CONFIG, maxMessageBytes: 1024 });
		const pad = 'a'.repeat(3000);
		const ids = [['42', 42], ['"k"', 'k'], ['abc', null], ['-', null], ['1.5', null], ['true', null], ['"a\u0001b"', null]];
		for (const [raw, want] of ids) {
			for (const line of [`{"jsonrpc":"2.0","id":${raw},"method":"ping","params":{"x":"${pad}"}}`,
			    `{"jsonrpc":"2.0","method":"ping","params":{"x":"${pad}"},"id":${raw}}`]) {
				await s.sendLine(line);
				const l = await s.readLine(5000);
				assertError(l, [-32600, -32700], want, `id ${JSON.stringify(raw)}`);
			}
		}
		await finish(s);
	});

	test('100,000 levels of unbalanced nesting: parse error, at once', { timeout: T(20000) }, async () => {
		const s = await session();
		for (const line of ['['.repeat(100000), '{"a":'.repeat(100000), '{"jsonrpc":"2.0","id":"x","params":' + '{"a":['.repeat(50000)]) {
			const t0 = Date.now();
			await s.sendLine(line);
			const got = await s.drain(5000);
			assert.equal(got.length, 1, `one answer: ${got.map((g) => g.text.slice(0, 200))}`);
			assertError(got[0], [-32700, -32600], null, `unbalanced ${line.slice(0, 10)}`);
			assert.ok(Date.now() - t0 < T(2000), `answered in ${Date.now() - t0} ms`);
		}
		await finish(s);
	});

	test('100,000 levels of balanced nesting are answered within 5 s and block nobody', { timeout: T(20000) }, async () => {
		const s = await session();
		const deep = '['.repeat(100000) + ']'.repeat(100000);
		const t0 = Date.now();
		await s.sendLine(`{"jsonrpc":"2.0","id":"deep-1","method":"ping","params":{"a":${deep}}}`);
		await s.sendLine('{"jsonrpc":"2.0","id":"deep-2","method":"ping"}');
		const others = [];
		const l = await s.waitId('deep-2', 5000, others);
		assert.equal(l.text, '{"jsonrpc":"2.0","id":"deep-2","result":{}}');
		assert.equal(others.length, 1, 'deep-1 answered first');
		assertWellFormed(others[0], 'deep-1');
		assert.equal(others[0].json.id, 'deep-1');
		assert.ok(Date.now() - t0 < T(5000), `took ${Date.now() - t0} ms`);
		await finish(s);
	});

	test('invalid UTF-8 and lone surrogates in strings: answers stay valid UTF-8 JSON', { timeout: T(20000) }, async () => {
		const s = await opened();
		const bad = (t) => Buffer.from(t, 'latin1');
		const cases = [
			bad('{"jsonrpc":"2.0","id":"u1","method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"x\xff\xc3\x28y"}}}'),
			bad('{"jsonrpc":"2.0","id":"u2","method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"x\\ud800y"}}}'),
			bad('{"jsonrpc":"2.0","id":"u3","method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"x\\u0000y"}}}'),
			bad('{"jsonrpc":"2.0","id":"u4","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"b","server":"a\xed\xa0\x80","name":"echo"}}}}'),
			bad('{"jsonrpc":"2.0","id":"u5","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"b","server":"a","name":"e\xc0\xafcho"}}}}'),
			bad('{"jsonrpc":"2.0","id":"u6","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"b\xf8\x88\x80\x80\x80","server":"a","name":"echo"}}}}'),
			bad('{"jsonrpc":"2.0","id":"u7","method":"tools/call","params":{"name":"no\xffsuch"}}'),
			bad('{"jsonrpc":"2.0","id":"u8","method":"no\xffsuch"}'),
			bad('{"jsonrpc":"2.0","id":"u9","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"b","server":"a","name":"echo"},"arguments":{"message":"a\xff\xfeb \\udc00"}}}}'),
			bad('{"jsonrpc":"2.0","id":"u10","method":"logging/setLevel","params":{"level":"x\xff"}}'),
			bad('{"jsonrpc":"2.0","id":"u11\xff","method":"ping"}'),
			bad('{"jsonrpc":"2.0","id":"u12\\ud800","method":"ping"}'),
			bad('{"jsonrpc":"2.0","id":"u13","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"b","server":"a","name":"\xc3"}}}}'),
		];
		const wrong = [];
		for (const line of cases) {
			await s.sendLine(line);
			const got = await quiet(s, 200);
			const what = JSON.stringify(line.toString('latin1')).slice(0, 100);
			assert.equal(got.length, 1, `${what}: one answer, got ${got.map((g) => g.text.slice(0, 200)).join(' | ')}`);
			try {
				assertWellFormed(got[0], what);
			} catch (e) {
				wrong.push(e.message);
			}
		}
		assert.deepEqual(wrong, [], 'every answer must be valid UTF-8 JSON');
		const l = await s.useTool('b', 'ok', 'echo', { message: 'still fine ✓' });
		assertText(l, 'still fine ✓');
		await finish(s);
	});

	test('duplicate keys: exactly one answer each, and the session goes on', { timeout: T(20000) }, async () => {
		const s = await opened();
		const cases = [
			['{"jsonrpc":"2.0","id":"k1","id":"k2","method":"ping"}', ['k1', 'k2']],
			['{"jsonrpc":"2.0","id":"k3","method":"ping","method":"tools/list"}', ['k3']],
			['{"jsonrpc":"2.0","jsonrpc":"1.0","id":"k4","method":"ping"}', ['k4']],
			['{"jsonrpc":"2.0","id":"k5","method":"ping","params":{},"params":{"a":1}}', ['k5']],
			['{"jsonrpc":"2.0","id":"k6","method":"tools/call","params":{"name":"open_toolbox","name":"use_tool","arguments":{"toolbox_name":"b"}}}', ['k6']],
			['{"jsonrpc":"2.0","id":"k7","method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"nope","toolbox_name":"b"}}}', ['k7']],
			['{"jsonrpc":"2.0","id":"k8","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"b","toolbox":"zz","server":"ok","name":"echo"},"arguments":{"message":"m","message":"n"}}}}', ['k8']],
			['{"jsonrpc":"2.0","id":"k9","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"b","server":"ok","name":"echo"},"arguments":{"message":"m"},"arguments":{"message":"n"}}}}', ['k9']],
		];
		for (const [line, ids] of cases) {
			await s.sendLine(line);
			const got = await quiet(s, 200);
			assert.equal(got.length, 1, `${line}: one answer, got ${got.map((g) => g.text.slice(0, 200)).join(' | ')}`);
			assertWellFormed(got[0], line);
			assert.ok(ids.includes(got[0].json.id), `${line}: id ${got[0].json.id}`);
		}
		assertText(await s.useTool('b', 'ok', 'echo', { message: 'x' }), 'x');
		await finish(s);
	});

	test('wrong types in every field of tools/call, open_toolbox, use_tool, logging/setLevel, ping, tools/list', { timeout: T(30000) }, async () => {
		const s = await opened();
		const bad = [1, 1.5, null, true, {}, [], ''];
		const nonString = [1, 1.5, null, true, {}, []];
		const nonObject = [1, 'x', [], true];
		const ident = { toolbox: 'b', server: 'ok', name: 'echo' };
		const expectRpc = async (method, params, codes, what) => {
			const l = await s.request(method, params);
			assertError(l, codes, l.json.id, what);
		};
		const expectTool = async (args, re, what) => {
			const l = await s.call(args.__name, args.__args);
			assertToolError(l, re, what);
		};
		for (const v of nonString)
			await expectRpc('tools/call', { name: v }, [-32602], `tools/call name ${JSON.stringify(v)}`);
		await expectRpc('tools/call', {}, [-32602], 'tools/call without name');
		await expectRpc('tools/call', { name: '' }, [-32602], 'tools/call empty name');
		for (const v of [...nonObject, null])
			await expectTool({ __name: 'open_toolbox', __args: v }, /toolbox_name/, `open_toolbox arguments ${JSON.stringify(v)}`);
		for (const v of bad)
			await expectTool({ __name: 'open_toolbox', __args: { toolbox_name: v } }, /toolbox_name/, `toolbox_name ${JSON.stringify(v)}`);
		for (const v of [...nonObject, null])
			await expectTool({ __name: 'use_tool', __args: v }, /Invalid tool invocation parameters/, `use_tool arguments ${JSON.stringify(v)}`);
		for (const v of [1, 1.5, null, true, [], '', undefined])
			await expectTool({ __name: 'use_tool', __args: v === undefined ? {} : { tool: v } }, /tool/, `use_tool tool ${JSON.stringify(v)}`);
		for (const f of ['toolbox', 'server', 'name']) {
			for (const v of [...nonString, undefined, '']) {
				const tool = { ...ident };
				if (v === undefined)
					delete tool[f];
				else
					tool[f] = v;
				await expectTool({ __name: 'use_tool', __args: { tool, arguments: { message: 'x' } } },
				    new RegExp(f), `use_tool tool.${f} ${JSON.stringify(v)}`);
			}
		}
		for (const v of nonObject)
			await expectTool({ __name: 'use_tool', __args: { tool: ident, arguments: v } }, /arguments/, `use_tool arguments.arguments ${JSON.stringify(v)}`);
		// A _meta or progressToken of the wrong type must not stop the call.
		for (const meta of [1, 'x', [], true, null, { progressToken: {} }, { progressToken: 1.5 }, { progressToken: null }, { progressToken: [] }]) {
			const l = await s.request('tools/call', { name: 'use_tool', arguments: { tool: ident, arguments: { message: 'm' } }, _meta: meta });
			assertWellFormed(l, `_meta ${JSON.stringify(meta)}`);
			assert.ok(l.json.result !== undefined || l.json.error?.code === -32602, `_meta ${JSON.stringify(meta)}: ${l.text}`);
		}
		for (const v of [...nonString, undefined])
			await expectRpc('logging/setLevel', v === undefined ? {} : { level: v }, [-32602], `level ${JSON.stringify(v)}`);
		for (const params of [1, 'x', [], true, null]) {
			for (const method of ['ping', 'tools/list', 'tools/call', 'logging/setLevel'])
				await expectRpc(method, params, [-32602, -32600], `${method} params ${JSON.stringify(params)}`);
		}
		for (const v of [1, {}, [], true, null]) {
			const l = await s.request('tools/list', { cursor: v });
			assertWellFormed(l, `cursor ${JSON.stringify(v)}`);
			assert.ok(l.json.result?.tools !== undefined || l.json.error?.code === -32602, `cursor ${JSON.stringify(v)}: ${l.text}`);
		}
		for (const v of [2.0, '2', '2.00', null, {}, []]) {
			await s.send({ jsonrpc: v, id: 'jv', method: 'ping' });
			assertError(await s.readLine(), [-32600], 'jv', `jsonrpc ${JSON.stringify(v)}`);
		}
		{
			const l = await s.request('ping', undefined);
			assert.deepEqual(l.json.result, {});
		}
		assertText(await s.useTool('b', 'ok', 'echo', { message: 'after' }), 'after');
		await finish(s);
	});

	test('notifications/cancelled with wrong types is ignored and cancels nothing', { timeout: T(20000) }, async () => {
		const s = await opened();
		await s.sendLine(useToolLine('"pending"', 'b', 'ok', 'sleep', { ms: 400 }));
		for (const params of [5, 'x', null, [], {}, { requestId: {} }, { requestId: [] }, { requestId: null },
		    { requestId: true }, { requestId: 1.5 }, { requestId: ['pending'] }, { requestId: { id: 'pending' } },
		    { requestId: 'pendin' }, { requestId: '"pending"' }])
			await s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params });
		await s.send({ jsonrpc: '2.0', method: 'notifications/cancelled' });
		const others = [];
		const l = await s.waitId('pending', 5000, others);
		assertText(l, 'slept 400', 'the call was not cancelled');
		assert.deepEqual(others.map((o) => o.text), [], 'no answer to any notification');
		assert.deepEqual((await quiet(s)).map((o) => o.text), []);
		await finish(s);
	});

	test('initialize: wrong types in params and protocolVersion are -32602; a good one still works', { timeout: T(20000) }, async () => {
		const cases = [
			...[1, 'x', [], true, null].map((p) => ({ params: p })),
			...[1, 1.5, null, true, {}, []].map((v) => ({ params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'c', version: '1' } } })),
			{ params: { capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
		];
		for (const c of cases) {
			const s = H.startSession(CONFIG);
			const l = await s.request('initialize', c.params);
			assertError(l, [-32602, -32600], l.json.id, `initialize ${JSON.stringify(c.params)}`);
			const r = await s.initialize();
			assert.equal(r.serverInfo.name, 'mcp-workbench', 'a correct initialize works afterwards');
			await finish(s);
		}
	});

	test('initialize: wrong types in capabilities and clientInfo are -32602', { timeout: T(20000) }, async () => {
		const bad = [1, 'x', [], true, null];
		const cases = [
			...bad.map((v) => ({ protocolVersion: '2025-11-25', capabilities: v, clientInfo: { name: 'c', version: '1' } })),
			...bad.map((v) => ({ protocolVersion: '2025-11-25', capabilities: {}, clientInfo: v })),
		];
		const wrong = [];
		for (const params of cases) {
			const s = H.startSession(CONFIG);
			const l = await s.request('initialize', params);
			assertWellFormed(l, JSON.stringify(params));
			if (l.json.error?.code !== -32602)
				wrong.push(`${JSON.stringify(params)} -> ${l.text.slice(0, 120)}`);
			await finish(s);
		}
		assert.deepEqual(wrong, [], 'initialize with a wrongly typed capabilities/clientInfo must be -32602');
	});

	test('logging/setLevel with a level that is not one of the eight is -32602', { timeout: T(10000) }, async () => {
		const s = await session();
		for (const level of ['verbose', '', 'INFO', 'debug ']) {
			const l = await s.request('logging/setLevel', { level });
			assertError(l, [-32602], l.json.id, `level ${JSON.stringify(level)}`);
		}
		for (const level of ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'])
			assert.deepEqual((await s.request('logging/setLevel', { level })).json.result, {}, level);
		await finish(s);
	});

	test('ids of every legal shape come back byte-exact; illegal ones get -32600 with id null', { timeout: T(20000) }, async () => {
		const s = await opened();
		const legal = ['"plain"', '"esc \\" \\\\ \\/ \\b\\f\\n\\r\\t \\u0001 \\u00e9 \\ud83d\\ude00"', '"unicode ✓ 😀 é"',
			'""', '" "', '"0"', '0', '-1', '-0', '9007199254740993', '123456789012345678901234567890', '2147483648'];
		for (const raw of legal) {
			const want = Buffer.from(`"id":${raw},`);
			// Answered by the workbench itself.
			await s.sendLine(`{"jsonrpc":"2.0","id":${raw},"method":"ping"}`);
			let got = await s.drain();
			assert.equal(got.length, 1, `ping id ${raw}`);
			assert.ok(got[0].buf.includes(want), `ping id ${raw} byte-exact: ${got[0].text}`);
			assert.deepEqual(got[0].json.result, {});
			// Routed to a server and spliced back.
			await s.sendLine(useToolLine(raw, 'b', 'ok', 'echo', { message: `m${raw}` }));
			const l = await s.waitLine((x) => x.buf.includes(want), 5000);
			assertText(l, `m${raw}`, `use_tool id ${raw}`);
			// Through an open_toolbox answer.
			await s.sendLine(`{"jsonrpc":"2.0","id":${raw},"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"b"}}}`);
			const o = await s.waitLine((x) => x.buf.includes(want), 5000);
			assertWellFormed(o, `open_toolbox id ${raw}`);
			assert.equal(o.json.result?.structuredContent?.toolbox, 'b');
			got = await quiet(s, 50);
			assert.deepEqual(got.map((g) => g.text), [], `id ${raw}: nothing more`);
		}
		const illegal = ['1.5', '1e3', '-1.0', '1E2', 'true', 'false', 'null', '{}', '{"a":1}', '[]', '[1]'];
		for (const raw of illegal) {
			for (const line of [`{"jsonrpc":"2.0","id":${raw},"method":"ping"}`, useToolLine(raw, 'b', 'ok', 'echo', { message: 'x' })]) {
				await s.sendLine(line);
				const got = await quiet(s, 100);
				assert.equal(got.length, 1, `${line}: ${got.map((g) => g.text).join(' | ')}`);
				assertError(got[0], [-32600], null, `id ${raw}`);
			}
		}
		await finish(s);
	});

	test('the same id on two calls in flight: both answered, nothing lost', { timeout: T(20000) }, async () => {
		const s = await opened();
		await s.sendLine(useToolLine('"dup"', 'b', 'ok', 'sleep', { ms: 300 }));
		await s.sendLine(useToolLine('"dup"', 'b', 'a', 'sleep', { ms: 100 }));
		const l1 = await s.waitId('dup', 3000);
		const l2 = await s.waitId('dup', 3000);
		assert.deepEqual([H.text(l1), H.text(l2)], ['slept 100', 'slept 300']);
		assert.deepEqual((await quiet(s)).map((g) => g.text), []);
		await finish(s);
	});

	test('requests before initialize are refused (ping is not); no server starts', { timeout: T(20000) }, async () => {
		const s = H.startSession(CONFIG);
		await s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
		await s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
		for (const [method, params] of [['tools/list', {}], ['tools/call', { name: 'open_toolbox', arguments: { toolbox_name: 'b' } }],
		    ['tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'b', server: 'ok', name: 'echo' }, arguments: { message: 'x' } } }],
		    ['logging/setLevel', { level: 'debug' }]]) {
			const l = await s.request(method, params);
			assertError(l, [-32600, -32002, -32000], l.json.id, `${method} before initialize`);
		}
		assert.deepEqual((await s.request('ping')).json.result, {}, 'ping before initialize');
		await L.sleep(200);
		assert.equal(s.pids.size, 0, 'no server started before initialize');
		await s.initialize();
		const l = await s.open('b');
		assert.equal(l.json.result.structuredContent.servers_connected, 3);
		await finish(s);
	});

	test('a second initialize is refused and the session goes on', { timeout: T(20000) }, async () => {
		const s = await opened();
		for (const v of ['2025-11-25', '2024-11-05', 'garbage']) {
			const l = await s.request('initialize', { protocolVersion: v, capabilities: {}, clientInfo: { name: 'again', version: '2' } });
			assertError(l, [-32600], l.json.id, `second initialize ${v}`);
		}
		assertText(await s.useTool('b', 'ok', 'echo', { message: 'still' }), 'still');
		assert.equal((await s.request('tools/list')).json.result.tools.length, 3);
		await finish(s);
	});

	test('a burst of 10,000 requests unread: the workbench stops reading, RSS bounded, every id answered once', { timeout: T(150000) }, async () => {
		const s = await opened();
		const base = H.rssKb(s.pid);
		const N = 10000;
		const lines = [];
		for (let i = 0; i < N; i++) {
			// An open_toolbox answer is ~30 kB: 100 MB in all, far above any
			// sane high-water mark.
			if (i % 3 === 0)
				lines.push(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"b"}}}`);
			else if (i % 3 === 1)
				lines.push(`{"jsonrpc":"2.0","id":${i},"method":"ping"}`);
			else
				lines.push(useToolLine(i, 'b', i % 2 ? 'ok' : 'a', 'echo', { message: `m${i}` }));
		}
		s.pause();
		let written = false;
		const w = s.write(lines.join('\n') + '\n').then(() => {
			written = true;
		});
		let peak = 0;
		for (let k = 0; k < 15; k++) {
			await L.sleep(100);
			peak = Math.max(peak, H.rssKb(s.pid));
		}
		assert.equal(written, false, 'with nobody reading, the workbench must stop reading (backpressure)');
		assertRss(peak - base < 32 * MB, `RSS grew by ${peak - base} kB while the client did not read`);
		s.resume();
		const count = new Map();
		while (count.size < N) {
			const l = await s.readLine(10000);
			assertWellFormed(l, 'burst answer');
			const id = l.json.id;
			assert.ok(Number.isInteger(id) && id >= 0 && id < N, `unexpected line ${l.text.slice(0, 200)}`);
			assert.equal(count.has(id), false, `id ${id} answered twice`);
			count.set(id, 1);
			if (id % 3 === 2)
				assert.equal(H.text(l), `m${id}`);
			else if (id % 3 === 0)
				assert.equal(l.json.result.structuredContent.servers_connected, 3);
			peak = Math.max(peak, H.rssKb(s.pid));
		}
		await w;
		assertRss(peak - base < 32 * MB, `RSS grew by ${peak - base} kB`);
		assert.deepEqual((await quiet(s)).map((g) => g.text), [], 'no answer twice');
		await finish(s);
	});

	test('a burst of requests with large answers unread: RSS bounded by the high-water mark, not the input chunk', { timeout: T(150000) }, async () => {
		// Dynamic mode, a server with 1,000 tools: each tools/list answer is ~220 kB.
		const config = { toolboxes: { b: box({ m: L.mock('--tools', '1000') }) } };
		const s = await opened(config, 'b', { args: ['--mode', 'dynamic'] });
		await quiet(s);
		const one = await s.request('tools/list');
		const size = one.buf.length;
		assert.ok(size > 150000, `answer size ${size}`);
		const base = H.rssKb(s.pid);
		const N = 1000;
		const lines = [];
		for (let i = 0; i < N; i++)
			lines.push(`{"jsonrpc":"2.0","id":${i},"method":"tools/list"}`);
		s.pause();
		s.write(lines.join('\n') + '\n');
		let peak = 0;
		for (let k = 0; k < 15; k++) {
			await L.sleep(100);
			peak = Math.max(peak, H.rssKb(s.pid));
		}
		assertRss(peak - base < 64 * MB,
		    `RSS grew by ${Math.round((peak - base) / MB)} MB with ${N} unread answers of ${size} bytes (high water is 4 MiB)`);
		s.resume();
		const seen = new Set();
		while (seen.size < N) {
			const l = await s.readLine(10000);
			assert.equal(seen.has(l.json.id), false);
			seen.add(l.json.id);
		}
		await finish(s);
	});

	test('many large calls to one server while the client reads: no deadlock, none refused', { timeout: T(180000) }, async () => {
		// The requests queue up for the server faster than it reads them
		// (100 MB of them, far beyond every pipe and high-water mark);
		// the server's answers must still be read meanwhile.
		const s = await opened();
		const N = 1000;
		const msg = 'y'.repeat(100000);
		const lines = [];
		for (let i = 0; i < N; i++)
			lines.push(useToolLine(i, 'b', 'ok', 'echo', { message: msg }));
		s.write(lines.join('\n') + '\n');
		const seen = new Set();
		while (seen.size < N) {
			let l;
			try {
				l = await s.readLine(10000);
			} catch (e) {
				assert.fail(`stalled after ${seen.size} of ${N} answers: ${e.message.slice(0, 300)}`);
			}
			// A server that reads, however slowly, is not "stuck": no call
			// to it may be refused.
			assert.ok(!l.json.result?.isError, `call ${l.json.id} failed: ${l.text.slice(0, 300)}`);
			assert.equal(H.text(l).length, msg.length);
			seen.add(l.json.id);
		}
		await finish(s);
	});

	test('client vanishes mid-call (stdin EOF): the workbench exits and its children are gone', { timeout: T(20000) }, async () => {
		const config = {
			toolboxes: {
				b: box({
					a: L.mock('--hostile', '--linger', '--ignore-sigterm'),
					g: L.mock('--grandchild', '--ignore-sigterm'),
					ok: L.mock(),
				}),
			},
		};
		const s = await opened(config);
		await L.waitFor(() => s.grandchildren.size === 1, T(3000), 'grandchild pid');
		await s.sendLine(useToolLine('"v1"', 'b', 'a', 'never_answer', {}));
		await s.sendLine(useToolLine('"v2"', 'b', 'ok', 'sleep', { ms: 60000 }));
		await s.sendLine(useToolLine('"v3"', 'b', 'g', 'sleep', { ms: 60000 }));
		await L.sleep(100);
		await exitsAfter(s, () => s.proc.stdin.destroy(), 'the workbench exits after stdin EOF');
		await finish(s);
	});

	test('client stops reading, then closes stdin: the workbench still sees it, exits in time, its children are gone', { timeout: T(20000) }, async () => {
		const config = { toolboxes: { b: box({ m: L.mock() }) } };
		const s = await opened(config);
		s.pause();
		// More than the 4 MiB high-water mark waits for the client.
		await s.sendLine(useToolLine(1, 'b', 'm', 'big', { bytes: 20000000 }));
		await L.sleep(T(500));
		await exitsAfter(s, () => s.proc.stdin.end(), 'the workbench exits after stdin EOF while its output is unread');
		await finish(s);
	});

	test('client vanishes by closing its read end: the workbench exits on EPIPE', { timeout: T(20000) }, async () => {
		const s = await opened();
		await s.sendLine(useToolLine('"e1"', 'b', 'ok', 'sleep', { ms: 300 }));
		s.proc.stdout.destroy();
		const r = await L.within(s.exited, T(6000));
		assert.ok(r !== null, 'the workbench exits when its answers cannot be written');
		assert.ok(r.code === 0 || r.code === 1 || r.signal === 'SIGPIPE', `exit ${JSON.stringify(r)}`);
		await L.waitFor(() => H.survivors([...s.pids]).length === 0, T(3000), 'children gone');
		H.forget(s);
	});

	test('client vanishes with both pipes, with many calls in flight', { timeout: T(20000) }, async () => {
		const s = await opened();
		const lines = [];
		for (let i = 0; i < 500; i++)
			lines.push(useToolLine(i, 'b', i % 2 ? 'ok' : 'a', 'sleep', { ms: 50 + (i % 7) * 30 }));
		await s.write(lines.join('\n') + '\n');
		await L.sleep(50);
		s.proc.stdin.destroy();
		s.proc.stdout.destroy();
		const r = await L.within(s.exited, T(5000));
		assert.ok(r !== null, 'the workbench exits');
		await L.waitFor(() => H.survivors([...s.pids]).length === 0, T(3000), 'children gone');
		H.forget(s);
	});
});

// ===========================================================================

describe('hostile servers', () => {
	test('exits during initialize: reported, the others work; alone: the open fails clearly', { timeout: T(20000) }, async () => {
		const config = {
			toolboxes: {
				b: box({ ok: L.mock(), dying: L.mock('--exit-on-init', '7') }),
				solo: box({ dying: L.mock('--exit-on-init', '9') }),
			},
		};
		const s = await session(config);
		const l = await s.open('b');
		const sc = l.json.result.structuredContent;
		assert.equal(sc.servers_connected, 1);
		assert.equal(sc.servers_failed?.length, 1, l.text.slice(0, 500));
		assert.equal(sc.servers_failed[0].server, 'dying');
		assert.match(sc.servers_failed[0].error, /exited with status 7/);
		assert.match(sc.servers_failed[0].error, /dying on init/);
		assertText(await s.useTool('b', 'ok', 'echo', { message: 'fine' }), 'fine');
		assertToolError(await s.useTool('b', 'dying', 'echo', { message: 'x' }), /dying|exited with status 7|not found/);
		const f = await s.open('solo');
		assertToolError(f, /Failed to open toolbox 'solo'[\s\S]*exited with status 9/);
		assertText(await s.useTool('b', 'ok', 'echo', { message: 'fine' }), 'fine');
		await finish(s);
	});

	// A server that answers initialize with an error, or tools/list without
	// a tools array, as an inline node script.
	function scripted(answer) {
		const js = `require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
			const m = JSON.parse(l);
			const a = (${answer})(m);
			if (a && m.id !== undefined)
				process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...a }) + '\\n');
		});`;
		return { command: process.execPath, args: ['-e', js] };
	}

	test('fails while its own output is read (initialize error, no tools array, a tool list over the limit): reported; the workbench lives', { timeout: T(20000) }, async () => {
		const INIT = "{ result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'x', version: '1' } } }";
		const config = {
			maxMessageBytes: 4096,
			toolboxes: {
				b: box({
					ok: L.mock(),
					initerr: scripted("(m) => m.method === 'initialize' ? { error: { code: -32000, message: 'nope' } } : null"),
					notools: scripted(`(m) => m.method === 'initialize' ? ${INIT} : m.method === 'tools/list' ? { result: {} } : null`),
					huge: L.mock('--tools', '300'),
				}),
			},
		};
		const s = await session(config);
		for (let round = 0; round < 2; round++) {
			const l = await s.open('b');
			const sc = l.json.result.structuredContent;
			assert.equal(sc?.servers_connected, 1, l.text.slice(0, 800));
			const why = Object.fromEntries(sc.servers_failed.map((f) => [f.server, f.error]));
			assert.deepEqual(Object.keys(why).sort(), ['huge', 'initerr', 'notools'], l.text.slice(0, 800));
			assert.match(why.initerr, /initialize failed: nope/);
			assert.match(why.notools, /tools/);
			assert.match(why.huge, /4096/);
			assertText(await s.useTool('b', 'ok', 'echo', { message: `round ${round}` }), `round ${round}`);
		}
		await finish(s);
	});

	test('malformed answers to calls (no jsonrpc, a result that is not an object, the id twice): isError; nothing malformed reaches the client', { timeout: T(20000) }, async () => {
		const answers = {
			nojsonrpc: '{"id":ID,"result":{"content":[]}}',
			number: '{"jsonrpc":"2.0","id":ID,"result":5}',
			twoids: '{"jsonrpc":"2.0","id":ID,"result":{"content":[]},"id":"zz"}',
			fine: '{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"fine"}]}}',
		};
		const tools = Object.keys(answers).map((name) => ({ name, inputSchema: { type: 'object' } }));
		const bad = scripted(`(m) => m.method === 'initialize' ? { result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'bad', version: '1' } } }
			: m.method === 'tools/list' ? { result: { tools: ${JSON.stringify(tools)} } }
			: m.method === 'tools/call' ? (process.stdout.write(${JSON.stringify(answers)}[m.params.name].replace('ID', JSON.stringify(m.id)) + '\\n'), null)
			: null`);
		const s = await session({ toolboxes: { b: box({ bad }) } });
		const l = await s.open('b');
		assert.equal(l.json?.result?.isError, undefined, l.text.slice(0, 500));
		for (const name of ['nojsonrpc', 'number', 'twoids']) {
			const others = [];
			const a = await s.useTool('b', 'bad', name, {}, 5000, others);
			assertToolError(a, /protocol error: its answer is not a JSON-RPC 2.0 response/, name);
			assert.deepEqual(others.map((o) => o.text), [], `${name}: nothing else`);
		}
		assertText(await s.useTool('b', 'bad', 'fine', {}), 'fine');
		assert.deepEqual((await s.drain()).map((o) => o.text), [], 'no stray answer (id "zz")');
		await finish(s);
	});

	test('exits mid-call: every call in flight on it gets a clear error; its neighbours finish; it restarts', { timeout: T(20000) }, async () => {
		const s = await opened();
		const pid0 = [...s.pids];
		await s.sendLine(useToolLine('"n1"', 'b', 'ok', 'sleep', { ms: 400 }));
		for (let i = 0; i < 3; i++)
			await s.sendLine(useToolLine(`"s${i}"`, 'b', 'a', 'sleep', { ms: 10000 }));
		await s.sendLine(useToolLine('"c1"', 'b', 'a', 'crash', { code: 0 }));
		const t0 = Date.now();
		const got = new Map();
		while (got.size < 5) {
			const l = await s.readLine(5000);
			assertWellFormed(l);
			got.set(l.json.id, l);
		}
		assert.ok(Date.now() - t0 < T(2000), `all answered in ${Date.now() - t0} ms`);
		for (const id of ['s0', 's1', 's2', 'c1'])
			assertToolError(got.get(id), /in server 'a' \(toolbox 'b'\): exited with status 0/, id);
		assertText(got.get('n1'), 'slept 400', 'the neighbour is unaffected');
		assertText(await s.useTool('b', 'a', 'echo', { message: 'back' }), 'back');
		// Its start line is on stderr, which may come after the answer.
		await L.waitFor(() => s.pids.size >= pid0.length + 1, T(5000), 'the restart\'s line');
		assert.equal(s.pids.size, pid0.length + 1, 'restarted once');
		assert.deepEqual((await quiet(s)).map((g) => g.text), []);
		await finish(s);
	});

	test('calls that wait for a server to start again reach it in the order they came', { timeout: T(20000) }, async () => {
		const s = await opened();
		assertToolError(await s.useTool('b', 'a', 'crash', { code: 3 }), /exited with status 3/);
		const ids = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
		await s.write(ids.map((id) => useToolLine(`"${id}"`, 'b', 'a', 'echo', { message: id })).join('\n') + '\n');
		const got = [];
		for (const id of ids) {
			const l = await s.readLine(T(5000));
			assertText(l, l.json?.id, id);
			got.push(l.json.id);
		}
		assert.deepEqual(got, ids, 'the echo server answers in the order it was asked');
		await finish(s);
	});

	test('exits between calls: the next call restarts it', { timeout: T(20000) }, async () => {
		const s = await opened();
		const before = s.pids.size;
		assertText(await s.useTool('b', 'a', 'exit_after', { ms: 30, code: 5 }), 'exiting');
		// The exit is an event: wait for the workbench to have seen it.
		await L.waitFor(() => /b\/a: exited with status 5/.test(s.stderrTail), T(5000), 'the exit reported');
		assertText(await s.useTool('b', 'ok', 'echo', { message: 'n' }), 'n');
		assertText(await s.useTool('b', 'a', 'echo', { message: 'again' }), 'again');
		// Its start line comes on stderr, maybe after the answer on stdout.
		await L.waitFor(() => s.pids.size >= before + 1, T(5000), 'the restart\'s line');
		assert.equal(s.pids.size, before + 1, 'one restart');
		assert.match(s.stderrTail, /b\/a: exited with status 5/);
		await finish(s);
	});

	// A signal mask survives exec: whoever starts the workbench may have
	// blocked the signals it lives by (GNU env --block-signal does that;
	// coreutils 8.31 and later, not busybox).
	const blockingEnv = spawnSync('env', ['--block-signal=SIGCHLD', 'true']).status === 0;
	test('started with SIGCHLD and SIGTERM blocked: a crash is still reported as such, and SIGTERM still stops it', {
		timeout: T(20000), skip: blockingEnv ? false : 'this env has no --block-signal',
	}, async () => {
		const wrap = ['env', '--block-signal=SIGCHLD', '--block-signal=SIGTERM'];
		const s = await opened(CONFIG, 'b', { wrap });
		assertToolError(await s.useTool('b', 'a', 'crash', { code: 3 }), /in server 'a' \(toolbox 'b'\): exited with status 3/);
		assertText(await s.useTool('b', 'a', 'echo', { message: 'back' }), 'back');
		await exitsAfter(s, () => process.kill(s.pid, 'SIGTERM'), 'SIGTERM must stop the workbench');
		await L.waitFor(() => H.survivors([...s.pids]).length === 0, T(3000), 'children gone');
		H.forget(s);
	});

	test('crashing on every call: automatic restarts back off (0, 250, 500 ms), calls meanwhile fail at once saying so; open_toolbox starts it at once', { timeout: T(20000) }, async () => {
		const s = await opened();
		const starts = () => s.started.get('b/a').length;
		assertToolError(await s.useTool('b', 'a', 'crash', { code: 3 }), /exited with status 3/, 'crash 1');
		// The first failure: restarted at once by the next call.
		assertText(await s.useTool('b', 'a', 'echo', { message: 'one' }), 'one');
		assertToolError(await s.useTool('b', 'a', 'crash', { code: 3 }), /exited with status 3/, 'crash 2');
		const n = starts();
		const t0 = Date.now();
		const l = await s.useTool('b', 'a', 'echo', { message: 'no' });
		assertToolError(l, /in server 'a' \(toolbox 'b'\): not started again yet after 2 failures in a row; the next try is in (\d+) ms \(open_toolbox tries at once\)\. Last error: exited with status 3/);
		const wait = Number(H.text(l).match(/next try is in (\d+) ms/)[1]);
		assert.ok(wait > 0 && wait <= 250, `backoff ${wait} ms`);
		assert.ok(Date.now() - t0 < T(200), 'answered at once');
		assert.equal(starts(), n, 'not started while it backs off');
		// Once the backoff is over, a call starts it again.
		await L.sleep(wait + 50);
		assertText(await s.useTool('b', 'a', 'echo', { message: 'two' }), 'two');
		// The start is told on stderr, which may arrive after the answer.
		await L.waitFor(() => starts() >= n + 1, T(5000), 'the restart on stderr');
		assert.equal(starts(), n + 1);
		assertToolError(await s.useTool('b', 'a', 'crash', { code: 3 }), /exited with status 3/, 'crash 3');
		const third = H.text(await s.useTool('b', 'a', 'echo', { message: 'no' })).match(/after 3 failures in a row; the next try is in (\d+) ms/);
		assert.ok(third, 'the third backoff told');
		// 500 ms from the crash, less what passed before the call came.
		assert.ok(Number(third[1]) > 250 && Number(third[1]) <= 500, `backoff ${third[1]} ms`);
		// An explicit open_toolbox does not wait.
		const o = await s.open('b');
		assert.equal(o.json.result?.structuredContent?.servers_connected, 3, o.text.slice(0, 300));
		assertText(await s.useTool('b', 'a', 'echo', { message: 'three' }), 'three');
		assertText(await s.useTool('b', 'ok', 'echo', { message: 'n' }), 'n');
		await finish(s);
	});

	test('closes stdout but keeps running (and ignores SIGTERM): error, killed, restartable', { timeout: T(20000) }, async () => {
		const config = { toolboxes: { b: box({ a: L.mock('--hostile', '--linger', '--ignore-sigterm'), ok: L.mock() }) } };
		const s = await opened(config);
		const old = await s.startedPid('b/a');
		await s.sendLine(useToolLine('"n1"', 'b', 'ok', 'sleep', { ms: 300 }));
		const t0 = Date.now();
		const l = await s.useTool('b', 'a', 'close_stdout', {}, 3000);
		assertToolError(l, /closed its standard output/);
		assert.ok(Date.now() - t0 < T(2000), `answered after ${Date.now() - t0} ms`);
		assertText(await s.waitId('n1', 3000), 'slept 300', 'neighbour unaffected');
		await L.waitFor(() => !L.pidAlive(old), T(4000), `lingering server ${old} to be killed`);
		assertText(await s.useTool('b', 'a', 'echo', { message: 'again' }), 'again');
		await finish(s);
	});

	test('never answers: callTimeoutMs ends the call; a cancel frees it; a hung initialize times out', { timeout: T(20000) }, async () => {
		const config = {
			toolboxes: {
				b: box({
					a: L.mock('--hostile'),
					t: { ...L.mock('--hostile'), callTimeoutMs: 500 },
					ok: L.mock(),
				}),
				h: box({ hang: { ...L.mock('--no-init'), initTimeoutMs: 500 }, ok: L.mock() }),
			},
		};
		const s = await opened(config);
		let t0 = Date.now();
		assertToolError(await s.useTool('b', 't', 'never_answer', {}, 3000), /timed out after 500 ms \(callTimeoutMs\)/);
		assert.ok(Date.now() - t0 < T(1500), `${Date.now() - t0} ms`);
		assertText(await s.useTool('b', 't', 'echo', { message: 't ok' }), 't ok');
		await s.sendLine(useToolLine('"hang"', 'b', 'a', 'never_answer', {}));
		await L.sleep(100);
		await s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'hang', reason: 'test' } });
		assert.deepEqual((await quiet(s, 300)).map((g) => g.text), [], 'nothing answered for a cancelled call');
		assertText(await s.useTool('b', 'a', 'echo', { message: 'a ok' }), 'a ok');
		t0 = Date.now();
		const o = await s.open('h', 5000);
		assert.ok(Date.now() - t0 < T(2500), `open answered after ${Date.now() - t0} ms`);
		const sc = o.json.result.structuredContent;
		assert.equal(sc.servers_connected, 1);
		assert.match(sc.servers_failed?.[0]?.error ?? '', /timed out after 500 ms/);
		await finish(s);
	});

	test('answers ids never sent, twice, or of the wrong type: one answer per call, nothing else', { timeout: T(20000) }, async () => {
		const s = await opened();
		assertText(await s.useTool('b', 'a', 'echo', { message: 'warm' }), 'warm');
		let others = [];
		assertText(await s.useTool('b', 'a', 'stray_answers', {}, 5000, others), 'ok');
		assert.deepEqual(others.map((o) => o.text), [], 'stray answers must not reach the client');
		assert.deepEqual((await quiet(s)).map((o) => o.text), []);
		others = [];
		assertText(await s.useTool('b', 'a', 'answer_twice', {}, 5000, others), 'first');
		assert.deepEqual([...others, ...await quiet(s)].map((o) => o.text), [], 'the second answer is dropped');
		// A string "N" is not the id N: the call times out (callTimeoutMs).
		assertToolError(await s.useTool('b', 't', 'wrong_id_type', {}, 3000), /timed out after 500 ms/);
		assert.deepEqual((await quiet(s)).map((o) => o.text), []);
		assertText(await s.useTool('b', 'a', 'echo', { message: 'x' }), 'x');
		assertText(await s.useTool('b', 't', 'echo', { message: 'y' }), 'y');
		await finish(s);
	});

	test('non-JSON and non-JSON-RPC lines on stdout are skipped', { timeout: T(20000) }, async () => {
		const config = { toolboxes: { b: box({ a: L.mock('--hostile'), g: L.mock('--garbage') }) } };
		const s = await opened(config);
		const others = [];
		assertText(await s.useTool('b', 'a', 'garbage_lines', {}, 5000, others), 'ok');
		assert.deepEqual([...others, ...await quiet(s)].map((o) => o.text), [], 'nothing but the answer');
		for (let i = 0; i < 3; i++)
			assertText(await s.useTool('b', 'g', 'echo', { message: `g${i}` }), `g${i}`);
		assertText(await s.useTool('b', 'a', 'echo', { message: 'after' }), 'after');
		await finish(s);
	});

	test('a real server whose every line comes after 20,000 lines of `yes garbage`: a few warnings, then counts; every answer gets through', { timeout: T(60000) }, async () => {
		// server-everything (the SDK's) behind a shell loop that writes
		// `yes garbage | head -n 20000` before each line the server writes.
		const GARBAGE = 20000;
		const ev = L.everythingServer();
		const loop = `"$@" | while IFS= read -r l; do yes garbage | head -n ${GARBAGE}; printf '%s\\n' "$l"; done`;
		const config = { toolboxes: { b: box({ noisy: { command: 'sh', args: ['-c', loop, 'sh', ev.command, ...ev.args] } }) } };
		let ours = 0;		// Bytes of the workbench's own lines on stderr.
		const warned = [];
		const counts = [];
		const s = await opened(config, 'b', {
			onStderrLine: (l) => {
				if (!l.startsWith('mcp-workbench: '))
					return;
				ours += l.length + 1;
				if (l.startsWith('mcp-workbench: b/noisy: ignoring a line that is not a JSON-RPC message (7 bytes)'))
					warned.push(l);
				const m = l.match(/^mcp-workbench: b\/noisy: (\d+) more warnings? like the above in the last (\d+) s, not shown$/);
				if (m)
					counts.push(Number(m[1]));
			},
		});
		for (let i = 0; i < 5; i++)
			assertText(await s.useTool('b', 'noisy', 'echo', { message: `m${i}` }, 10000), `Echo: m${i}`);
		await finish(s);
		// initialize, tools/list (and the other lists), five calls: at least
		// seven lines of the server, each after its garbage, all read.
		const total = warned.length + counts.reduce((a, b) => a + b, 0);
		assert.equal(warned.length, 5, `the first five are shown: ${warned.length}`);
		assert.ok(counts.length >= 1 && total >= 7 * GARBAGE, `counted: ${counts} (${total} lines)`);
		assert.ok(ours < 4096, `the workbench wrote ${ours} bytes on stderr for ${total} garbage lines`);
	});

	test('warnings held back are counted when their interval ends, the server running and quiet', { timeout: T(40000) }, async () => {
		const config = { toolboxes: { b: box({ fx: L.fixtureServer() }) } };
		const lines = [];
		const s = await opened(config, 'b', { onStderrLine: (l) => lines.push(l) });
		const t0 = Date.now();
		assertText(await s.useTool('b', 'fx', 'send', { lines: Array(8).fill('not json') }), 'sent 8');
		// Nothing else happens: the workbench's own timer brings the count.
		await L.waitFor(() => lines.some((l) => / b\/fx: \d+ more warnings? like/.test(l)), T(20000), 'the count');
		const took = Date.now() - t0;
		const ours = lines.filter((l) => l.startsWith('mcp-workbench: b/fx: '));
		assert.deepEqual(ours.map((l) => l.replace(/\(\d+ bytes\)/, '(N bytes)')),
		    [...Array(5).fill('mcp-workbench: b/fx: ignoring a line that is not a JSON-RPC message (N bytes)'),
			'mcp-workbench: b/fx: 3 more warnings like the above in the last 10 s, not shown']);
		assert.ok(took >= 9000, `the count came after ${took} ms, before the interval of 10 s ended`);
		assertText(await s.useTool('b', 'fx', 'send', { lines: ['{"jsonrpc":"2.0","id":"nobody"}'] }), 'sent 1');
		await finish(s);
	});

	test('a server writing 100,000 levels of nesting blocks nobody', { timeout: T(30000) }, async () => {
		const s = await opened();
		await s.sendLine(useToolLine('"deep"', 'b', 'a', 'garbage_lines', { depth: 100000 }));
		await L.sleep(50);
		const t0 = Date.now();
		const others = [];
		const l = await s.useTool('b', 'ok', 'echo', { message: 'meanwhile' }, 5000, others);
		assertText(l, 'meanwhile');
		assert.ok(Date.now() - t0 < T(2000), `a call to another server took ${Date.now() - t0} ms`);
		// The deep call may well have been answered first.
		const deep = others.find((o) => o.json?.id === 'deep') ?? await s.waitId('deep', 5000);
		assertText(deep, 'ok');
		await finish(s);
	});

	// A flood is drained at its pace, whatever is shown of it: a server's
	// stderr is shown up to 10,000 lines per 30 s (journald's rule), the
	// rest counted, so that a flood does not fill the client's log.
	test('floods stderr at 5 MB/s for 4 s: drained while calls keep working; 10,000 lines shown, the rest counted', { timeout: T(30000) }, async () => {
		let flood = 0;
		let counted = null;
		const s = await opened(CONFIG, 'b', {
			onStderrLine(l) {
				if (l.startsWith('[b/a] flood '))
					flood++;
				const m = l.match(/^mcp-workbench: b\/a: (\d+) more lines of its standard error in the last \d+ s, not shown$/);
				if (m)
					counted = Number(m[1]);
			},
		});
		const base = H.rssKb(s.pid);
		// The rate of calls without a flood, on this machine as busy as
		// it is now: the flood may not take more than three quarters of it.
		const echoes = async (until, n0) => {
			let n = n0;
			let worst = 0;
			while (until(n)) {
				for (const srv of ['a', 'ok']) {
					const c0 = Date.now();
					assertText(await s.useTool('b', srv, 'echo', { message: `f${n}` }), `f${n}`);
					worst = Math.max(worst, Date.now() - c0);
					n++;
				}
				await L.sleep(20);
			}
			return { n: n - n0, worst };
		};
		const q0 = Date.now();
		const quiet = await echoes(() => Date.now() - q0 < 1000, 0);
		const quietRate = quiet.n / (Date.now() - q0);
		const t0 = Date.now();
		const fpid = Number(H.text(await s.useTool('b', 'a', 'flood_stderr', { bytes: 20e6, ms: 4000 })).match(/flooding pid=(\d+)/)[1]);
		let peak = 0;
		let ended = null;
		const during = await echoes(() => {
			peak = Math.max(peak, H.rssKb(s.pid));
			if (ended === null && !L.pidAlive(fpid))
				ended = Date.now();
			return ended === null && Date.now() - t0 < T(15000);
		}, quiet.n);
		const rate = during.n / (Date.now() - t0);
		assert.ok(ended !== null, 'the flood ended');
		assert.ok(ended - t0 < T(6000), `the flood was slowed to ${ended - t0} ms: stderr not drained fast enough`);
		assert.ok(during.n >= 10 && rate >= quietRate / 4,
		    `${during.n} calls during the flood, ${(rate * 1000).toFixed(1)}/s against ${(quietRate * 1000).toFixed(1)}/s before it`);
		assert.ok(during.worst < Math.max(T(1000), 20 * quiet.worst), `a call took ${during.worst} ms during the flood (${quiet.worst} ms before it)`);
		assertRss(peak - base < 16 * MB, `RSS grew by ${peak - base} kB`);
		await finish(s);
		// What was held back is told when the server stops.
		await L.waitFor(() => counted !== null, T(3000), 'the count of the lines not shown');
		// One burst of the server's lines, its own start lines among them.
		assert.ok(flood > 9900 && flood <= 10000, `${flood} lines of the flood shown`);
		assert.ok(counted >= 150000, `${counted} lines counted as not shown`);
	});

	test('floods stderr while nobody reads the workbench\'s stderr: still drained, calls work', { timeout: T(30000) }, async () => {
		const s = await opened();
		s.proc.stderr.pause();
		const t0 = Date.now();
		const fpid = Number(H.text(await s.useTool('b', 'a', 'flood_stderr', { bytes: 50e6 })).match(/pid=(\d+)/)[1]);
		let n = 0;
		while (L.pidAlive(fpid) && Date.now() - t0 < T(15000)) {
			assertText(await s.useTool('b', 'ok', 'echo', { message: `q${n}` }), `q${n}`);
			n++;
		}
		assert.equal(L.pidAlive(fpid), false, `the flood (50 MB) did not end within 15 s: its stderr is not drained`);
		assert.ok(n > 0);
		s.proc.stderr.resume();
		await finish(s);
	});

	// The log waits in the workbench while its stderr is full; once read
	// again, the rest must come though nothing else happens (the loop
	// watches stderr for that; it used to wait for the next event).
	test('what waits for the workbench\'s stderr is written once it is read again, with nothing else going on', { timeout: T(30000) }, async () => {
		const s = L.startRaw({ cache: false, toolboxes: { b: { description: 'b', mcpServers: { talk: L.mock('--stderr-lines', '9000') } } } });
		s.proc.stderr.pause();
		try {
			await s.initialize();
			// 9000 lines (280 kB): more than a pipe and the reader's buffer.
			const { json } = await s.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'b' } } }, T(15000));
			assert.equal(json.result?.structuredContent?.servers_connected, 1, JSON.stringify(json).slice(0, 300));
			s.proc.stderr.resume();
			await L.waitFor(() => s.stderr.includes('mock stderr line 9000\n'), T(5000), 'the server\'s last line on the workbench\'s stderr');
			assert.doesNotMatch(s.stderr, /of log dropped/);
		} finally {
			s.proc.stderr.resume();
			await s.close();
		}
	});

	// The answer passes STREAM_MIN, so its start is passed on as it comes
	// (cut-through) until the limit: the client gets that one line cut short,
	// which it cannot parse, then the call's isError.
	test('a 1 GB line on stdout: cut short at the limit, then isError naming the size and the limit; bounded memory; others unaffected', { timeout: T(150000) }, async () => {
		const s = await opened();
		const GIG = H.WRAPPED ? 1e8 : 1e9;	// 1 GB through valgrind takes minutes
		await s.sendLine(useToolLine('"gig"', 'b', 'a', 'big', { bytes: GIG }));
		let n = 0;
		let answer = null;
		let cut = 0;
		const t0 = Date.now();
		while (answer === null && Date.now() - t0 < T(90000)) {
			const id = `o${n}`;
			await s.sendLine(useToolLine(JSON.stringify(id), 'b', 'ok', 'echo', { message: id }));
			const others = [];
			// Bounded, not immediate: the machine may be loaded.
			const l = await s.waitId(id, T(15000), others);
			assertText(l, id);
			for (const o of others) {
				if (o.json === undefined && o.text.startsWith('{"jsonrpc":"2.0","id":"gig","result":')) {
					assert.ok(o.text.length <= 16777216, `cut at the limit: ${o.text.length} bytes`);
					cut++;
					continue;
				}
				assert.equal(o.json?.id, 'gig', `unexpected line ${o.text.slice(0, 200)}`);
				answer = o;
			}
			n++;
		}
		if (answer === null) {
			const rest = [];
			answer = await s.waitId('gig', T(10000), rest);
			cut += rest.filter((o) => o.json === undefined).length;
		}
		assert.equal(cut, 1, 'one line cut short');
		assertToolError(answer, /16777216/);
		const m = H.text(answer).match(/(\d+) bytes/);
		assert.ok(m && Number(m[1]) >= GIG, `size named: ${H.text(answer)}`);
		assert.ok(n >= 2, 'the other server answered meanwhile');
		const hwm = H.hwmKb(s.pid);
		assertRss(hwm < 80 * MB, `peak RSS ${hwm} kB`);
		// The same server resynchronises after the line.
		assertText(await s.useTool('b', 'a', 'echo', { message: 'after' }), 'after');
		assertText(await s.useTool('b', 'a', 'big_noise', { bytes: 50e6 }, 15000), 'ok');
		await finish(s);
	});

	test('an oversized answer with the id last (TypeScript SDK order) still ends the call with isError', { timeout: T(30000) }, async () => {
		const s = await opened();
		const l = await s.useTool('b', 'a', 'big_id_last', { bytes: 20e6 }, 8000).catch((e) => {
			assert.fail(`no answer within 8 s: the call hangs (${e.message.slice(0, 100)})`);
		});
		assertToolError(l, /16777216/);
		assert.match(H.text(l), /\d{8,} bytes/);
		await finish(s);
	});

	test('a server flooding notifications while the client does not read: memory bounded, nothing lost', { timeout: T(40000) }, async () => {
		const s = await opened();
		const base = H.rssKb(s.pid);
		s.pause();
		await s.sendLine(useToolLine('"lf"', 'b', 'a', 'log_flood', { count: 20000, bytes: 1000 }));
		let peak = 0;
		for (let k = 0; k < 15; k++) {
			await L.sleep(100);
			peak = Math.max(peak, H.rssKb(s.pid));
		}
		assertRss(peak - base < 32 * MB, `RSS grew by ${peak - base} kB holding 20 MB of notifications`);
		s.resume();
		let logs = 0;
		const l = await s.waitLine((x) => {
			if (x.json?.method === 'notifications/message') {
				assert.equal(x.json.params.data, `${logs} ${'l'.repeat(1000)}`, 'in order, intact');
				logs++;
				return false;
			}
			return true;
		}, 20000);
		assert.equal(l.json.id, 'lf');
		assert.equal(logs, 20000, 'every notification arrives');
		assertText(l, 'ok');
		await finish(s);
	});

	test('invalid UTF-8 in a server\'s answer reaches the client as valid UTF-8', { timeout: T(10000) }, async () => {
		const s = await opened();
		const l = await s.useTool('b', 'a', 'bad_utf8', {});
		assertWellFormed(l, 'bad_utf8 answer');
		assert.match(H.text(l), /^bad .* end$/);
		await finish(s);
	});

	// Server a stops reading its stdin, then 6 MB of calls for it are sent
	// (not awaited: if the workbench stops reading us, node buffers them).
	async function jamServerA(s) {
		assertText(await s.useTool('b', 'a', 'stop_reading', {}), 'ok');
		const big = 'z'.repeat(100000);
		const lines = [];
		for (let i = 0; i < 60; i++)
			lines.push(useToolLine(`"stuck${i}"`, 'b', 'a', 'echo', { message: big }));
		s.proc.stdin.write(lines.join('\n') + '\n');
	}

	test('a server that stops reading its stdin blocks nobody else', { timeout: T(30000) }, async () => {
		const s = await opened();
		await jamServerA(s);
		await L.sleep(300);
		const t0 = Date.now();
		s.proc.stdin.write(useToolLine('"free"', 'b', 'ok', 'echo', { message: 'free' }) + '\n');
		s.proc.stdin.write('{"jsonrpc":"2.0","id":"p","method":"ping"}\n');
		const want = new Map([['free', null], ['p', null]]);
		const others = [];
		while (want.get('free') === null || want.get('p') === null) {
			const l = await s.readLine(5000).catch((e) => {
				assert.fail(`blocked behind the stuck server: ${e.message.slice(0, 200)}`);
			});
			if (want.has(l.json?.id))
				want.set(l.json.id, l);
			else
				others.push(l);
		}
		assertText(want.get('free'), 'free');
		assert.deepEqual(want.get('p').json.result, {});
		assert.ok(Date.now() - t0 < T(2000), `took ${Date.now() - t0} ms`);
		for (const o of others)
			assertToolError(o, /in server 'a'/, 'only errors for the stuck server may come meanwhile');
		await finish(s);
	});

	// Its last words are at most what its pipes hold; a process it left
	// behind writing for ever must not keep the workbench reading them.
	for (const to of ['stdout', 'stderr']) {
		test(`a server that exits while a process it left behind floods its ${to}: the workbench goes on`, { timeout: T(20000) }, async () => {
			const flood = to === 'stderr' ? 'yes >&2' : 'yes';
			const config = {
				toolboxes: {
					// It says its pid (its group's) as the mock does ($$ is
					// a literal $ in a configuration).
					f: box({ s: { command: '/bin/sh', args: ['-c', `echo "mock-server: started pid=$$$$" >&2; ${flood} & sleep 0.3; exit 3`] } }),
				},
			};
			const s = await session(config);
			const l = await s.open('f', T(5000));
			assert.equal(l.json?.result?.isError, true, l.text.slice(0, 300));
			assert.match(H.text(l), /exited with status 3/);
			const p = await s.request('ping', {}, T(3000));
			assert.deepEqual(p.json?.result, {});
			assert.ok(s.pids.size > 0, 'the server was seen');
			await L.waitFor(() => H.survivors([...s.pids]).length === 0, T(3000), 'the flood to end');
			await finish(s);
		});
	}

	test('a server that stops reading its stdin does not keep the workbench alive after the client leaves', { timeout: T(20000) }, async () => {
		const s = await opened();
		await jamServerA(s);
		await L.sleep(500);
		await exitsAfter(s, () => s.proc.stdin.destroy(), 'the workbench must exit after the client closes stdin');
		await L.waitFor(() => H.survivors([...s.pids]).length === 0, T(3000), 'children gone');
		H.forget(s);
	});

	// Each of these has a timer running; none may make poll() spin.
	test('the workbench sleeps while it waits: a call pending, a server starting, a server stuck', { timeout: T(30000) }, async () => {
		const config = {
			toolboxes: {
				...CONFIG.toolboxes,
				slow: box({ z: L.mock('--init-delay', '20000') }),
			},
		};
		const s = await opened(config);
		const idle = async (what) => {
			const cpu0 = H.cpuMs(s.pid);
			await L.sleep(1000);
			const spent = H.cpuMs(s.pid) - cpu0;
			assert.ok(spent < 300, `the workbench used ${spent} ms of CPU in 1 s (${what})`);
		};
		await idle('open, nothing to do');
		await s.sendLine(useToolLine('"zz"', 'b', 'ok', 'sleep', { ms: 30000 }));
		await s.sendLine('{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"slow"}}}');
		await L.sleep(200);
		await idle('a call pending, a server starting');
		await jamServerA(s);
		await L.sleep(T(1500));
		await idle('a server stuck');
		await finish(s);
	});

	test('blank lines, a BOM and CRLF framing from a server are tolerated', { timeout: T(10000) }, async () => {
		const s = await opened();
		const others = [];
		assertText(await s.useTool('b', 'a', 'framing', {}, 5000, others), 'ok');
		assert.deepEqual([...others, ...await quiet(s)].map((o) => o.text), []);
		await finish(s);
	});

	test('grandchildren that keep the pipes open: a crash is still reported, the group is killed', { timeout: T(20000) }, async () => {
		const config = { toolboxes: { b: box({ g: L.mock('--hostile', '--grandchild'), ok: L.mock() }) } };
		const s = await opened(config);
		await L.waitFor(() => s.grandchildren.size === 1, T(3000), 'grandchild pid');
		const gc = [...s.grandchildren][0];
		const t0 = Date.now();
		assertToolError(await s.useTool('b', 'g', 'crash', {}, 4000), /exited with status 3/);
		assert.ok(Date.now() - t0 < T(2000), `crash reported after ${Date.now() - t0} ms`);
		await L.waitFor(() => !L.pidAlive(gc), T(4000), `grandchild ${gc} to be killed`);
		assertText(await s.useTool('b', 'g', 'echo', { message: 'again' }), 'again');
		assertText(await s.useTool('b', 'ok', 'echo', { message: 'ok' }), 'ok');
		await L.waitFor(() => s.grandchildren.size === 2, T(3000), 'second grandchild');
		await finish(s);
	});

	test('ignores SIGTERM, lingers past EOF, has a grandchild: shutdown still ends everything in time', { timeout: T(20000) }, async () => {
		const config = {
			toolboxes: {
				b: box({
					x: L.mock('--hostile', '--ignore-sigterm', '--linger', '--grandchild'),
					y: L.mock('--ignore-sigterm', '--grandchild'),
					ok: L.mock(),
				}),
			},
		};
		const s = await opened(config);
		await L.waitFor(() => s.grandchildren.size === 2, T(3000), 'grandchildren');
		const t0 = Date.now();
		await finish(s);
		assert.ok(Date.now() - t0 < T(3500), `shutdown took ${Date.now() - t0} ms`);
	});
});
