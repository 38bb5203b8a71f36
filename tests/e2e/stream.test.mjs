// Cut-through of large results: a server's answer to a routed tools/call
// that grows past 256 KiB before its newline goes to the client as it
// arrives.  The client gets the same result as before (its own id, the
// content byte for byte, invalid UTF-8 as U+FFFD) in either member order;
// nothing is written into the middle of a streamed line; a streamed answer
// that breaks (no JSON, the server exits or closes stdout, the total passes
// maxMessageBytes) ends the client's line there, and the call gets an error
// result; while the client does not read, the server is not read either,
// so the workbench's memory stays bounded.
//
// The servers are the C mock with --hostile (big, big_id_last, big_cut,
// log_flood) and the fixture server (progress).  The SDK client reads
// lines of up to 10 MiB (its ReadBuffer limit), so the 16 MB answer is
// read by the byte-level client of hostile-lib.mjs.

import { describe, test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import * as L from './lib.mjs';
import * as H from './hostile-lib.mjs';

const { withWorkbench, text, assertOk, openOk } = L;
const T = H.T;

after(H.cleanupAll);
afterEach(H.cleanupAll);

const CUT_AT = 262144;		// answers longer than this are streamed
const BIG = 3000000;		// a streamed answer
const CUT = 2000000;		// a streamed answer that breaks
// Just under the default maxMessageBytes; 4 MB under a wrapper (make asan,
// make valgrind), where RSS is not checked and 16 MB takes long.
const HUGE = H.WRAPPED ? 4000000 : 16000000;
const MB = 1024;		// kB per MB, for VmHWM (kB)
const CALL_LIMIT = T(6000);	// callTimeoutMs of a: a call never hangs
const QUICK = T(5000);		// a break is answered before that could

function box(servers, description = 'Stream box') {
	return { description, mcpServers: servers };
}

// a streams and breaks, ok answers small calls (and logs), fx sends progress.
const CONFIG = {
	toolboxes: {
		b: box({
			a: { ...L.mock('--hostile'), callTimeoutMs: CALL_LIMIT },
			ok: L.mock('--hostile', '--name', 'ok'),
			fx: L.fixtureServer(),
		}),
	},
};

// Everything the SDK client reports through onerror: a malformed line, an
// answer to an id it does not know, progress for a token it does not know.
function watchErrors(client) {
	const errors = [];
	client.onerror = (e) => errors.push(e);
	return errors;
}

function describeErrors(errors) {
	return JSON.stringify(errors.map((e) => `${e?.name}: ${String(e?.message).slice(0, 200)}`));
}

// Exactly one error, and that a line that is not JSON.
function assertOneMalformedLine(errors, what) {
	assert.equal(errors.length, 1, `${what}: expected one malformed line, got ${describeErrors(errors)}`);
	assert.ok(errors[0] instanceof SyntaxError, `${what}: not a JSON parse error: ${describeErrors(errors)}`);
}

// s is all 'x', n of them (without making a regular expression walk 16 MB).
function assertXs(s, n, what) {
	assert.equal(s.length, n, `${what}: length`);
	assert.ok(s === 'x'.repeat(n), `${what}: not all 'x'`);
}

// Mock starts of toolbox/server seen on the workbench's stderr.
function starts(wb, toolbox, server) {
	return L.mockStarts(wb.stderr, `[${toolbox}/${server}] `).length;
}

// ---------------------------------------------------------------------------
// The byte-level client (hostile-lib.mjs), where bytes matter.

async function opened(config = CONFIG) {
	const s = H.startSession(config);
	await s.initialize();
	const l = await s.open('b');
	assert.equal(l.json?.result?.isError, undefined, `open_toolbox b: ${l.text.slice(0, 500)}`);
	return s;
}

// Close stdin and wait for the exit.  Not s.close(): its timer keeps node
// alive for its whole length (50 s under valgrind) after the exit.
async function finish(s) {
	let r = null;
	s.proc.stdin.end();
	try {
		r = await L.withTimeout(s.exited, T(5000), 'the workbench to exit');
	} catch {
		// reported below; afterEach kills it
	}
	assert.ok(r !== null, `workbench did not exit after stdin EOF; ${s.describe()}`);
	assert.equal(r.code, 0, `exit status; ${s.describe()}`);
	H.forget(s);
}

function useToolLine(id, toolbox, server, name, args) {
	return JSON.stringify({
		jsonrpc: '2.0', id, method: 'tools/call',
		params: { name: 'use_tool', arguments: { tool: { toolbox, server, name }, arguments: args } },
	});
}

// The answer line the mock writes for n 'x', with the client's id spliced in.
function expectedLine(id, n, idLast) {
	const head = idLast ? '{"result":{"content":[{"type":"text","text":"'
	    : `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
	const tail = idLast ? `"}]},"jsonrpc":"2.0","id":${JSON.stringify(id)}}` : '"}]}}';
	return Buffer.concat([Buffer.from(head), Buffer.alloc(n, 'x'), Buffer.from(tail)]);
}

