// Issue 6, over time: many open/crash/reopen cycles and a million calls
// leave the workbench's fd count, child count and memory flat.
//
// SOAK_CYCLES (default 10000) and SOAK_CALLS (default 1000000) set the
// sizes (250 and 20000 under a sanitizer or valgrind wrapper).  A cycle
// count needs SOAK_CYCLES / 5 servers: the config holds that many, 20 per
// toolbox, and each is started 5 times, by open_toolbox (which does not
// wait for the backoff of automatic restarts).
//
// Flatness is measured between a checkpoint taken once every path has run
// and the allocator has settled (after the third of the five rounds of
// cycles: every server has been started, crashed and restarted; after 10%
// of the calls) and the end, with nothing in flight at either point:
//   - fds (/proc/PID/fd): exactly equal;
//   - children (any state, zombies included): exactly equal;
//   - VmRSS: may grow by at most RSS_SLACK_KB (default 1024 kB) + 5%
//     (the allocator's own drift; valgrind finds no heap growth here).

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';
import * as H from './hostile-lib.mjs';

after(H.cleanupAll);

// Under a wrapper (make asan, make valgrind) the workbench is many times
// slower: the default sizes shrink and RSS is not checked (hostile-lib.mjs).
const CYCLES = Number(process.env.SOAK_CYCLES ?? (H.WRAPPED ? 250 : 10000));
const CALLS = Number(process.env.SOAK_CALLS ?? (H.WRAPPED ? 20000 : 1000000));
const RSS_SLACK_KB = Number(process.env.RSS_SLACK_KB ?? 1024);
const PER_BOX = 20;		// servers per toolbox
const BUDGET = 5;		// starts per server
const PARALLEL = 4;		// toolboxes cycled at once
// Each soak's limit, against being stuck: the cycles take 140-180 s on a
// quiet 2-core machine and took 460 s beside two other CI runs (load
// average 10).  The sizes are not scaled down for a busy machine: what is
// measured is flatness over that many, not speed.
const SOAK_LIMIT_MS = 1500000;

function measure(s) {
	return { fds: H.fdCount(s.pid), children: H.children(s.pid).length, rss: H.rssKb(s.pid) };
}

// Wait until the workbench has no child left (crashed servers reaped, their
// process groups ended) and its fd count has settled.
async function settled(s, wantChildren) {
	await L.waitFor(() => H.children(s.pid).length === wantChildren, H.T(5000),
	    `${wantChildren} children`).catch((e) => {
		const told = s.stderrTail.split('\n').filter((l) => /exit|stop|fail|kill|signal|cut|restart/i.test(l));
		throw new Error(`${e.message} (have ${JSON.stringify(H.children(s.pid))}); what the workbench said of its servers:\n${told.slice(-20).join('\n')}`);
	});
	let last = -1;
	await L.waitFor(() => {
		const n = H.fdCount(s.pid);
		const same = n === last;
		last = n;
		return same;
	}, H.T(3000), 'fd count to settle', 100);
	return measure(s);
}

function assertFlat(early, late, what) {
	assert.equal(late.fds, early.fds, `${what}: fd count ${early.fds} -> ${late.fds}`);
	assert.equal(late.children, early.children, `${what}: children ${early.children} -> ${late.children}`);
	const allowed = RSS_SLACK_KB + Math.round(early.rss * 0.05);
	if (H.CHECK_RSS) {
		assert.ok(late.rss - early.rss <= allowed,
		    `${what}: VmRSS ${early.rss} kB -> ${late.rss} kB (allowed growth ${allowed} kB)`);
	}
}

