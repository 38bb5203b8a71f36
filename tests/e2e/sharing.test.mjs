// Sharing servers across client sessions ("share": true): the workbench
// a client starts joins the user's shared workbench, which serves every
// session and runs each server once for the sessions alike.  Driven with
// the SDK clients (1.x, and v2 pinned to 2026-07-28) and real servers.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';
import * as E from './eras-lib.mjs';

const SLOW = Number(process.env.WORKBENCH_SLOW ??
    ({ asan: 3, valgrind: 10 }[process.env.WB_TEST_SLOW] ?? 1));
const T = (ms) => ms * SLOW;

const shareDirs = new Set();

function ppid(pid) {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
	} catch {
		return 0;
	}
}

// The shared workbenches of this suite's configurations, by their command
// line; their guardians (forked, so with the same command line) left out.
const configs = new Set();
function daemons() {
	const all = withGuardians();
	return all.filter((p) => !all.includes(ppid(p)));
}

function withGuardians() {
	const pids = [];
	for (const p of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(p))
			continue;
		try {
			const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
			const c = argv.indexOf('-c');
			if (argv.includes('--share-serve') && c >= 0 && configs.has(argv[c + 1]))
				pids.push(Number(p));
		} catch {
			// gone
		}
	}
	return pids;
}

after(() => {
	for (const pid of withGuardians())
		L.killWorkbench(pid, 'cleanup');
	L.cleanup();
});

// A configuration that shares, in a share directory of its own.
function shareConfig(toolboxes, extra = {}) {
	const dir = L.makeTempDir('wb-share-');
	shareDirs.add(dir);
	const file = L.writeConfig({ share: true, shareDir: dir, shareLingerMs: 2000, toolboxes, ...extra });
	configs.add(fs.realpathSync(file));
	return file;
}

function status(config, opts = {}) {
	const r = L.runCli(['-c', config, '--status', '--json'], opts);
	return { code: r.status, json: r.status === 0 ? JSON.parse(r.stdout) : null, out: r.all };
}

function statusOk(config, opts = {}) {
	const s = status(config, opts);
	assert.equal(s.code, 0, `--status: ${s.out}`);
	return s.json;
}

function serverOf(st, toolbox, server) {
	return st.servers.filter((s) => s.toolbox === toolbox && s.server === server);
}

// The pids a fixture or v2 server said it started with, in stderr text.
function starts(text, kind) {
	return [...text.matchAll(new RegExp(`${kind}-server: started pid=(\\d+)`, 'g'))].map((m) => Number(m[1]));
}

const FX = () => ({ fx: { mcpServers: { f: L.fixtureServer() } } });

describe('sharing: one server for the sessions alike', () => {
	test('two SDK 1.x sessions and a v2 session pinned to 2026-07-28 share one fixture server; each gets its own answers, and its stderr only goes to sessions using it', { timeout: T(60000) }, async () => {
		const cfg = shareConfig({ ...FX(), v2: { mcpServers: { m: E.v2Server('reject') } } });
		const a = await L.startWorkbench(cfg);
		const b = await L.startWorkbench(cfg);
		const c = await E.startV2(cfg, 'pin');
		const idle = await L.startWorkbench(cfg);
		try {
			await L.openOk(a, 'fx');
			await L.openOk(b, 'fx');
			await c.openToolbox('fx');
			// Interleaved calls: each answer to its own session.
			const [ra, rb, rc] = await Promise.all([
				a.useTool('fx', 'f', 'wait', { ms: 300 }),
				b.useTool('fx', 'f', 'wait', { ms: 100 }),
				c.useTool('fx', 'f', 'wait', { ms: 200 }),
			]);
			assert.equal(L.text(ra), 'waited 300');
			assert.equal(L.text(rb), 'waited 100');
			assert.equal(L.text(rc), 'waited 200');
			const st = statusOk(cfg);
			assert.equal(st.sessions.length, 4);
			const fx = serverOf(st, 'fx', 'f');
			assert.equal(fx.length, 1, JSON.stringify(st));
			assert.ok(fx[0].pid > 0);
			assert.equal(fx[0].sessions, 3, 'the sessions with fx open');
			assert.equal(fx[0].calls, 3);
			const eras = st.sessions.map((s) => s.era).sort();
			assert.deepEqual(eras, ['2025-11-25', '2025-11-25', '2025-11-25', E.MODERN]);
			// One process started, its stderr seen by the session that
			// opened it first and by no session that never opened it.
			await a.waitStderr(new RegExp(`fixture-server: started pid=${fx[0].pid}`));
			assert.equal(starts(a.stderr + b.stderr + c.stderr, 'fixture').length, 1);
			assert.doesNotMatch(idle.stderr, /\[fx\/f\]/);
			// The v2 server in another toolbox: its own answers there.
			await L.openOk(b, 'v2');
			assert.equal(L.text(await b.useTool('v2', 'm', 'echo', { message: 'for b' })), 'for b');
			assert.equal(L.text(await c.useTool('v2', 'm', 'echo', { message: 'for c' })), 'for c');
			assert.equal(serverOf(statusOk(cfg), 'v2', 'm').length, 1);
		} finally {
			await Promise.all([a.close(), b.close(), c.close(), idle.close()]);
		}
		const ends = await Promise.all([a.exited, b.exited, idle.exited]);
		for (const e of ends)
			assert.equal(e.code, 0);
	});
});