function assertBytes(got, want, what) {
	if (got.equals(want))
		return;
	let i = 0;
	while (i < got.length && i < want.length && got[i] === want[i])
		i++;
	assert.fail(`${what}: ${got.length} bytes, expected ${want.length}; first difference at ${i}: ` +
	    `${JSON.stringify(got.subarray(Math.max(0, i - 40), i + 40).toString('latin1'))}`);
}

// ===========================================================================

describe('streamed results arrive intact', () => {
	test('big and big_id_last of 3,000,000 bytes through use_tool', { timeout: T(90000) }, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openOk(wb, 'b');
			for (const name of ['big', 'big_id_last', 'big', 'big_id_last']) {
				const r = await wb.useTool('b', 'a', name, { bytes: BIG });
				assertOk(r, `${name}:`);
				assert.equal(r.content.length, 1, name);
				assertXs(text(r), BIG, name);
			}
			for (const idLast of [false, true]) {
				const r = await wb.useTool('b', 'a', 'big_cut', { bytes: BIG, then: 'ok', idLast });
				assertOk(r, `big_cut ok idLast=${idLast}:`);
				assertXs(text(r), BIG, `big_cut ok idLast=${idLast}`);
			}
			assert.equal(text(await wb.useTool('b', 'a', 'echo', { message: 'after' })), 'after');
			assert.deepEqual(describeErrors(errors), '[]', 'no client errors');
		});
	});

	test('raw: the line is the server\'s, byte for byte, with the client\'s id, in both member orders', { timeout: T(20000) }, async () => {
		const s = await opened();
		for (const [name, idLast] of [['big', false], ['big_id_last', true]]) {
			for (const n of [BIG, CUT_AT - 100, CUT_AT + 1]) {
				const l = await s.useTool('b', 'a', name, { bytes: n }, 10000);
				const id = l.json?.id;
				assert.match(String(id), /^h-\d+$/, `${name} ${n}: ${l.text.slice(0, 200)}`);
				assertBytes(l.buf, expectedLine(id, n, idLast), `${name} ${n}`);
			}
		}
		assert.deepEqual((await s.drain()).map((g) => g.text), [], 'nothing else');
		await finish(s);
	});

	// The line passes 256 KiB only in the spaces after the result's end, and
	// its newline comes 200 ms later: the stream starts with the result
	// already whole (a bug once read the validator's level stack at -1).
	test('a result already whole when its line passes 256 KiB arrives intact, in both member orders', { timeout: T(20000) }, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openOk(wb, 'b');
			for (const idLast of [false, true]) {
				const n = CUT_AT - 300;
				const r = await wb.useTool('b', 'a', 'big_cut', { bytes: n, then: 'pause', idLast });
				assertOk(r, `big_cut pause idLast=${idLast}:`);
				assertXs(text(r), n, `big_cut pause idLast=${idLast}`);
			}
			assert.equal(text(await wb.useTool('b', 'a', 'echo', { message: 'after' })), 'after');
			assert.deepEqual(describeErrors(errors), '[]', 'no client errors');
		});
	});

	test(`${HUGE.toLocaleString('en')} bytes arrive intact; the workbench's peak RSS stays below 16 MB, reading or not`, { timeout: T(60000) }, async (t) => {
		const s = await opened();
		const check = (l, id, what) => assertBytes(l.buf, expectedLine(id, HUGE, false), what);
		await s.sendLine(useToolLine('reading', 'b', 'a', 'big', { bytes: HUGE }));
		check(await s.waitId('reading', 20000), 'reading', 'client reading');
		const hwm1 = H.hwmKb(s.pid);
		t.diagnostic(`VmHWM after the first: ${hwm1} kB`);
		if (H.CHECK_RSS)
			assert.ok(hwm1 < 16 * MB, `peak RSS ${hwm1} kB with the client reading`);
		// The client stops reading: the server must not be read either.
		s.pause();
		await s.sendLine(useToolLine('paused', 'b', 'a', 'big', { bytes: HUGE }));
		await L.sleep(T(700));
		const hwm2 = H.hwmKb(s.pid);
		s.resume();
		check(await s.waitId('paused', 20000), 'paused', 'client paused');
		const hwm3 = H.hwmKb(s.pid);
		t.diagnostic(`VmHWM while paused: ${hwm2} kB, after: ${hwm3} kB`);
		if (H.CHECK_RSS) {
			assert.ok(hwm2 < 16 * MB, `peak RSS ${hwm2} kB while the client did not read`);
			assert.ok(hwm3 < 16 * MB, `peak RSS ${hwm3} kB`);
		}
		await finish(s);
	});

	test('badutf8: two invalid bytes in a streamed text become two U+FFFD', { timeout: T(20000) }, async () => {
		const want = 'x'.repeat(CUT / 2) + '\uFFFD\uFFFD' + 'x'.repeat(CUT - CUT / 2 - 2);
		await withWorkbench(CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openOk(wb, 'b');
			for (const idLast of [false, true]) {
				const r = await wb.useTool('b', 'a', 'big_cut', { bytes: CUT, then: 'badutf8', idLast });
				assertOk(r, `idLast=${idLast}:`);
				const got = text(r);
				assert.equal(got.length, CUT, `idLast=${idLast}: UTF-16 length`);
				assert.equal(got.split('\uFFFD').length - 1, 2, `idLast=${idLast}: U+FFFD count`);
				assert.ok(got === want, `idLast=${idLast}: U+FFFD U+FFFD at ${got.indexOf('\uFFFD')}, expected at ${CUT / 2}`);
			}
			assert.deepEqual(describeErrors(errors), '[]', 'no client errors');
		});
		// The SDK's decoder would repair the bytes itself: look at them.
		const s = await opened();
		for (const idLast of [false, true]) {
			const l = await s.useTool('b', 'a', 'big_cut', { bytes: CUT, then: 'badutf8', idLast }, 10000);
			assert.ok(H.isUtf8(l.buf), `idLast=${idLast}: the line is not valid UTF-8`);
			assert.ok(l.json !== undefined, `idLast=${idLast}: the line is not JSON`);
			assert.ok(H.text(l) === want, `idLast=${idLast}: text differs`);
		}
		await finish(s);
	});
});