describe('soak', () => {
	test(`${CYCLES} open/crash/reopen cycles leave fds, children and memory flat`, { timeout: H.T(SOAK_LIMIT_MS) }, async (t) => {
		const servers = Math.max(1, Math.ceil(CYCLES / BUDGET));
		const nboxes = Math.ceil(servers / PER_BOX);
		const toolboxes = {};
		for (let k = 0; k < nboxes; k++) {
			const mcpServers = {};
			const n = Math.min(PER_BOX, servers - k * PER_BOX);
			for (let m = 0; m < n; m++)
				mcpServers[`s${m}`] = L.mock();
			toolboxes[`t${k}`] = { description: `soak ${k}`, mcpServers };
		}
		const size = (k) => Object.keys(toolboxes[`t${k}`].mcpServers).length;
		// Without the catalogue: every open waits for its servers, which
		// share one configuration (and so would share one entry).
		const s = H.startSession({ cache: false, toolboxes });
		await s.initialize();
		const t0 = Date.now();
		const base = measure(s);
		let cycles = 0;
		let early = null;
		let lastCrash = null;	// The toolbox of the latest crash, and when.
		// Open a batch of toolboxes; as each opens, crash all its servers.
		const runBatch = async (round, boxes) => {
			const opens = new Map();
			const crashes = new Set();
			for (const k of boxes) {
				const id = `o-${round}-${k}`;
				opens.set(id, k);
				await s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: `t${k}` } } });
			}
			while (opens.size > 0 || crashes.size > 0) {
				const l = await s.readLine(20000);
				const id = l.json?.id;
				if (opens.has(id)) {
					const k = opens.get(id);
					opens.delete(id);
					const sc = l.json.result?.structuredContent;
					assert.equal(sc?.servers_connected, size(k), `round ${round} open t${k}: ${l.text.slice(0, 400)}`);
					const lines = [];
					for (let m = 0; m < size(k); m++) {
						const cid = `c-${round}-${k}-${m}`;
						crashes.add(cid);
						lines.push(`{"jsonrpc":"2.0","id":"${cid}","method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"t${k}","server":"s${m}","name":"crash"}}}}`);
					}
					await s.write(lines.join('\n') + '\n');
				} else if (crashes.has(id)) {
					crashes.delete(id);
					lastCrash = { k: Number(id.split('-')[2]), at: Date.now() };
					assert.equal(l.json.result?.isError, true, l.text.slice(0, 300));
					assert.match(H.text(l), /exited with status 3/);
					cycles++;
				} else {
					assert.fail(`unexpected line: ${l.text.slice(0, 300)}`);
				}
			}
		};
		for (let round = 0; round < BUDGET; round++) {
			for (let k = 0; k < nboxes; k += PARALLEL) {
				const boxes = [];
				for (let j = k; j < Math.min(nboxes, k + PARALLEL); j++)
					boxes.push(j);
				await runBatch(round, boxes);
			}
			if (round === Math.min(2, BUDGET - 1))
				early = await settled(s, 0);
		}
		const firstStartsAgo = Date.now() - t0;
		const late = await settled(s, 0);
		assert.equal(cycles, servers * BUDGET, 'every cycle completed');
		// Start lines are on stderr, which may come after the answers.  They
		// are counted, not their pids: over 10000 starts the kernel gives a
		// dead server's pid to a new one (pid_max is often 32768).
		await L.waitFor(() => s.starts >= cycles, H.T(5000), `every start's line (${s.starts} of ${cycles} so far)`);
		assert.equal(s.starts, cycles, 'each cycle started a new server process');
		// One more: the pipe to the guardian, opened with the first server.
		assert.equal(late.fds, base.fds + 1, `fd count back to the start: ${base.fds} -> ${late.fds}`);
		assertFlat(early, late, 'cycles');
		// Five failures in a row: an automatic restart backs off (2 s from
		// the last one), and the call says so at once.
		if (firstStartsAgo < 50000 && Date.now() - lastCrash.at < 1500) {
			await s.send({ jsonrpc: '2.0', id: 'backoff', method: 'tools/call', params: { name: 'use_tool', arguments: { tool: { toolbox: `t${lastCrash.k}`, server: 's0', name: 'echo' }, arguments: { message: 'x' } } } });
			const l = await s.readLine(5000);
			assert.equal(l.json.result?.isError, true, l.text.slice(0, 300));
			assert.match(H.text(l), /not started again yet after 5 failures in a row; the next try is in \d+ ms/);
		}
		// No server process left: settled(s, 0) above found the workbench
		// without children.  Not by pid: those of 10000 dead servers are
		// given to other processes, other runs' servers among them.
		const r = await s.close(5000);
		assert.equal(r?.code, 0, `exit status; ${s.describe()}`);
		H.forget(s);
		t.diagnostic(`${cycles} cycles in ${Date.now() - t0} ms; fds ${early.fds}/${late.fds}, ` +
		    `rss ${early.rss}/${late.rss} kB`);
	});

	test(`${CALLS} calls (echo, add, errors, lists, reopen, cancels, timeouts) leave fds, children and memory flat`, { timeout: H.T(SOAK_LIMIT_MS) }, async (t) => {
		const config = {
			toolboxes: {
				b: {
					description: 'soak calls',
					mcpServers: {
						a: L.mock('--hostile'),
						c: L.mock(),
						t: { ...L.mock(), callTimeoutMs: 50 },
					},
				},
			},
		};
		const s = H.startSession(config);
		await s.initialize();
		assert.equal((await s.open('b')).json.result.structuredContent.servers_connected, 3);
		await s.allStarted(config, 'b');
		const pids0 = [...s.pids];
		const t0 = Date.now();
		const pending = new Map();	// id -> check(line)
		let cancelled = 0;
		let timeouts = 0;
		const ut = (id, server, name, args) =>
			`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"b","server":"${server}","name":"${name}"},"arguments":${JSON.stringify(args)}}}}`;
		const textIs = (want) => (l) => {
			assert.ok(!l.json.result?.isError, l.text.slice(0, 300));
			assert.equal(H.text(l), want);
		};
		const toolError = (re) => (l) => {
			assert.equal(l.json.result?.isError, true, l.text.slice(0, 300));
			assert.match(H.text(l), re);
		};
		// The i-th call: its line, and how its answer is checked (null: none comes).
		const make = (i) => {
			const k = i % 10;
			if (k < 6) {
				const srv = k % 2 ? 'a' : 'c';
				return [ut(i, srv, 'echo', { message: `m${i}` }), textIs(`m${i}`)];
			}
			if (k === 6)
				return [`{"jsonrpc":"2.0","id":${i},"method":"ping"}`, (l) => assert.deepEqual(l.json.result, {})];
			if (k === 7)
				return [ut(i, 'a', 'add', { a: i, b: 1 }), (l) => assert.deepEqual(l.json.result.structuredContent, { sum: i + 1 })];
			if (k === 8) {
				switch ((i / 10 | 0) % 6) {
				case 0:
					return [ut(i, 'c', 'fail', { message: `f${i}` }), toolError(new RegExp(`^f${i}$`))];
				case 1:
					return [ut(i, 'a', 'rpc_error', { message: `r${i}` }), toolError(new RegExp(`: r${i}$`))];
				case 2:
					return [ut(i, 'c', 'no_such_tool', {}), toolError(/not found/)];
				case 3:
					return [`{"jsonrpc":"2.0","id":${i},"method":"tools/list"}`, (l) => assert.equal(l.json.result.tools.length, 3)];
				case 4:
					return [`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"b"}}}`,
						(l) => assert.equal(l.json.result.structuredContent.servers_connected, 3)];
				default:
					return [`{"jsonrpc":"2.0","id":"s${i}","method":"no/such"}`, (l) => assert.equal(l.json.error.code, -32601)];
				}
			}
			// k === 9: mostly echo with a string id; every 500th a
			// cancelled call, every 500th (offset) a timed-out one.
			if (i % 1000 === 9) {
				cancelled++;
				return [ut(i, 'c', 'sleep', { ms: 300 }) + `\n{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${i}}}`, null];
			}
			if (i % 1000 === 509) {
				// The answer would come long after the 50 ms limit, even
				// when a loaded machine runs the timer late.
				timeouts++;
				return [ut(i, 't', 'sleep', { ms: 3000 }), toolError(/timed out after 50 ms/)];
			}
			return [ut(JSON.stringify(`q${i}`), 'c', 'echo', { message: `q${i}` }), textIs(`q${i}`)];
		};
		const idOf = (i) => (i % 10 === 8 && (i / 10 | 0) % 6 === 5 ? `s${i}` : i % 10 === 9 && i % 1000 !== 9 && i % 1000 !== 509 ? `q${i}` : i);
		const WINDOW = 256;
		let sent = 0;
		let got = 0;
		let early = null;
		const checkpoint = Math.max(1, Math.floor(CALLS / 10));
		const pump = async (limit) => {
			const batch = [];
			while (sent < limit && pending.size < WINDOW) {
				const [line, check] = make(sent);
				if (check !== null)
					pending.set(idOf(sent), check);
				batch.push(line);
				sent++;
			}
			if (batch.length > 0)
				await s.write(batch.join('\n') + '\n');
		};
		const run = async (limit) => {
			await pump(limit);
			while (pending.size > 0) {
				const l = await s.readLine(10000);
				const id = l.json?.id;
				const check = pending.get(id);
				assert.ok(check !== undefined, `unexpected or duplicate answer: ${l.text.slice(0, 300)}`);
				pending.delete(id);
				check(l);
				got++;
				if (s.lines.length === 0)
					await pump(limit);
			}
		};
		// Late answers to cancelled (300 ms) and timed-out (3 s) calls come
		// meanwhile; none may reach the client.
		const LATE_MS = 3300;
		await run(checkpoint);
		await L.sleep(LATE_MS);
		assert.deepEqual((await s.drain()).map((l) => l.text), [], 'nothing answered for cancelled calls');
		early = await settled(s, 3);
		await run(CALLS);
		await L.sleep(LATE_MS);
		assert.deepEqual((await s.drain()).map((l) => l.text), [], 'nothing answered for cancelled calls');
		const late = await settled(s, 3);
		assert.equal(sent, CALLS);
		assert.equal(got, CALLS - cancelled, 'every call but the cancelled ones answered once');
		assert.deepEqual([...s.pids], pids0, 'no server restarted');
		assertFlat(early, late, 'calls');
		const r = await s.close(5000);
		assert.equal(r?.code, 0);
		// They exit on their stdin's end, maybe just after the workbench.
		await L.waitFor(() => H.survivors(pids0).length === 0, H.T(3000), 'no server process left').catch(() => {});
		assert.deepEqual(H.survivors(pids0), []);
		H.forget(s);
		t.diagnostic(`${CALLS} calls (${cancelled} cancelled, ${timeouts} timed out) in ${Date.now() - t0} ms; ` +
		    `fds ${early.fds}/${late.fds}, rss ${early.rss}/${late.rss} kB`);
	});
});