// What a process runs with, from /proc: its directory and environment.
function procCwd(pid) {
	return fs.readlinkSync(`/proc/${pid}/cwd`);
}

function procEnv(pid) {
	return Object.fromEntries(fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
	    .filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

describe('sharing: instances by what a server runs with', () => {
	test('a variable that expands differently gets its own process; sessions alike share one, which sees their value', { timeout: T(60000) }, async () => {
		const cfg = shareConfig({ fx: { mcpServers: { f: { ...L.fixtureServer(), env: { TAG: '${WB_TAG}' } } } } });
		const a = await L.startWorkbench(cfg, { env: { WB_TAG: 'red' } });
		const b = await L.startWorkbench(cfg, { env: { WB_TAG: 'blue' } });
		const c = await L.startWorkbench(cfg, { env: { WB_TAG: 'red' } });
		try {
			for (const s of [a, b, c])
				await L.openOk(s, 'fx');
			const red = { env: { ...process.env, WB_TAG: 'red' } };
			const st = statusOk(cfg, red);
			assert.equal(st.sessions.length, 3, 'one shared workbench for all three');
			const fx = serverOf(st, 'fx', 'f').filter((s) => s.pid !== null);
			assert.equal(fx.length, 2, JSON.stringify(st.servers));
			const byTag = Object.fromEntries(fx.map((s) => [procEnv(s.pid).TAG, s]));
			assert.equal(byTag.red.sessions, 2);
			assert.equal(byTag.blue.sessions, 1);
			// Each session's calls go to its own instance.
			await a.useTool('fx', 'f', 'wait', { ms: 1 });
			await b.useTool('fx', 'f', 'wait', { ms: 1 });
			await b.useTool('fx', 'f', 'wait', { ms: 1 });
			const after = serverOf(statusOk(cfg, red), 'fx', 'f');
			assert.equal(after.find((s) => s.pid === byTag.red.pid).calls, 1);
			assert.equal(after.find((s) => s.pid === byTag.blue.pid).calls, 2);
			// Its stderr goes to the sessions of that instance only.
			await b.waitStderr(new RegExp(`started pid=${byTag.blue.pid}`));
			assert.doesNotMatch(a.stderr + c.stderr, new RegExp(`started pid=${byTag.blue.pid}`));
			assert.doesNotMatch(b.stderr, new RegExp(`started pid=${byTag.red.pid}`));
		} finally {
			await Promise.all([a.close(), b.close(), c.close()]);
		}
	});

	test('a server without cwd runs in its session\'s directory: another directory gets another process; one with cwd is shared across directories', { timeout: T(60000) }, async () => {
		const fixed = L.makeTempDir('wb-fixed-');
		const cfg = shareConfig({
			fx: { mcpServers: { f: L.fixtureServer() } },
			pinned: { mcpServers: { p: { ...L.fixtureServer(), cwd: fixed } } },
		});
		const d1 = fs.realpathSync(L.makeTempDir('wb-proj1-'));
		const d2 = fs.realpathSync(L.makeTempDir('wb-proj2-'));
		const a = await L.startWorkbench(cfg, { cwd: d1 });
		const b = await L.startWorkbench(cfg, { cwd: d2 });
		const c = await L.startWorkbench(cfg, { cwd: d1 });
		try {
			for (const s of [a, b, c]) {
				await L.openOk(s, 'fx');
				await L.openOk(s, 'pinned');
			}
			const st = statusOk(cfg);
			const fx = serverOf(st, 'fx', 'f').filter((s) => s.pid !== null);
			assert.equal(fx.length, 2, JSON.stringify(st.servers));
			const byDir = Object.fromEntries(fx.map((s) => [procCwd(s.pid), s]));
			assert.deepEqual(Object.keys(byDir).sort(), [d1, d2].sort());
			assert.equal(byDir[d1].sessions, 2);
			assert.equal(byDir[d2].sessions, 1);
			const pinned = serverOf(st, 'pinned', 'p').filter((s) => s.pid !== null);
			assert.equal(pinned.length, 1);
			assert.equal(pinned[0].sessions, 3);
			assert.equal(procCwd(pinned[0].pid), fs.realpathSync(fixed));
		} finally {
			await Promise.all([a.close(), b.close(), c.close()]);
		}
	});

	test('"share": false runs a process per session, which ends with its session; the others are shared', { timeout: T(60000) }, async () => {
		const cfg = shareConfig({ fx: { mcpServers: { own: { ...L.fixtureServer(), share: false }, f: L.fixtureServer() } } });
		const a = await L.startWorkbench(cfg);
		const b = await L.startWorkbench(cfg);
		let ownA;
		try {
			await L.openOk(a, 'fx');
			await L.openOk(b, 'fx');
			const st = statusOk(cfg);
			const own = serverOf(st, 'fx', 'own').filter((s) => s.pid !== null);
			assert.equal(own.length, 2, JSON.stringify(st.servers));
			for (const s of own)
				assert.equal(s.sessions, 1);
			assert.equal(serverOf(st, 'fx', 'f').filter((s) => s.pid !== null).length, 1);
			assert.ok(new Set(own.map((s) => s.pid)).size === 2);
			ownA = own.find((s) => a.stderr.includes(`started pid=${s.pid}`)) ??
			    (await a.waitStderr(/started pid=/), own.find((s) => a.stderr.includes(`started pid=${s.pid}`)));
			assert.ok(ownA, 'a saw its own instance start');
			await a.close();
			await L.waitFor(() => !L.pidAlive(ownA.pid), T(5000), 'a\'s own instance ends with a');
			// b and the shared server carry on.
			assert.equal(L.text(await b.useTool('fx', 'own', 'wait', { ms: 1 })), 'waited 1');
			assert.equal(L.text(await b.useTool('fx', 'f', 'wait', { ms: 1 })), 'waited 1');
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});

	test('a changed configuration file gets a new shared workbench; the session on the old one keeps it, which exits after its linger', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX(), { shareLingerMs: 300 });
		const a = await L.startWorkbench(cfg);
		await L.openOk(a, 'fx');
		const old = statusOk(cfg);
		const text = JSON.parse(fs.readFileSync(cfg, 'utf8'));
		text.toolboxes.fx2 = FX().fx;
		fs.writeFileSync(cfg, JSON.stringify(text));
		const b = await L.startWorkbench(cfg);
		try {
			await L.openOk(b, 'fx2');
			const now = statusOk(cfg);
			assert.notEqual(now.pid, old.pid);
			assert.equal(now.sessions.length, 1);
			assert.ok(L.pidAlive(old.pid));
			// a still works, on the old daemon and its old server.
			assert.equal(L.text(await a.useTool('fx', 'f', 'wait', { ms: 1 })), 'waited 1');
			assert.ok(L.pidAlive(old.servers[0].pid));
			await a.close();
			await L.waitFor(() => !L.pidAlive(old.pid), T(5000), 'the old shared workbench exits after its linger');
			await L.waitFor(() => !L.pidAlive(old.servers[0].pid), T(5000), 'taking its server with it');
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});
});

// What the fixture server received, asked through session s.
async function received(s, box = 'fx', server = 'f') {
	return L.resultJson(await s.useTool(box, server, 'received', {}));
}

// The server's id of the tools/call of tool name with these arguments.
function callId(list, name, args) {
	const r = list.find((m) => m.method === 'tools/call' && m.params?.name === name &&
	    JSON.stringify(m.params.arguments) === JSON.stringify(args));
	return r?.id;
}

function cancelledAt(list, id) {
	return list.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === id);
}

describe('sharing: sessions and the shared workbench ending', () => {
	for (const how of ['its client closes stdin', 'its front is killed (SIGKILL)']) {
		test(`a session that ends while ${how} has its calls cancelled at the shared server; the other session does not notice`, { timeout: T(60000) }, async () => {
			const cfg = shareConfig(FX());
			const a = await L.startWorkbench(cfg);
			const b = await L.startWorkbench(cfg);
			try {
				await L.openOk(a, 'fx');
				await L.openOk(b, 'fx');
				const args = { ms: 30000 };
				const pending = a.useTool('fx', 'f', 'wait', args).catch(() => null);
				const slowB = b.useTool('fx', 'f', 'wait', { ms: 400 });
				await L.waitFor(async () => callId(await received(b), 'wait', args) !== undefined, T(5000), 'a\'s call reached the server');
				if (how.startsWith('its client'))
					await a.close();
				else
					L.killWorkbench(a.pid, 'deliberate: a session\'s front killed');
				const id = callId(await received(b), 'wait', args);
				await L.waitFor(async () => cancelledAt(await received(b), id), T(5000), 'the server told of the cancellation with its own id');
				assert.equal(L.text(await slowB), 'waited 400');
				assert.equal(L.text(await b.useTool('fx', 'f', 'wait', { ms: 1 })), 'waited 1');
				await L.waitFor(() => statusOk(cfg).sessions.length === 1, T(5000), 'one session left');
				await pending;
			} finally {
				await Promise.all([a.close(), b.close()]);
			}
		});
	}

	test('the shared workbench killed (SIGKILL): every session sees its end within 2 s (exit 4), no server is left, and the next session starts a new one', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX());
		const a = await L.startWorkbench(cfg);
		const b = await L.startWorkbench(cfg);
		try {
			await L.openOk(a, 'fx');
			await L.openOk(b, 'fx');
			const st = statusOk(cfg);
			const server = serverOf(st, 'fx', 'f')[0].pid;
			const t0 = Date.now();
			L.killWorkbench(st.pid, 'deliberate: the shared workbench killed');
			const [ea, eb] = await Promise.all([a.exited, b.exited]);
			assert.equal(ea.code, 4);
			assert.equal(eb.code, 4);
			assert.ok(Math.max(ea.at, eb.at) - t0 < T(2000), `ended ${Math.max(ea.at, eb.at) - t0} ms after the kill`);
			assert.match(a.stderr, new RegExp(`the shared workbench \\(pid ${st.pid}\\) is gone`));
			await L.waitFor(() => !L.pidAlive(server), T(5000), 'the guardian ends the server');
			const c = await L.startWorkbench(cfg);
			try {
				await L.openOk(c, 'fx');
				const again = statusOk(cfg);
				assert.notEqual(again.pid, st.pid);
				assert.equal(again.sessions.length, 1);
			} finally {
				await c.close();
			}
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});

	test('the linger: a session within shareLingerMs finds the server running (no process started, open_toolbox at once); after it, the shared workbench exits with its servers', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX(), { shareLingerMs: T(1500) });
		const a = await L.startWorkbench(cfg);
		await L.openOk(a, 'fx');
		const st = statusOk(cfg);
		const server = serverOf(st, 'fx', 'f')[0].pid;
		await a.close();
		assert.equal((await a.exited).code, 0);
		const b = await L.startWorkbench(cfg);
		let t;
		try {
			const t0 = performance.now();
			await L.openOk(b, 'fx');
			t = performance.now() - t0;
			const again = statusOk(cfg);
			assert.equal(again.pid, st.pid, 'the same shared workbench');
			assert.equal(serverOf(again, 'fx', 'f')[0].pid, server, 'the same server process');
			assert.doesNotMatch(b.stderr, /started pid=/);
		} finally {
			await b.close();
		}
		assert.ok(t < T(200), `open_toolbox took ${t} ms`);
		assert.ok(L.pidAlive(st.pid), 'still lingering right after the last session');
		await L.waitFor(() => !L.pidAlive(st.pid), T(6000), 'the shared workbench exits after its linger');
		await L.waitFor(() => !L.pidAlive(server), T(3000), 'and its server with it');
		assert.equal(status(cfg).code, 1);
	});

	test('sessions starting at the same instant make exactly one shared workbench', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX());
		const all = await Promise.all(Array.from({ length: 6 }, () => L.startWorkbench(cfg)));
		try {
			await Promise.all(all.map((s) => L.openOk(s, 'fx')));
			const st = statusOk(cfg);
			assert.equal(st.sessions.length, 6);
			assert.deepEqual(daemons(), [st.pid]);
			assert.equal(serverOf(st, 'fx', 'f').filter((s) => s.pid !== null).length, 1);
			assert.deepEqual(st.sessions.map((s) => s.pid).sort(), all.map((s) => s.pid).sort());
		} finally {
			await Promise.all(all.map((s) => s.close()));
		}
	});
});