// ===========================================================================

describe('nothing is written into a streamed line', () => {
	// Two streamed answers from two servers, 50 small answers, 200 log
	// notifications, progress, and the workbench's own answers, all at
	// once; with the client reading, then with it not reading for 300 ms.
	async function burst(wb, paused, msgs, wire) {
		const tag = paused ? 'p' : 'r';
		const seen = [];
		wire.length = 0;
		const calls = {
			big: wb.useTool('b', 'a', 'big', { bytes: BIG }),
			bigLast: wb.useTool('b', 'ok', 'big_id_last', { bytes: BIG }),
			echoes: Promise.all(Array.from({ length: 50 }, (_, i) =>
			    wb.useTool('b', 'ok', 'echo', { message: `${tag}${i}` }))),
			logs: wb.useTool('b', 'ok', 'log_flood', { count: 200, bytes: 1000 }),
			progress: wb.useTool('b', 'fx', 'progress', { steps: 10, interval_ms: 60, final_delay_ms: 100 },
			    { onprogress: (p) => seen.push(p.progress) }),
			pings: Promise.all(Array.from({ length: 5 }, () => wb.client.ping())),
			open: wb.openToolbox('b'),
			list: wb.client.listTools(),
		};
		if (paused) {
			wb.proc.stdout.pause();
			await L.sleep(300);
			wb.proc.stdout.resume();
		}
		const keys = Object.keys(calls);
		const got = Object.fromEntries((await L.withTimeout(Promise.all(Object.values(calls)), T(15000),
		    `burst (${paused ? 'paused' : 'reading'})`)).map((v, i) => [keys[i], v]));
		const what = paused ? 'client paused' : 'client reading';
		assertOk(got.big, `${what}: big:`);
		assertXs(text(got.big), BIG, `${what}: big`);
		assertOk(got.bigLast, `${what}: big_id_last:`);
		assertXs(text(got.bigLast), BIG, `${what}: big_id_last`);
		assert.deepEqual(got.echoes.map((r) => text(r)), Array.from({ length: 50 }, (_, i) => `${tag}${i}`), `${what}: echoes`);
		assert.equal(text(got.logs), 'ok', `${what}: log_flood`);
		// The SDK hands notifications over a tick after the answers.
		await msgs.waitCount(200, T(5000));
		assert.equal(msgs.count, 200, `${what}: log notifications`);
		msgs.list.forEach((m, i) => assert.equal(m.params.data, `${i} ${'l'.repeat(1000)}`, `${what}: log ${i}`));
		msgs.reset();
		assertOk(got.progress, `${what}: progress:`);
		assert.deepEqual(JSON.parse(text(got.progress)).steps, 10);
		// Every progress went before the answer, in order; the client may
		// have seen the last ones come with it (L.tapMessages).
		const sent = L.wireProgress(wire);
		assert.ok(sent.answered, `${what}: the progress call's answer on the wire`);
		assert.deepEqual(sent.before, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], `${what}: progress notifications`);
		assert.deepEqual(seen, sent.before.slice(0, seen.length), `${what}: progress reported in order`);
		assert.deepEqual(got.pings, Array(5).fill({}), `${what}: pings`);
		assertOk(got.open, `${what}: open_toolbox:`);
		assert.equal(got.open.structuredContent.servers_connected, 3, `${what}: open_toolbox`);
		assert.equal(got.list.tools.length, 3, `${what}: tools/list`);
	}

	test('other servers\' answers, notifications and the workbench\'s own answers wait for the end of the line', { timeout: T(60000) }, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			const msgs = L.collectNotifications(wb.client, LoggingMessageNotificationSchema);
			const wire = L.tapMessages(wb.client);
			await openOk(wb, 'b');
			for (const paused of [false, true, false]) {
				await burst(wb, paused, msgs, wire);
				L.dropLateProgressErrors(errors);
				assert.deepEqual(describeErrors(errors), '[]', `client errors (${paused ? 'paused' : 'reading'})`);
			}
		});
	});
});

// ===========================================================================

describe('a streamed answer that breaks', () => {
	// A result that keeps coming, a byte now and then, may not keep the
	// client's other messages waiting more than 5 s (STREAM_STALL_MS).
	test('a trickling result is cut after keeping others waiting 5 s; they then arrive', { timeout: T(30000) }, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openOk(wb, 'b');
			const slow = wb.useTool('b', 'a', 'big_cut', { bytes: CUT, then: 'trickle' }, { timeout: T(60000) });
			await L.sleep(T(500));
			const t0 = Date.now();
			const e = await wb.useTool('b', 'ok', 'echo', { message: 'waited' });
			const took = Date.now() - t0;
			assert.equal(text(e), 'waited');
			assert.ok(took >= 4000 && took < T(9000), `the echo waited ${took} ms`);
			const r = await slow;
			assert.equal(r.isError, true, JSON.stringify(r).slice(0, 300));
			assert.match(text(r), /waiting/, 'the reason');
			await L.sleep(50);
			assertOneMalformedLine(errors, 'trickle');
		});
	});

	test('garbage before the newline: one malformed line, then isError; the server stays usable', { timeout: T(60000) }, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openOk(wb, 'b');
			const pids = starts(wb, 'b', 'a');
			for (const idLast of [false, true]) {
				const what = `garbage, id ${idLast ? 'last' : 'first'}`;
				errors.length = 0;
				const log0 = wb.stderr.length;
				const t0 = Date.now();
				// The SDK's own timeout (60 s by default) must outlast
				// callTimeoutMs, which valgrind runs scale up.
				const r = await wb.useTool('b', 'a', 'big_cut', { bytes: CUT, then: 'garbage', idLast },
				    { timeout: CALL_LIMIT + T(10000) });
				const took = Date.now() - t0;
				assert.equal(r.isError, true, `${what}: ${JSON.stringify(r).slice(0, 300)}`);
				assert.ok(text(r).length > 0, `${what}: a reason`);
				// With the id first the workbench knows the call at once;
				// with it last the call may only end by callTimeoutMs.
				if (!idLast) {
					assert.doesNotMatch(text(r), /timed out/, `${what}: answered by the timeout, not the break`);
					assert.ok(took < QUICK, `${what}: answered after ${took} ms`);
				}
				await L.sleep(50);
				assertOneMalformedLine(errors, what);
				// On stderr, which may come after the answer on stdout.
				await L.waitFor(() => /^mcp-workbench: b\/a: /m.test(wb.stderr.slice(log0)), T(5000), `${what}: the reason is logged`);
				const e = await wb.useTool('b', 'a', 'echo', { message: `after ${what}` });
				assertOk(e, `${what}: the next call:`);
				assert.equal(text(e), `after ${what}`);
				assert.equal(text(await wb.useTool('b', 'a', 'big', { bytes: BIG })).length, BIG, `${what}: a big one after`);
				assert.equal(errors.length, 1, `${what}: nothing more: ${describeErrors(errors)}`);
			}
			assert.equal(starts(wb, 'b', 'a'), pids, 'the server was not restarted');
		});
	});

	// One session per kind of break: each restarts the server twice.  The
	// server's output may be seen to end before its exit is: either reason.
	for (const [then, reason] of [['exit', /exited with status 3|output ended/], ['close', /output/]]) {
		test(`${then} before the newline: one malformed line, then isError; neighbours unaffected; the next call restarts it`, { timeout: T(30000) }, async () => {
			await withWorkbench(CONFIG, {}, async (wb) => {
				const errors = watchErrors(wb.client);
				await openOk(wb, 'b');
				for (const idLast of [false, true]) {
					const what = `${then}, id ${idLast ? 'last' : 'first'}`;
					errors.length = 0;
					const n0 = starts(wb, 'b', 'a');
					const neighbour = wb.useTool('b', 'ok', 'sleep', { ms: 300 });
					const t0 = Date.now();
					const r = await wb.useTool('b', 'a', 'big_cut', { bytes: CUT, then, idLast });
					const took = Date.now() - t0;
					assert.equal(r.isError, true, `${what}: ${JSON.stringify(r).slice(0, 300)}`);
					assert.match(text(r), reason, what);
					assert.ok(took < QUICK, `${what}: answered after ${took} ms`);
					// At once: the client has been told the server broke,
					// so its next call must not go to the broken one: after
					// a first failure it goes to a new one; after a second
					// in a row it fails at once while the restart backs off
					// (250 ms, which a busy machine may have let pass: then
					// a new one answers it).
					const again = await wb.useTool('b', 'a', 'echo', { message: 'again' });
					if (!idLast || !again.isError) {
						assertOk(again, `${what}: the next call, sent as soon as the error came:`);
						assert.equal(text(again), 'again');
					} else {
						assert.match(text(again), /not started again yet after 2 failures in a row/, what);
					}
					assert.equal(text(await neighbour), 'slept 300', `${what}: the neighbour's call`);
					await L.sleep(50);
					assertOneMalformedLine(errors, what);
					assert.equal(text(await wb.useTool('b', 'ok', 'echo', { message: 'ok' })), 'ok', `${what}: another server`);
					const o = await openOk(wb, 'b');
					assert.equal(o.servers_connected, 3, `${what}: reopened`);
					await L.waitFor(() => starts(wb, 'b', 'a') === n0 + 1, T(3000), `${what}: one restart`);
					assert.equal(errors.length, 1, `${what}: nothing more: ${describeErrors(errors)}`);
				}
			});
		});
	}

	test('raw: the client\'s line ends where the answer broke, then the call\'s error answer follows', { timeout: T(30000) }, async () => {
		const s = await opened();
		for (const then of ['garbage', 'exit', 'close']) {
			const id = `cut-${then}`;
			await s.sendLine(useToolLine(id, 'b', 'a', 'big_cut', { bytes: CUT, then }));
			const others = [];
			const l = await s.waitId(id, 10000, others);
			assert.equal(l.json?.result?.isError, true, `${then}: ${l.text.slice(0, 300)}`);
			assert.doesNotMatch(H.text(l), /timed out/, `${then}: answered by the timeout, not the break`);
			assert.equal(others.length, 1, `${then}: one line before the answer, got ${others.length}`);
			const cut = others[0];
			const head = `{"jsonrpc":"2.0","id":"${id}","result":{"content":[{"type":"text","text":"`;
			assert.equal(cut.json, undefined, `${then}: the broken line must not parse`);
			assert.ok(H.isUtf8(cut.buf), `${then}: the broken line is valid UTF-8`);
			assert.equal(cut.buf.subarray(0, head.length).toString(), head, `${then}: the line starts as the answer, with the client's id`);
			assert.ok(cut.buf.length > CUT_AT, `${then}: ${cut.buf.length} bytes went out`);
			assert.ok(cut.buf.length <= head.length + CUT + '!!not json'.length, `${then}: ${cut.buf.length} bytes`);
			const body = cut.buf.subarray(head.length, head.length + Math.min(CUT, cut.buf.length - head.length));
			assert.ok(body.equals(Buffer.alloc(body.length, 'x')), `${then}: the text so far is intact`);
			assert.deepEqual((await s.drain()).map((g) => g.text), [], `${then}: nothing else`);
			// The next call, at once: the server that broke is not used
			// again (open_toolbox starts it without the restart's backoff).
			await s.open('b');
			const e = await s.useTool('b', 'a', 'echo', { message: `after ${then}` }, 5000);
			assert.equal(H.text(e), `after ${then}`, `${then}: the next call`);
		}
		await finish(s);
	});

	test('raw: a call cancelled while its result passes with the id last: the line still ends whole, under its id', { timeout: T(30000) }, async () => {
		const s = await opened();
		const before = s.bytesOut;
		await s.sendLine(useToolLine('c1', 'b', 'ok', 'big_cut', { bytes: CUT, then: 'pause', idLast: true }));
		// The result is on its way (the server pauses 200 ms before its id).
		await L.waitFor(() => s.bytesOut - before > CUT_AT, T(5000), 'the result to be passing', 5);
		await s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1' } });
		const l = await s.readLine(5000);
		assert.ok(l.json !== undefined, `the line parses: ${l.buf.length} bytes, ending ${JSON.stringify(l.buf.subarray(-80).toString())}`);
		assert.equal(l.json.id, 'c1', 'a late answer, under the cancelled call\'s id');
		assertXs(l.json.result.content[0].text, CUT, 'the late answer');
		assert.deepEqual((await s.drain()).map((g) => g.text), [], 'nothing else');
		const e = await s.useTool('b', 'ok', 'echo', { message: 'after' }, 5000);
		assert.equal(H.text(e), 'after');
		await finish(s);
	});

	// A call whose result (id first) is cut by its timeout leaves no late
	// answer to wait for: the line cut was it.  So the server's next result
	// with the id last still passes as it arrives.
	test('raw: after a result cut by its timeout, the next result with the id last still passes as it arrives', { timeout: T(30000) }, async () => {
		// Under the 5 s a stream may stall, which does not scale under a wrapper.
		const limit = Math.min(T(600), 2500);
		const config = { toolboxes: { b: box({ p: { ...L.mock('--hostile'), callTimeoutMs: limit } }) } };
		const s = await opened(config);
		await s.sendLine(useToolLine('cut', 'b', 'p', 'big_cut', { bytes: CUT, then: 'pause', pause_ms: 2 * limit }));
		const cut = await s.readLine(T(5000));
		assert.equal(cut.json, undefined, 'the line cut short');
		const e = await s.readLine(T(5000));
		assert.equal(e.json?.id, 'cut');
		assert.match(H.text(e), /broke off .*timed out after \d+ ms \(callTimeoutMs\)/);
		await L.sleep(2 * limit);
		const before = s.bytesOut;
		await s.sendLine(useToolLine('next', 'b', 'p', 'big_cut', { bytes: CUT, then: 'pause', idLast: true, pause_ms: limit / 2 }));
		// The server pauses before the id: the bytes pass meanwhile.
		await L.waitFor(() => s.bytesOut - before > CUT_AT, T(5000), 'the result to be passing', 5);
		const passing = Date.now();
		const l = await s.readLine(T(5000));
		const gap = Date.now() - passing;
		assert.ok(gap > limit / 4, `the result passed only ${gap} ms before its line ended (the server paused ${limit / 2} ms)`);
		assert.equal(l.json?.id, 'next', `the next result: ${l.buf.length} bytes`);
		assertXs(l.json.result.content[0].text, CUT, 'the next result');
		await finish(s);
	});

	test('raw: a late answer with the id last to a cancelled call, while another call runs, is dropped whole', { timeout: T(30000) }, async () => {
		const s = await opened();
		await s.sendLine(useToolLine('late', 'b', 'ok', 'big_id_last', { bytes: 1000000, delay_ms: T(600) }));
		await s.sendLine(useToolLine('runs', 'b', 'ok', 'sleep', { ms: T(1500) }));
		await L.sleep(T(100));
		await s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'late' } });
		const others = [];
		const l = await s.waitId('runs', 10000, others);
		assert.equal(l.json?.result?.isError, undefined, l.text.slice(0, 300));
		assert.deepEqual(others.map((o) => o.text.slice(0, 200)), [], 'nothing before the running call\'s answer');
		// The answer is dropped whole: the server can still stream the next.
		const r = await s.sendLine(useToolLine('next', 'b', 'ok', 'big_id_last', { bytes: CUT }));
		assert.ok(r);
		const n = await s.waitId('next', 10000);
		assertXs(n.json.result.content[0].text, CUT, 'the next result');
		await finish(s);
	});

	test('maxMessageBytes passed while streaming: one malformed line, isError naming the limit; the next calls work', { timeout: T(30000) }, async () => {
		const config = { maxMessageBytes: 1000000, ...CONFIG };
		await withWorkbench(config, {}, async (wb) => {
			const errors = watchErrors(wb.client);
			await openOk(wb, 'b');
			for (const name of ['big', 'big_id_last']) {
				errors.length = 0;
				const t0 = Date.now();
				const r = await wb.useTool('b', 'a', name, { bytes: CUT });
				const took = Date.now() - t0;
				assert.equal(r.isError, true, `${name}: ${JSON.stringify(r).slice(0, 300)}`);
				// With the id last the call may only end by callTimeoutMs.
				if (name === 'big') {
					assert.match(text(r), /maxMessageBytes/, name);
					// Store-and-forward answers name the value too ("more
					// than the 1000000-byte limit (maxMessageBytes)").
					assert.match(text(r), /1000000/, `${name}: the limit's value`);
					assert.ok(took < QUICK, `${name}: answered after ${took} ms`);
				}
				await L.sleep(50);
				assertOneMalformedLine(errors, name);
				assert.equal(text(await wb.useTool('b', 'a', 'echo', { message: 'after' })), 'after', `${name}: the next call`);
				const under = await wb.useTool('b', 'a', 'big', { bytes: 900000 });
				assertOk(under, `${name}: 900,000 bytes:`);
				assertXs(text(under), 900000, `${name}: 900,000 bytes after`);
				assert.equal(errors.length, 1, `${name}: nothing more: ${describeErrors(errors)}`);
			}
		});
	});
});

// ===========================================================================

describe('a long open_toolbox answer is made as the client reads it', () => {
	// 20,000 tools: a list of 2.1 MB, an answer of about 4 MB (the list as
	// text and as structuredContent), far more than the workbench keeps
	// queued for the client.  What holding the list costs is measured in
	// a session that reads the answer as it comes (readingHwm); a client
	// that does not read may add less than half an answer to it.  5,000 under a wrapper (make valgrind), which
	// must still make the rest within the 1.9 s of a shutdown.
	const NTOOLS = H.WRAPPED ? 5000 : 20000;
	const BIGBOX = { toolboxes: { big: box({ a: L.mock('--tools', String(NTOOLS)) }, 'Many tools') } };
	const SETTLE = T(1500);		// the server starts and lists meanwhile

	// The answer, whole and the same twice; its tools.
	function answerTools(l, what) {
		assert.ok(l.json?.result, `${what}: not a result: ${l.text.slice(0, 300)}`);
		const r = l.json.result;
		assert.equal(r.isError, undefined, `${what}: ${l.text.slice(0, 300)}`);
		assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent, `${what}: text and structuredContent differ`);
		return L.openedTools(r.structuredContent);
	}

	// open_toolbox again until the server's own list answers it (not the
	// catalogue's): the server starts and lists in the background.
	async function openListed(s) {
		let l;
		await L.waitFor(async () => {
			l = await s.open('big');
			return l.json?.result?.structuredContent?.from_catalogue === undefined;
		}, T(15000), 'an open answered from the server\'s own list', 100);
		return l;
	}

	let reading = null;
	async function readingHwm() {
		if (reading === null) {
			const s = H.startSession(BIGBOX);
			await s.initialize();
			answerTools(await s.open('big'), 'open_toolbox, read as it comes');
			reading = H.hwmKb(s.pid);
			await finish(s);
		}
		return reading;
	}

	async function openPaused(s) {
		await s.initialize();
		s.pause();
		await s.sendLine(JSON.stringify({ jsonrpc: '2.0', id: 'o', method: 'tools/call',
		    params: { name: 'open_toolbox', arguments: { toolbox_name: 'big' } } }));
		await L.sleep(SETTLE);
	}

	test('what comes after it waits and keeps its order; the answer never waits whole in memory', { timeout: T(30000) }, async (t) => {
		const s = H.startSession(BIGBOX);
		await openPaused(s);
		await s.send({ jsonrpc: '2.0', id: 'p', method: 'ping' });
		await s.sendLine(useToolLine('c', 'big', 'a', 'echo', { message: 'after' }));
		await L.sleep(T(500));
		const hwm = H.hwmKb(s.pid);
		s.resume();
		const first = await s.readLine(T(10000));
		assert.equal(first.json?.id, 'o', `the first line answers ${JSON.stringify(first.json?.id)}`);
		const tools = answerTools(first, 'open_toolbox');
		assert.ok(tools.length >= NTOOLS, `${tools.length} tools`);
		assert.equal(first.json.result.structuredContent.toolbox, 'big');
		assert.ok(tools.every((x) => x.server === 'a'), 'every tool has its server');
		assert.equal(new Set(tools.map((x) => x.name)).size, tools.length, 'no tool twice');
		const rest = [await s.readLine(T(5000)), await s.readLine(T(5000))];
		assert.deepEqual(rest.map((l) => l.json?.id).sort(), ['c', 'p'], 'the ping and the call after it');
		assert.equal(H.text(rest.find((l) => l.json.id === 'c')), 'after');
		const base = await readingHwm();
		t.diagnostic(`answer ${first.buf.length} bytes; VmHWM while the client did not read: ${hwm} kB, while it did: ${base} kB`);
		if (H.CHECK_RSS)
			assert.ok((hwm - base) * 1024 < first.buf.length / 2, `peak RSS ${hwm} kB while the client did not read, ${base} kB while it did: the ${first.buf.length}-byte answer waited whole`);
		await finish(s);
	});

	test('three answers in a row: each is made as the client reads it, in order', { timeout: T(60000) }, async (t) => {
		const s = H.startSession(BIGBOX);
		await openPaused(s);
		for (const id of ['o2', 'o3'])
			await s.sendLine(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
			    params: { name: 'open_toolbox', arguments: { toolbox_name: 'big' } } }));
		await s.send({ jsonrpc: '2.0', id: 'p', method: 'ping' });
		await L.sleep(T(700));
		const hwm = H.hwmKb(s.pid);
		s.resume();
		const lines = [];
		for (let i = 0; i < 4; i++)
			lines.push(await s.readLine(T(10000)));
		assert.deepEqual(lines.map((l) => l.json?.id), ['o', 'o2', 'o3', 'p'], 'the order they were asked in');
		for (const l of lines.slice(0, 3))
			assert.ok(answerTools(l, `open_toolbox ${l.json.id}`).length >= NTOOLS);
		const base = await readingHwm();
		t.diagnostic(`three answers of ${lines[0].buf.length} bytes; VmHWM while the client did not read: ${hwm} kB, while it did: ${base} kB`);
		if (H.CHECK_RSS)
			assert.ok((hwm - base) * 1024 < lines[0].buf.length / 2, `peak RSS ${hwm} kB while the client did not read, ${base} kB while it did: an answer waited whole`);
		await finish(s);
	});

	test('answered from the catalogue: the server\'s own list, arriving meanwhile, does not make the rest at once', { timeout: T(60000) }, async (t) => {
		const config = { cacheDir: L.makeTempDir('wb-cat-'), ...BIGBOX };
		const fill = H.startSession(config);
		await fill.initialize();
		answerTools(await fill.open('big'), 'open_toolbox, filling the catalogue');
		await finish(fill);
		// Whether the client reads or not, the catalogue's list and the
		// server's are held at once for a while; the answer must not be.
		const hwms = [];
		for (const paused of [false, true]) {
			const s = H.startSession(config);
			if (paused) {
				await openPaused(s);
				hwms.push(H.hwmKb(s.pid));
				s.resume();
			} else {
				await s.initialize();
				await s.sendLine(JSON.stringify({ jsonrpc: '2.0', id: 'o', method: 'tools/call',
				    params: { name: 'open_toolbox', arguments: { toolbox_name: 'big' } } }));
			}
			const l = await s.waitId('o', T(10000));
			const tools = answerTools(l, `open_toolbox (paused: ${paused})`);
			assert.ok(tools.length >= NTOOLS);
			// The server starts meanwhile and lists its tools (the same).
			const again = await openListed(s);
			assert.equal(answerTools(again, 'open_toolbox, again').length, tools.length);
			if (!paused)
				hwms.push(H.hwmKb(s.pid));
			else {
				assert.deepEqual(l.json.result.structuredContent.from_catalogue, ['a'], 'answered from the catalogue');
				t.diagnostic(`answer ${l.buf.length} bytes; VmHWM reading: ${hwms[0]} kB, not reading: ${hwms[1]} kB`);
				if (H.CHECK_RSS)
					assert.ok((hwms[1] - hwms[0]) * 1024 < l.buf.length / 2, `peak RSS ${hwms[1]} kB while the client did not read, ${hwms[0]} kB while it did: the answer waited whole`);
			}
			await finish(s);
		}
	});

	test('a list that changes while it is made: the answer gives the list as it was, whole', { timeout: T(30000) }, async () => {
		const s = H.startSession(BIGBOX);
		await openPaused(s);
		// The server adds a tool and says so: the workbench lists it again.
		await s.sendLine(useToolLine('c', 'big', 'a', 'notify_list_changed', {}));
		await L.sleep(T(1000));
		s.resume();
		const first = await s.readLine(T(10000));
		assert.equal(first.json?.id, 'o', `the first line answers ${JSON.stringify(first.json?.id)}`);
		const before = answerTools(first, 'open_toolbox, before').length;
		await s.waitId('c', T(5000));
		// The server is listed again meanwhile.
		let again;
		await L.waitFor(async () => (again = answerTools(await s.open('big'), 'open_toolbox, after')).length === before + 1,
		    T(10000), 'the added tool listed by a later open', 100);
		assert.equal(again.length, before + 1, 'the added tool is listed by the next open');
		await finish(s);
	});

	test('the client closes its input meanwhile: the answer still arrives whole', { timeout: T(30000) }, async () => {
		const s = H.startSession(BIGBOX);
		await openPaused(s);
		// Its output is read to the end before the lines are looked at.
		const ended = new Promise((r) => s.proc.stdout.once('close', r));
		s.proc.stdin.end();
		// Not stretched under a wrapper: a shutdown lasts 1.9 s at most.
		await L.sleep(300);
		s.resume();
		await L.withTimeout(ended, T(10000), 'the end of the output');
		const first = await s.readLine(T(1000));
		assert.equal(first.json?.id, 'o');
		assert.ok(answerTools(first, 'open_toolbox').length >= NTOOLS);
		const r = await L.withTimeout(s.exited, T(5000), 'the workbench to exit');
		assert.equal(r.code, 0, `exit status; ${s.describe()}`);
		H.forget(s);
	});
});
