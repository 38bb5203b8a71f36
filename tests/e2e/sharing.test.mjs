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
function daemons(config) {
	const all = withGuardians(config);
	return all.filter((p) => !all.includes(ppid(p)));
}

function withGuardians(config) {
	const pids = [];
	for (const p of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(p))
			continue;
		try {
			const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
			const c = argv.indexOf('-c');
			if (argv.includes('--share-serve') && c >= 0 && configs.has(argv[c + 1]) &&
			    (config === undefined || argv[c + 1] === fs.realpathSync(config)))
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

// Two sessions of one shared workbench with toolbox fx open: fn gets
// them, the configuration, its --status and the fx server's pid.
async function withTwoOnFx(fn) {
	const cfg = shareConfig(FX());
	const a = await L.startWorkbench(cfg);
	const b = await L.startWorkbench(cfg);
	try {
		await L.openOk(a, 'fx');
		await L.openOk(b, 'fx');
		const st = statusOk(cfg);
		await fn({ cfg, a, b, st, server: serverOf(st, 'fx', 'f')[0].pid });
	} finally {
		await Promise.all([a.close(), b.close()]);
	}
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

// The status once every server with a process has answered initialize:
// open_toolbox may answer from the catalogue while its servers start,
// and until a server has exec'd, /proc shows the shared workbench's own
// environment and directory, not the server's.
async function readyStatus(config, opts = {}) {
	return L.waitFor(() => {
		const st = statusOk(config, opts);
		return st.servers.every((s) => s.pid === null || s.state === 'ready') && st;
	}, T(10000), 'every server started ready');
}

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
			const st = await readyStatus(cfg, red);
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

	test('the environment a server would see counts: a kept variable (LANG), and with inheritEnv any variable, that differs gets another process', { timeout: T(60000) }, async () => {
		const cfg = shareConfig({
			fx: { mcpServers: { f: L.fixtureServer() } },
			all: { mcpServers: { i: { ...L.fixtureServer(), inheritEnv: true } } },
		});
		const a = await L.startWorkbench(cfg, { env: { LANG: 'C.UTF-8', WB_OTHER: 'one' } });
		const b = await L.startWorkbench(cfg, { env: { LANG: 'C.UTF-8', WB_OTHER: 'two' } });
		const c = await L.startWorkbench(cfg, { env: { LANG: 'POSIX', WB_OTHER: 'one' } });
		try {
			for (const s of [a, b, c]) {
				await L.openOk(s, 'fx');
				await L.openOk(s, 'all');
			}
			const st = await readyStatus(cfg);
			const fx = serverOf(st, 'fx', 'f').filter((s) => s.pid !== null);
			assert.deepEqual(fx.map((s) => procEnv(s.pid).LANG).sort(), ['C.UTF-8', 'POSIX']);
			assert.equal(fx.find((s) => procEnv(s.pid).LANG === 'C.UTF-8').sessions, 2, 'WB_OTHER is not passed: a and b share');
			const all = serverOf(st, 'all', 'i').filter((s) => s.pid !== null);
			assert.equal(all.length, 3, 'with inheritEnv every difference counts');
			assert.deepEqual(all.map((s) => `${procEnv(s.pid).LANG} ${procEnv(s.pid).WB_OTHER}`).sort(),
			    ['C.UTF-8 one', 'C.UTF-8 two', 'POSIX one']);
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
			const st = await readyStatus(cfg);
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
		await withTwoOnFx(async ({ cfg, a, b, st, server }) => {
			const t0 = Date.now();
			L.killWorkbench(st.pid, 'deliberate: the shared workbench killed');
			const [ea, eb] = await Promise.all([a.exited, b.exited]);
			assert.equal(ea.code, 4);
			assert.equal(eb.code, 4);
			assert.ok(Math.max(ea.at, eb.at) - t0 < T(2000), `ended ${Math.max(ea.at, eb.at) - t0} ms after the kill`);
			// Its last line may come after node tells its exit.
			await L.waitFor(() => new RegExp(`the shared workbench \\(pid ${st.pid}\\) is gone`).test(a.stderr), T(3000), 'the front\'s last line');
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
		});
	});

	test('the shared workbench stopped (SIGTERM): every session\'s front exits 4 saying it stopped, and its servers are stopped', { timeout: T(60000) }, async () => {
		await withTwoOnFx(async ({ cfg, a, b, st, server }) => {
			process.kill(st.pid, 'SIGTERM');
			const [ea, eb] = await Promise.all([a.exited, b.exited]);
			assert.deepEqual([ea.code, eb.code], [4, 4]);
			const line = new RegExp(`the shared workbench \\(pid ${st.pid}\\) stopped; this session ended with it`);
			await L.waitFor(() => line.test(a.stderr) && line.test(b.stderr), T(3000), 'each front\'s last line');
			await L.waitFor(() => !L.pidAlive(server), T(5000), 'the server stopped');
			await L.waitFor(() => !L.pidAlive(st.pid), T(5000), 'the shared workbench gone');
			assert.equal(status(cfg).code, 1);
		});
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

	test('an instance no session uses any more (another project\'s, whose session left) stops after shareLingerMs, while the shared workbench serves others', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX(), { shareLingerMs: T(2000) });
		const d1 = fs.realpathSync(L.makeTempDir('wb-proj1-'));
		const d2 = fs.realpathSync(L.makeTempDir('wb-proj2-'));
		const a = await L.startWorkbench(cfg, { cwd: d1 });
		const b = await L.startWorkbench(cfg, { cwd: d2 });
		try {
			await L.openOk(a, 'fx');
			await L.openOk(b, 'fx');
			const st = await readyStatus(cfg);
			const fx = serverOf(st, 'fx', 'f');
			assert.equal(fx.length, 2, JSON.stringify(st.servers));
			const byDir = Object.fromEntries(fx.map((x) => [procCwd(x.pid), x.pid]));
			await b.close();
			await L.waitFor(() => statusOk(cfg).sessions.length === 1, T(5000), 'b\'s session ended');
			assert.ok(L.pidAlive(byDir[d2]), 'it lingers at first');
			await L.waitFor(() => !L.pidAlive(byDir[d2]), T(15000), 'b\'s instance stopped after its linger');
			await L.waitFor(() => serverOf(statusOk(cfg), 'fx', 'f').length === 1, T(5000), 'and gone from --status');
			assert.deepEqual(serverOf(statusOk(cfg), 'fx', 'f').map((x) => x.pid), [byDir[d1]]);
			assert.equal(L.text(await a.useTool('fx', 'f', 'wait', { ms: 1 })), 'waited 1');
			assert.equal(statusOk(cfg).pid, st.pid, 'the same shared workbench');
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});

	test('sessions starting at the same instant make exactly one shared workbench', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX());
		const all = await Promise.all(Array.from({ length: 6 }, () => L.startWorkbench(cfg)));
		try {
			await Promise.all(all.map((s) => L.openOk(s, 'fx')));
			const st = statusOk(cfg);
			assert.equal(st.sessions.length, 6);
			assert.deepEqual(daemons(cfg), [st.pid]);
			assert.equal(serverOf(st, 'fx', 'f').filter((s) => s.pid !== null).length, 1);
			assert.deepEqual(st.sessions.map((s) => s.pid).sort(), all.map((s) => s.pid).sort());
		} finally {
			await Promise.all(all.map((s) => s.close()));
		}
	});
});

// A client spawned with descriptors of its own: stdio as given, its
// stderr collected; exited resolves to its exit status.
function spawnClient(cfg, stdio) {
	const p = spawn(L.WORKBENCH, ['-c', cfg], { stdio: [...stdio, 'pipe'], env: L.workbenchEnv() });
	const c = { proc: p, stderr: '' };
	p.stderr.setEncoding('utf8');
	p.stderr.on('data', (d) => { c.stderr += d; });
	c.exited = L.exitOf(p);
	return c;
}

const INIT = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } })}\n`;

describe('sharing: a client whose descriptors fail', () => {
	for (const shared of [true, false]) {
		const what = shared ? 'shared' : 'unshared';
		test(`${what}: a directory as stdin ends the session with one line (no spin)`, { timeout: T(30000) }, async () => {
			const cfg = shared ? shareConfig(FX()) : L.writeConfig({ toolboxes: FX() });
			const dir = fs.openSync(L.makeTempDir('wb-dir-'), 'r');
			const c = spawnClient(cfg, [dir, 'pipe']);
			fs.closeSync(dir);
			try {
				const e = await L.withTimeout(c.exited, T(10000), 'the session ended');
				assert.equal(e.code, 0, c.stderr);
				const lines = c.stderr.split('\n').filter((l) => /cannot be read/.test(l));
				assert.deepEqual(lines, ['mcp-workbench: the client\'s input cannot be read (Is a directory); the session ends']);
			} finally {
				c.proc.kill('SIGKILL');
			}
		});

		for (const out of ['/dev/full', 'a closed pipe']) {
			test(`${what}: a session whose stdout fails (${out}) ends`, { timeout: T(30000) }, async () => {
				const cfg = shared ? shareConfig(FX()) : L.writeConfig({ toolboxes: FX() });
				const fd = out === '/dev/full' ? fs.openSync('/dev/full', 'w') : 'pipe';
				const c = spawnClient(cfg, ['pipe', fd]);
				if (typeof fd === 'number')
					fs.closeSync(fd);
				else
					c.proc.stdout.destroy();
				try {
					// Its stdin stays open: only the failed write can end it.
					c.proc.stdin.write(INIT);
					const e = await L.withTimeout(c.exited, T(10000), 'the session ended');
					assert.equal(e.code, 0, c.stderr);
				} finally {
					c.proc.kill('SIGKILL');
				}
			});
		}
	}
});

describe('sharing: the files in shareDir', () => {
	test('a shared workbench that exits removes its socket and lock, its log saying why it stopped; a SIGKILLed one\'s socket goes when the next starts, and the lock of a text no one serves too, and its log once a day old', { timeout: T(60000) }, async () => {
		const dir = L.makeTempDir('wb-share-');
		const cfgOf = (n, linger) => {
			const file = L.writeConfig({ share: true, shareDir: dir, shareLingerMs: linger, toolboxes: { [`fx${n}`]: { mcpServers: { f: L.fixtureServer() } } } });
			configs.add(fs.realpathSync(file));
			return file;
		};
		const names = (suffix) => fs.readdirSync(dir).filter((f) => f.endsWith(suffix)).map((f) => f.slice(0, 16)).sort();
		const logOf = (n) => fs.readFileSync(path.join(dir, `${n}.log`), 'utf8');
		// The first, SIGKILLed: its socket, lock and log stay behind.
		const cfg1 = cfgOf(1, 60000);
		const a = await L.startWorkbench(cfg1);
		const st1 = statusOk(cfg1);
		const [one] = names('.log');
		assert.match(logOf(one), new RegExp(`^mcp-workbench: shared workbench ${st1.pid} \\(mcp-workbench \\S+\\) started: serves ${L.escapeRe(cfg1)}$`, 'm'));
		L.killWorkbench(st1.pid, 'deliberate: a shared workbench SIGKILLed');
		assert.equal((await a.exited).code, 4);
		assert.deepEqual(names('.sock'), [one]);
		// The next to start, of another text, removes the dead socket; the
		// log and lock of that text stay while the log is young.
		const cfg2 = cfgOf(2, T(300));
		const b = await L.startWorkbench(cfg2);
		const st2 = statusOk(cfg2);
		const two = names('.sock')[0];
		assert.deepEqual(names('.sock'), [two], 'the SIGKILLed one\'s socket is gone');
		assert.notEqual(two, one);
		assert.deepEqual(names('.lock'), [two], 'and its lock');
		assert.deepEqual(names('.log'), [one, two].sort(), 'its log is kept while young');
		// It exits after its linger: socket and lock go, the log says why.
		await b.close();
		await L.waitFor(() => !L.pidAlive(st2.pid), T(10000), 'the second exits after its linger');
		assert.deepEqual(names('.sock'), []);
		assert.deepEqual(names('.lock'), []);
		assert.match(logOf(two), new RegExp(`^mcp-workbench: shared workbench ${st2.pid} stops: no session for shareLingerMs; 0 sessions still there$`, 'm'));
		// A day later, the files of the first text go at the next start.
		const old = new Date(Date.now() - 2 * 86400 * 1000);
		fs.utimesSync(path.join(dir, `${one}.log`), old, old);
		const cfg3 = cfgOf(3, 60000);
		const c = await L.startWorkbench(cfg3);
		try {
			const st3 = statusOk(cfg3);
			const three = names('.sock')[0];
			assert.deepEqual(names('.log'), [two, three].sort(), 'the first text\'s log pruned, the second\'s kept');
			assert.deepEqual(names('.lock'), [three]);
			process.kill(st3.pid, 'SIGTERM');
			assert.equal((await c.exited).code, 4);
			await L.waitFor(() => !L.pidAlive(st3.pid), T(10000), 'the third exits');
			assert.match(logOf(three), new RegExp(`^mcp-workbench: shared workbench ${st3.pid} stops: SIGTERM; 1 session still there$`, 'm'));
			assert.deepEqual(names('.sock'), []);
			assert.deepEqual(names('.lock'), []);
		} finally {
			await c.close();
		}
	});
});

describe('sharing: a client that does not read', () => {
	test('holds up no other session: the servers are still read for them, and it is ended once more than 4 MiB and a message wait for it', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX(), { maxMessageBytes: 1024 * 1024 });
		const dir = JSON.parse(fs.readFileSync(cfg, 'utf8')).shareDir;
		const b = await L.startWorkbench(cfg);
		// A client that stops reading its stdout.
		const a = spawn(L.WORKBENCH, ['-c', cfg], { stdio: ['pipe', 'pipe', 'pipe'], env: L.workbenchEnv() });
		const aExit = new Promise((resolve) => a.once('exit', (code) => resolve(code)));
		try {
			await L.openOk(b, 'fx');
			const send = (m) => a.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
			send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'deaf', version: '1' } } });
			send({ method: 'notifications/initialized' });
			send({ id: 2, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'fx' } } });
			// It reads until its toolbox is open (the answer is paced: the
			// requests after it wait until it is taken), then no more.
			let seen = '';
			const reading = (d) => { seen += d; };
			a.stdout.on('data', reading);
			await L.waitFor(() => seen.includes('"id":2,'), T(15000), 'the toolbox open');
			a.stdout.off('data', reading);
			a.stdout.pause();
			// About 11 MB of progress for it, in 900 kB messages.
			send({ id: 3, method: 'tools/call', params: { name: 'use_tool', _meta: { progressToken: 'p' },
			    arguments: { tool: { toolbox: 'fx', server: 'f', name: 'progress' }, arguments: { steps: 12, interval_ms: 0, message: 'm'.repeat(900000) } } } });
			const log = () => fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.log'))), 'utf8');
			assert.equal(L.text(await b.useTool('fx', 'f', 'wait', { ms: 2 })), 'waited 2');
			assert.equal(await L.withTimeout(aExit, T(30000), 'the deaf session ended').catch((e) => { throw new Error(`${e.message}\n${log()}\n${JSON.stringify(status(cfg))}`); }), 0);
			assert.match(fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.log'))), 'utf8'),
			    /a client is \d+ MiB behind while others are served: its session ends/);
			assert.equal(L.text(await b.useTool('fx', 'f', 'wait', { ms: 1 })), 'waited 1');
		} finally {
			a.kill('SIGKILL');
			await b.close();
		}
	});
});

describe('sharing: security', () => {
	test('a world-writable shareDir is not used: one line says why, the session runs on its own and works', { timeout: T(30000) }, async () => {
		const cfg = shareConfig(FX());
		const dir = JSON.parse(fs.readFileSync(cfg, 'utf8')).shareDir;
		fs.chmodSync(dir, 0o777);
		const a = await L.startWorkbench(cfg);
		try {
			await a.waitStderr(/not sharing: .*open to group or others \(mode 0777\); this session runs on its own/);
			assert.equal(a.stderr.match(/not sharing/g).length, 1);
			await L.openOk(a, 'fx');
			assert.equal(L.text(await a.useTool('fx', 'f', 'wait', { ms: 1 })), 'waited 1');
			assert.deepEqual(daemons(cfg), []);
			assert.deepEqual(fs.readdirSync(dir), [], 'nothing made in it');
			const st = status(cfg);
			assert.equal(st.code, 1);
			assert.match(st.out, /open to group or others/);
		} finally {
			await a.close();
		}
		assert.equal((await a.exited).code, 0);
	});

	test('another user (nobody) cannot join: its session runs on its own, the shared workbench does not see it', { timeout: T(30000) }, async () => {
		const cfg = shareConfig(FX());
		fs.chmodSync(path.dirname(cfg), 0o755);
		fs.chmodSync(cfg, 0o644);
		const a = await L.startWorkbench(cfg);
		try {
			await L.openOk(a, 'fx');
			const before = statusOk(cfg);
			const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
			const r = await new Promise((resolve) => {
				const p = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', L.WORKBENCH, '-c', cfg],
				    { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: '/nonexistent', XDG_CACHE_HOME: '/tmp/wb-nobody-cache' } });
				let out = '', err = '';
				p.stdout.on('data', (d) => {
					out += d;
					if (out.includes('\n'))
						p.stdin.end();
				});
				p.stderr.on('data', (d) => {
					err += d;
				});
				p.on('exit', (code) => resolve({ code, out, err }));
				p.stdin.write(init + '\n');
			});
			assert.equal(r.code, 0, r.err);
			assert.match(r.err, /not sharing: .*(owned by uid 0|Permission denied).*this session runs on its own/);
			assert.equal(JSON.parse(r.out.split('\n')[0]).id, 1, 'served on its own');
			const after = statusOk(cfg);
			assert.equal(after.pid, before.pid);
			assert.deepEqual(after.sessions.map((s) => s.pid), before.sessions.map((s) => s.pid));
		} finally {
			await a.close();
		}
	});

	test('nothing of the configuration or the environment is written into shareDir, in a file or a name', { timeout: T(30000) }, async () => {
		const secret = `s3cr3t-${process.pid}-${Date.now()}`;
		const cfg = shareConfig({ fx: { mcpServers: { f: { ...L.fixtureServer(), env: { TOKEN: '${WB_SECRET}' } } } } });
		const dir = JSON.parse(fs.readFileSync(cfg, 'utf8')).shareDir;
		const a = await L.startWorkbench(cfg, { env: { WB_SECRET: secret } });
		try {
			await L.openOk(a, 'fx');
			assert.equal(procEnv(serverOf(await readyStatus(cfg, { env: { ...process.env, WB_SECRET: secret } }), 'fx', 'f')[0].pid).TOKEN, secret);
			for (const f of fs.readdirSync(dir)) {
				assert.ok(!f.includes(secret));
				const st = fs.lstatSync(path.join(dir, f));
				if (st.isFile())
					assert.ok(!fs.readFileSync(path.join(dir, f), 'latin1').includes(secret), f);
			}
			assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
		} finally {
			await a.close();
		}
	});
});

const ELICIT = { method: 'elicitation/create', params: { message: 'name?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } } };

// A 1.x session that answers elicitation with its own name, counting.
async function elicitor(cfg, name, caps = { elicitation: {} }) {
	const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
	const s = await L.startWorkbench(cfg, { capabilities: caps });
	s.asked = [];
	if (caps.elicitation)
		s.client.setRequestHandler(ElicitRequestSchema, async (req) => {
			s.asked.push(req.params.message);
			return { action: 'accept', content: { n: name } };
		});
	return s;
}

describe('sharing: a server\'s requests reach the session of their call', () => {
	test('a 2025 server shared by sessions is told every capability; its request during one session\'s call reaches that session only, refused when several sessions\' calls are in flight, or when the calling session did not declare it', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX());
		const none = await L.startWorkbench(cfg);
		const a = await elicitor(cfg, 'from-a');
		const b = await elicitor(cfg, 'from-b');
		try {
			await L.openOk(none, 'fx');	// Started for a session that declared nothing.
			await L.openOk(a, 'fx');
			await L.openOk(b, 'fx');
			const init = (await received(none)).find((m) => m.method === 'initialize');
			assert.deepEqual(Object.keys(init.params.capabilities).sort(), ['elicitation', 'roots', 'sampling']);
			assert.equal(init.params.capabilities.roots.listChanged, true);
			// One call in flight: a's request goes to a.
			let r = L.text(await a.useTool('fx', 'f', 'ask', ELICIT));
			assert.match(r, /"n":"from-a"/);
			assert.deepEqual(a.asked, ['name?']);
			assert.deepEqual(b.asked, []);
			r = L.text(await b.useTool('fx', 'f', 'ask', ELICIT));
			assert.match(r, /"n":"from-b"/);
			assert.deepEqual(b.asked, ['name?']);
			// Calls of two sessions in flight: refused, asked of no one.
			const waiting = b.useTool('fx', 'f', 'wait', { ms: T(1500) });
			await L.waitFor(async () => callId(await received(a), 'wait', { ms: T(1500) }) !== undefined, T(5000), 'b\'s call in flight');
			r = JSON.parse(L.text(await a.useTool('fx', 'f', 'ask', ELICIT)));
			assert.equal(r.error.code, -32603);
			assert.match(r.error.message, /several sessions have calls in flight on this server; a request cannot be attributed/);
			assert.deepEqual(a.asked, ['name?']);
			assert.deepEqual(b.asked, ['name?']);
			await waiting;
			// A session that did not declare elicitation: -32601, said why.
			r = JSON.parse(L.text(await none.useTool('fx', 'f', 'ask', ELICIT)));
			assert.equal(r.error.code, -32601);
			assert.match(r.error.message, /client of the calling session did not declare/);
			assert.deepEqual(a.asked.length + b.asked.length, 2);
		} finally {
			await Promise.all([none.close(), a.close(), b.close()]);
		}
	});

	test('a 2026-07-28 server\'s input requests come back in the call\'s own result: exact with calls of several sessions in flight', { timeout: T(60000) }, async () => {
		const cfg = shareConfig({ v2: { mcpServers: { m: E.v2Server('reject') } } });
		const a = await elicitor(cfg, 'from-a');
		const b = await elicitor(cfg, 'from-b');
		try {
			await L.openOk(a, 'v2');
			await L.openOk(b, 'v2');
			const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
			for (const [s, ok] of [[a, true], [b, false]])
				s.client.setRequestHandler(ElicitRequestSchema, async () => {
					s.asked.push('confirm');
					await L.sleep(200);	// Both sessions' calls in flight.
					return { action: 'accept', content: { ok } };
				});
			const [ra, rb] = await Promise.all([a.useTool('v2', 'm', 'ask_elicit', {}), b.useTool('v2', 'm', 'ask_elicit', {})]);
			assert.equal(L.text(ra), 'elicit accept {"ok":true}');
			assert.equal(L.text(rb), 'elicit accept {"ok":false}');
			assert.deepEqual(a.asked, ['confirm']);
			assert.deepEqual(b.asked, ['confirm']);
			assert.equal(serverOf(statusOk(cfg), 'v2', 'm').length, 1);
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});

	test('log levels per session: the shared server gets the most verbose asked; each session gets messages at or above its own level, of servers it uses only', { timeout: T(60000) }, async () => {
		const cfg = shareConfig({ ...FX(), other: { mcpServers: { o: L.fixtureServer() } } });
		const { LoggingMessageNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const sessions = await Promise.all([0, 1, 2].map(() => L.startWorkbench(cfg)));
		const [a, b, c] = sessions;
		const got = sessions.map((s) => {
			const list = [];
			s.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => list.push(`${n.params.level} ${n.params.data}`));
			return list;
		});
		try {
			await L.openOk(a, 'fx');
			await L.openOk(b, 'fx');
			await L.openOk(c, 'other');
			await a.client.setLoggingLevel('error');
			await b.client.setLoggingLevel('debug');
			const levels = (await received(a)).filter((m) => m.method === 'logging/setLevel').map((m) => m.params.level);
			assert.equal(levels.at(-1), 'debug');
			await a.useTool('fx', 'f', 'log', { level: 'info', data: 'chatty' });
			await a.useTool('fx', 'f', 'log', { level: 'error', data: 'bad' });
			await L.waitFor(() => got[1].length === 2, T(5000), 'b hears both');
			await L.waitFor(() => got[0].length === 1, T(5000), 'a hears the error');
			assert.deepEqual(got[0], ['error bad']);
			assert.deepEqual(got[1], ['info chatty', 'error bad']);
			await c.useTool('other', 'o', 'log', { level: 'error', data: 'other' });
			await L.waitFor(() => got[2].length === 1, T(5000), 'c hears its server');
			await L.sleep(100);
			assert.deepEqual(got[0], ['error bad'], 'a hears nothing of a server it does not use');
			assert.deepEqual(got[2], ['error other'], 'c nothing of fx');
			// The verbose session leaves: the server goes back to the
			// most verbose level of those left.
			await b.close();
			await L.waitFor(async () => (await received(a)).filter((m) => m.method === 'logging/setLevel').at(-1).params.level === 'error',
			    T(5000), 'the server told error again');
		} finally {
			await Promise.all(sessions.map((s) => s.close()));
		}
	});
});

describe('sharing: the command line', () => {
	test('--check lists the sharing settings and the servers kept to one session', () => {
		const cfg = shareConfig({ fx: { mcpServers: { own: { ...L.fixtureServer(), share: false }, f: L.fixtureServer() } } }, { shareLingerMs: 1234 });
		const dir = JSON.parse(fs.readFileSync(cfg, 'utf8')).shareDir;
		const r = L.runCli(['-c', cfg, '--check']);
		assert.equal(r.status, 0, r.all);
		assert.match(r.stdout, new RegExp(`^shared: sessions share servers, linger 1234 ms, directory ${L.escapeRe(dir)}$`, 'm'));
		assert.match(r.stdout, /^ {2}own: .* \(one per session\)$/m);
		assert.doesNotMatch(r.stdout, /^ {2}f: .*one per session/m);
		assert.deepEqual(daemons(cfg), [], '--check never starts one');
	});

	test('--status of a configuration without "share": true says that sharing is off (exit 1; with --json on stderr)', () => {
		const cfg = L.writeConfig({ toolboxes: FX() });
		const line = `sharing is off in ${cfg} (it has no "share": true): its sessions run on their own\n`;
		let r = L.runCli(['-c', cfg, '--status']);
		assert.deepEqual([r.status, r.stdout, r.stderr], [1, line, '']);
		r = L.runCli(['-c', cfg, '--status', '--json']);
		assert.deepEqual([r.status, r.stdout, r.stderr], [1, '', line]);
	});

	test('--status in words; exit 1 and says so when none serves; --json goes with it alone', { timeout: T(30000) }, async () => {
		const cfg = shareConfig(FX());
		let r = L.runCli(['-c', cfg, '--status']);
		assert.equal(r.status, 1);
		assert.equal(r.stdout, `no shared workbench serves ${cfg}\n`);
		// With --json, standard output is JSON or nothing (for scripts).
		r = L.runCli(['-c', cfg, '--status', '--json']);
		assert.deepEqual([r.status, r.stdout, r.stderr], [1, '', `no shared workbench serves ${cfg}\n`]);
		const a = await L.startWorkbench(cfg);
		try {
			await L.openOk(a, 'fx');
			const st = statusOk(cfg);
			r = L.runCli(['-c', cfg, '--status']);
			assert.equal(r.status, 0, r.all);
			const lines = r.stdout.trimEnd().split('\n');
			assert.match(lines[0], new RegExp(`^shared workbench pid ${st.pid}, up \\d+s, 1 session, 1 server$`));
			assert.match(lines[1], new RegExp(`^session pid ${a.pid}, era 2025-11-25, up \\d+s, 0 calls in flight, open: fx$`));
			assert.match(lines[2], new RegExp(`^server fx/f: pid ${st.servers[0].pid}, ready, 1 session, 0 calls$`));
			assert.equal(st.config, cfg);
			// What ps, top and pgrep show (it runs from /proc/self/exe).
			assert.equal(fs.readFileSync(`/proc/${st.pid}/comm`, 'utf8'), 'mcp-workbench\n');
			assert.ok(st.uptime_ms >= 0 && st.sessions[0].since_ms >= 0);
			assert.deepEqual(st.sessions[0].open, ['fx']);
			r = L.runCli(['-c', cfg, '--status', '--probe']);
			assert.equal(r.status, 2);
			r = L.runCli(['-c', cfg, '--status', '--listen', '127.0.0.1:1']);
			assert.deepEqual([r.status, r.stdout], [2, '']);
			assert.match(r.stderr, /--status goes with -c, --mode and --json only/);
		} finally {
			await a.close();
		}
	});
});

describe('sharing: --status of every shared workbench', () => {
	test('after an edit, --status says none serves the new text and lists the one of the earlier text with its sessions and servers; then both; copies of a server say their directory and "env differs", never a value', { timeout: T(60000) }, async () => {
		const fx = (description) => ({ fx: { description, mcpServers: { f: { ...L.fixtureServer(), env: { TAG: '${WB_TAG:-none}' } } } } });
		const cfg = shareConfig(fx('first'));
		const d1 = fs.realpathSync(L.makeTempDir('wb-proj1-'));
		const d2 = fs.realpathSync(L.makeTempDir('wb-proj2-'));
		const all = [];
		const start = async (cwd, tag) => {
			const s = await L.startWorkbench(cfg, { cwd, env: { WB_TAG: tag } });
			all.push(s);
			await L.openOk(s, 'fx');
			return s;
		};
		try {
			const a = await start(d1, 'secret-red');
			const old = statusOk(cfg).pid;
			const text = JSON.parse(fs.readFileSync(cfg, 'utf8'));
			fs.writeFileSync(cfg, JSON.stringify({ ...text, toolboxes: fx('second') }));
			let r = L.runCli(['-c', cfg, '--status']);
			assert.equal(r.status, 1, r.all);
			let lines = r.stdout.trimEnd().split('\n');
			assert.equal(lines[0], `no shared workbench serves ${cfg}`);
			assert.match(lines[1], new RegExp(`^shared workbench pid ${old}, serves an earlier text of ${L.escapeRe(cfg)}, up \\d+s, 1 session, 1 server$`));
			assert.match(lines[2], new RegExp(`^session pid ${a.pid}, `));
			assert.match(lines[3], /^server fx\/f: pid \d+, \w+, 1 session, 0 calls$/, 'one copy: no directory');
			r = L.runCli(['-c', cfg, '--status', '--json']);
			assert.equal(r.status, 1);
			assert.deepEqual(JSON.parse(r.stdout).others.map((o) => o.pid), [old]);
			assert.equal(JSON.parse(r.stdout).pid, null);
			// The new text gets its own; three copies of f in it.
			await start(d1, 'secret-red');
			await start(d2, 'secret-red');
			await start(d1, 'secret-blue');
			const st = statusOk(cfg);
			assert.notEqual(st.pid, old);
			assert.deepEqual(st.others.map((o) => [o.pid, o.sessions.length, o.servers.length]), [[old, 1, 1]]);
			r = L.runCli(['-c', cfg, '--status']);
			assert.equal(r.status, 0, r.all);
			lines = r.stdout.trimEnd().split('\n');
			assert.match(lines[0], new RegExp(`^shared workbench pid ${st.pid}, up \\d+s, 3 sessions, 3 servers$`));
			const copies = lines.filter((l) => l.startsWith('server fx/f: ')).slice(0, 3).map((l) => l.replace(/pid \d+, /, '').replace(/, \w+, \d+ sessions?, \d+ calls?$/, '')).sort();
			assert.deepEqual(copies, [`server fx/f: in ${d1}, env differs`, `server fx/f: in ${d1}, env differs`, `server fx/f: in ${d2}`].sort());
			assert.ok(lines.some((l) => new RegExp(`^shared workbench pid ${old}, serves an earlier text of `).test(l)), r.stdout);
			assert.doesNotMatch(r.stdout, /secret/);
		} finally {
			await Promise.all(all.map((s) => s.close()));
		}
	});
});

describe('sharing: each session its own', () => {
	test('the same request id in two sessions: one cancels, only its call is cancelled at the server; progress reaches each session for its own calls', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX());
		const a = await L.startWorkbench(cfg);
		const b = await L.startWorkbench(cfg);
		try {
			await L.openOk(a, 'fx');
			await L.openOk(b, 'fx');
			// Both clients numbered their requests alike: ids collide.
			const ac = new AbortController();
			const ca = a.useTool('fx', 'f', 'wait', { ms: 30000 }, { signal: ac.signal }).catch((e) => e);
			const cb = b.useTool('fx', 'f', 'wait', { ms: T(600) });
			await L.waitFor(async () => callId(await received(a), 'wait', { ms: T(600) }) !== undefined &&
			    callId(await received(a), 'wait', { ms: 30000 }) !== undefined, T(5000), 'both calls at the server');
			ac.abort();
			assert.ok((await ca) instanceof Error);
			assert.equal(L.text(await cb), `waited ${T(600)}`);
			const list = await received(b);
			assert.ok(cancelledAt(list, callId(list, 'wait', { ms: 30000 })));
			assert.ok(!cancelledAt(list, callId(list, 'wait', { ms: T(600) })));
			// Progress: each session's own, whatever its token.
			const seen = { a: [], b: [] };
			const wire = { a: L.tapMessages(a.client), b: L.tapMessages(b.client) };
			const args = (steps) => ({ steps, interval_ms: 30, total: steps, final_delay_ms: 100 });
			const [pa, pb] = await Promise.all([
				a.useTool('fx', 'f', 'progress', args(3), { onprogress: (p) => seen.a.push(p.progress) }),
				b.useTool('fx', 'f', 'progress', args(2), { onprogress: (p) => seen.b.push(p.progress) }),
			]);
			assert.equal(L.resultJson(pa).steps, 3);
			assert.equal(L.resultJson(pb).steps, 2);
			// On each session's wire its own progress, all before its
			// answer; the SDK reports those not come with the answer (on a
			// loaded machine the last ones may come with it).
			for (const [k, want] of [['a', [1, 2, 3]], ['b', [1, 2]]]) {
				const sent = L.wireProgress(wire[k]);
				assert.ok(sent.answered, `${k}: the answer on the wire`);
				assert.deepEqual(sent.before, want, `${k}: its progress on the wire`);
				assert.deepEqual(seen[k], want.slice(0, seen[k].length), `${k}: progress reported in order`);
			}
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});

	test('dynamic mode: a session\'s opens change its own tool list only, and list_changed reaches that session only', { timeout: T(60000) }, async () => {
		const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const cfg = shareConfig(FX(), { toolMode: 'dynamic' });
		const a = await L.startWorkbench(cfg);
		const b = await L.startWorkbench(cfg);
		try {
			const ca = L.collectNotifications(a.client, ToolListChangedNotificationSchema);
			const cb = L.collectNotifications(b.client, ToolListChangedNotificationSchema);
			await L.openOk(a, 'fx');
			await ca.waitCount(1);
			const names = async (s) => (await s.client.listTools()).tools.map((t) => t.name);
			assert.ok((await names(a)).some((n) => n.startsWith('fx__f__')));
			assert.ok(!(await names(b)).some((n) => n.startsWith('fx__f__')));
			assert.equal(L.text(await a.callTool('fx__f__wait', { ms: 1 })), 'waited 1');
			await L.sleep(100);
			assert.equal(cb.count, 0, 'b was told nothing');
			await L.openOk(b, 'fx');
			await cb.waitCount(1);
			assert.equal(ca.count, 1);
			assert.equal(serverOf(statusOk(cfg), 'fx', 'f').length, 1);
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});

	test('soak: sessions of both SDKs on shared npm and SDK servers, calls, progress and elicitation interleaved; every answer belongs to its session', { timeout: T(120000) }, async () => {
		const cfg = shareConfig({
			ev: { mcpServers: { everything: L.everythingServer() } },
			v2: { mcpServers: { m: E.v2Server('reject') } },
			fx: { mcpServers: { f: L.fixtureServer() } },
		});
		const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const olds = await Promise.all([0, 1, 2].map(() => L.startWorkbench(cfg, { capabilities: { elicitation: {} } })));
		const news = await Promise.all([0, 1].map(() => E.startV2(cfg, 'pin', { capabilities: { elicitation: {} } })));
		const all = [...olds, ...news];
		try {
			all.forEach((s, i) => {
				s.name = `s${i}`;
				s.asked = 0;
			});
			for (const s of olds)
				s.client.setRequestHandler(ElicitRequestSchema, async () => (s.asked++, { action: 'accept', content: { ok: s.name === 's0' } }));
			for (const s of news)
				s.client.setRequestHandler('elicitation/create', async () => (s.asked++, { action: 'accept', content: { ok: s.name === 's3' } }));
			for (const s of all)
				for (const box of ['ev', 'v2', 'fx'])
					await s.openToolbox(box);
			// What each session was sent, in order (the SDK may run a
			// progress handler after the answer that came with it).
			const taps = all.map((s) => L.tapMessages(s.client));
			const ROUNDS = 6;
			await Promise.all(all.map(async (s) => {
				for (let r = 0; r < ROUNDS; r++) {
					const tag = `${s.name}-r${r}`;
					const [echo, v2echo, wait, prog, ask] = await Promise.all([
						s.useTool('ev', 'everything', 'echo', { message: tag }),
						s.useTool('v2', 'm', 'echo', { message: tag }),
						s.useTool('fx', 'f', 'wait', { ms: 5 + r }),
						s.useTool('fx', 'f', 'progress', { steps: 2, interval_ms: 5, total: 2, final_delay_ms: 20 }, { onprogress: () => {} }),
						s.useTool('v2', 'm', 'ask_elicit', {}),
					]);
					assert.equal(L.text(echo), `Echo: ${tag}`);
					assert.equal(L.text(v2echo), tag);
					assert.equal(L.text(wait), `waited ${5 + r}`);
					assert.equal(L.resultJson(prog).steps, 2);
					assert.equal(L.text(ask), `elicit accept {"ok":${s.name === 's0' || s.name === 's3'}}`);
				}
			}));
			for (const s of all)
				assert.equal(s.asked, ROUNDS, s.name);
			// Progress: two for each of its own progress calls, before
			// that call's answer, and none for any other request.
			for (const [k, seen] of taps.entries()) {
				const progress = seen.filter((m) => m.method === 'notifications/progress');
				assert.equal(progress.length, 2 * ROUNDS, all[k].name);
				for (const p of progress) {
					const at = seen.indexOf(p);
					const answer = seen.findIndex((m) => m.id === p.params.progressToken && m.result);
					assert.ok(answer > at, `${all[k].name}: progress before its answer`);
					assert.equal(JSON.parse(seen[answer].result.content[0].text).steps, 2, `${all[k].name}: progress of a progress call`);
				}
			}
			const st = statusOk(cfg);
			assert.equal(st.sessions.length, all.length);
			for (const [box, server] of [['ev', 'everything'], ['v2', 'm'], ['fx', 'f']])
				assert.equal(serverOf(st, box, server).length, 1, `${box}/${server} once`);
		} finally {
			await Promise.all(all.map((s) => s.close()));
		}
	});
});

describe('sharing: shareLingerMs 0', () => {
	test('the first session joins the shared workbench it started (which waits for it), and the shared workbench exits as soon as the last session leaves', { timeout: T(30000) }, async () => {
		const cfg = shareConfig(FX(), { shareLingerMs: 0 });
		const a = await L.startWorkbench(cfg);
		try {
			await L.openOk(a, 'fx');
			assert.doesNotMatch(a.stderr, /not sharing/);
			const st = statusOk(cfg);
			assert.deepEqual(st.sessions.map((s) => s.pid), [a.pid]);
			await a.close();
			await L.waitFor(() => !L.pidAlive(st.pid), T(3000), 'it exits at once');
		} finally {
			await a.close();
		}
	});
});

describe('sharing: roots', () => {
	test('a session\'s roots/list_changed goes to the servers it uses only', { timeout: T(30000) }, async () => {
		const cfg = shareConfig({ ...FX(), other: { mcpServers: { o: L.fixtureServer() } } });
		const a = await L.startWorkbench(cfg, { capabilities: { roots: { listChanged: true } } });
		const b = await L.startWorkbench(cfg, { capabilities: { roots: { listChanged: true } } });
		const told = (list) => list.filter((m) => m.method === 'notifications/roots/list_changed').length;
		try {
			await L.openOk(a, 'fx');
			await L.openOk(b, 'other');
			// o may be starting behind f's catalogue entry (the same
			// configuration): a server that is not ready is not told of
			// roots, it asks for them once it is.  A call waits for it.
			assert.equal(told(await received(b, 'other', 'o')), 0);
			await b.client.sendRootsListChanged();
			await L.waitFor(async () => told(await received(b, 'other', 'o')) === 1, T(5000), 'b\'s server told');
			assert.equal(told(await received(a)), 0, 'a\'s server not told of b\'s roots');
			await a.client.sendRootsListChanged();
			await L.waitFor(async () => told(await received(a)) === 1, T(5000), 'a\'s server told');
			assert.equal(told(await received(b, 'other', 'o')), 1);
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});
});

describe('sharing: a server\'s roots/list that no call attributes', () => {
	// Two sessions declaring roots, each answering with rootsOf(it); the
	// workbench asks each at its start and again on roots/list_changed
	// (sent once the handler is there).  A request's answer comes after
	// what was sent before it: once tools/list is answered, the
	// workbench's roots/list was handled.
	async function twoWithRoots(cfg, rootsOf) {
		const { ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const all = [];
		for (const who of ['a', 'b']) {
			const s = await L.startWorkbench(cfg, { capabilities: { roots: { listChanged: true } } });
			s.asked = 0;
			s.client.setRequestHandler(ListRootsRequestSchema, async () => {
				s.asked++;
				return { roots: rootsOf(who) };
			});
			await s.client.sendRootsListChanged();
			await s.client.listTools();
			assert.ok(s.asked >= 1, 'asked on roots/list_changed');
			s.before = s.asked;
			all.push(s);
		}
		return all;
	}

	for (const same of [true, false]) {
		test(same ? 'the sessions using the server gave the same roots: the workbench answers it, asking no session' :
		    'the sessions using the server gave different roots: it is refused, saying so', { timeout: T(30000) }, async () => {
			const cfg = shareConfig({ fx: { mcpServers: { f: L.fixtureServer('--roots-on-init') } } });
			const roots = (who) => [{ uri: `file:///tmp/wb-roots-${same ? 'x' : who}`, name: 'R' }];
			const [a, b] = await twoWithRoots(cfg, roots);
			try {
				// Both open it before the server starts and asks at once.
				await Promise.all([L.openOk(a, 'fx'), L.openOk(b, 'fx')]);
				const got = await L.waitFor(async () => {
					const t = L.text(await a.useTool('fx', 'f', 'init_roots', {}));
					return t !== 'none' && JSON.parse(t);
				}, T(10000), 'the server\'s roots/list answered');
				if (same)
					assert.deepEqual(got.result, { roots: roots('a') });
				else {
					assert.equal(got.result, undefined, JSON.stringify(got));
					assert.match(got.error.message, /the sessions using it declared different roots/);
				}
				assert.deepEqual([a.asked, b.asked], [a.before, b.before], 'no session asked on the server\'s behalf');
				assert.doesNotMatch(a.stderr + b.stderr, /Failed to request roots/);
			} finally {
				await Promise.all([a.close(), b.close()]);
			}
		});
	}
});

describe('sharing: subscriptions', () => {
	test('a resource update reaches the sessions subscribed to it only; a session that ends takes its subscriptions with it', { timeout: T(30000) }, async () => {
		const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const cfg = shareConfig({ d: { mcpServers: { s: L.mock('--name', 'S', '--resources', '2') } } });
		const a = await L.startWorkbench(cfg);
		const b = await L.startWorkbench(cfg);
		try {
			const ua = L.collectNotifications(a.client, ResourceUpdatedNotificationSchema);
			const ub = L.collectNotifications(b.client, ResourceUpdatedNotificationSchema);
			await L.openOk(a, 'd');
			await L.openOk(b, 'd');
			await a.client.subscribeResource({ uri: 'mock://r/0' });
			await b.client.subscribeResource({ uri: 'mock://r/1' });
			L.assertOk(await b.useTool('d', 's', 'touch', { uri: 'mock://r/0' }));
			L.assertOk(await a.useTool('d', 's', 'touch', { uri: 'mock://r/1' }));
			await ua.waitCount(1);
			await ub.waitCount(1);
			await L.sleep(100);
			assert.deepEqual(ua.list.map((n) => n.params.uri), ['mock://r/0']);
			assert.deepEqual(ub.list.map((n) => n.params.uri), ['mock://r/1']);
			L.killWorkbench(a.pid, 'deliberate: a subscribed session\'s front killed');
			await L.waitFor(() => statusOk(cfg).sessions.length === 1, T(5000), 'a\'s session ended');
			L.assertOk(await b.useTool('d', 's', 'touch', { uri: 'mock://r/0' }));
			L.assertOk(await b.useTool('d', 's', 'touch', { uri: 'mock://r/1' }));
			await ub.waitCount(2);
			await L.sleep(100);
			assert.deepEqual(ub.list.map((n) => n.params.uri), ['mock://r/1', 'mock://r/1']);
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});
});

describe('sharing: subscriptions are to an instance', () => {
	test('two sessions subscribed to one URI on two instances of a server (another env value): each hears of its own instance\'s update only', { timeout: T(30000) }, async () => {
		const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const cfg = shareConfig({ d: { mcpServers: { s: { ...L.mock('--name', 'S', '--resources', '2'), env: { TAG: '${WB_TAG}' } } } } });
		const a = await L.startWorkbench(cfg, { env: { WB_TAG: 'red' } });
		const b = await L.startWorkbench(cfg, { env: { WB_TAG: 'blue' } });
		try {
			const ua = L.collectNotifications(a.client, ResourceUpdatedNotificationSchema);
			const ub = L.collectNotifications(b.client, ResourceUpdatedNotificationSchema);
			await L.openOk(a, 'd');
			await L.openOk(b, 'd');
			assert.equal(serverOf(await readyStatus(cfg, { env: { ...process.env, WB_TAG: 'red' } }), 'd', 's').filter((x) => x.pid !== null).length, 2, 'two instances');
			await a.client.subscribeResource({ uri: 'mock://r/0' });
			await b.client.subscribeResource({ uri: 'mock://r/0' });
			// An update goes out before the answer to the call that made
			// it: once the call is answered, its session has it, and what
			// was routed to the other session before it too.
			L.assertOk(await b.useTool('d', 's', 'touch', { uri: 'mock://r/0' }));
			assert.equal(ub.list.length, 1);
			L.assertOk(await a.useTool('d', 's', 'touch', { uri: 'mock://r/0' }));
			assert.equal(ua.list.length, 1, 'a heard of b\'s instance');
			L.assertOk(await b.useTool('d', 's', 'echo', { message: 'after' }));
			assert.equal(ub.list.length, 1, 'b heard of a\'s instance');
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});
});

describe('sharing: the tool catalogue', () => {
	test('a shared server is told every capability, and its entry is kept and found under that: a later session declaring none opens from it, capability-gated tools included (server-everything)', { timeout: T(120000) }, async () => {
		const GATED = ['trigger-elicitation-request', 'trigger-sampling-request', 'get-roots-list'];
		const names = (open) => L.openedTools(open).map((x) => x.name);
		const cfg = shareConfig({ ev: { description: 'everything', mcpServers: { everything: L.everythingServer() } } },
		    { shareLingerMs: 0, cacheDir: L.makeTempDir('wb-cat-') });
		const a = await L.startWorkbench(cfg);
		let live;
		try {
			live = L.resultJson(await a.openToolbox('ev'));
			assert.equal(live.from_catalogue, undefined);
			for (const g of GATED)
				assert.ok(names(live).includes(g), `${g} in ${names(live)}`);
		} finally {
			await a.close();
		}
		// Linger 0: the shared workbench ends with its session, and its
		// server with it; the next session starts a new one.
		await L.waitFor(() => daemons(cfg).length === 0, T(10000), 'the shared workbench ends');
		const b = await L.startWorkbench(cfg);
		try {
			const open = L.resultJson(await b.openToolbox('ev'));
			assert.deepEqual(open.from_catalogue, ['everything'], JSON.stringify(open).slice(0, 300));
			assert.deepEqual(names(open).sort(), names(live).sort());
		} finally {
			await b.close();
		}
	});
});

describe('sharing: openOnUse (issue 37)', () => {
	test('a session calls a tool of a toolbox it never opened: the running shared server answers, and a dynamic session hears its list grew', { timeout: T(60000) }, async () => {
		const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
		const cfg = shareConfig(FX(), { openOnUse: true, toolMode: 'dynamic' });
		const a = await L.startWorkbench(cfg);
		const b = await L.startWorkbench(cfg);
		try {
			await L.openOk(a, 'fx');
			assert.equal(L.text(await a.useTool('fx', 'f', 'wait', { ms: 1 })), 'waited 1');
			const changed = L.collectNotifications(b.client, ToolListChangedNotificationSchema);
			assert.ok(!(await b.client.listTools()).tools.some((t) => t.name === 'fx__f__wait'), 'not open in b');
			assert.equal(L.text(await b.useTool('fx', 'f', 'wait', { ms: 2 })), 'waited 2');
			await changed.waitCount(1, T(10000));
			assert.ok((await b.client.listTools()).tools.some((t) => t.name === 'fx__f__wait'), 'open in b now');
			const fx = serverOf(statusOk(cfg), 'fx', 'f');
			assert.equal(fx.length, 1, 'one process');
			assert.equal(fx[0].sessions, 2, 'used by both sessions');
		} finally {
			await Promise.all([a.close(), b.close()]);
		}
	});
});

describe('sharing: quiet sessions are parked (issue 39)', () => {
	test('a session quiet for a second is parked (its front watches its input, --status says so); a call wakes it, in either era, and a parked session whose client leaves ends', { timeout: T(60000) }, async () => {
		const cfg = shareConfig(FX());
		const a = await L.startWorkbench(cfg);
		const c = await E.startV2(cfg, 'pin');
		const parked = () => statusOk(cfg).sessions.filter((s) => s.parked).length;
		try {
			await L.openOk(a, 'fx');
			assert.equal(L.text(await a.useTool('fx', 'f', 'wait', { ms: 1 })), 'waited 1');
			await L.waitFor(() => parked() === 2, T(20000), 'both sessions parked');
			assert.match(L.runCli(['-c', cfg, '--status']).stdout, /in flight, parked, open: fx/);
			// Woken by what its client sends, and answered.
			assert.equal(L.text(await a.useTool('fx', 'f', 'wait', { ms: 2 })), 'waited 2');
			assert.equal(L.text(await c.useTool('fx', 'f', 'wait', { ms: 3 })), 'waited 3');
			// Parked again, and again woken: each park has its own wake.
			await L.waitFor(() => parked() === 2, T(20000), 'both parked again');
			assert.equal(L.text(await a.useTool('fx', 'f', 'wait', { ms: 4 })), 'waited 4');
			await L.waitFor(() => parked() === 2, T(20000), 'both parked a third time');
		} finally {
			await a.close();
		}
		// Its client left while parked: its front woke the shared
		// workbench, which read the end of its input and ended it.
		assert.equal((await a.exited).code, 0);
		await L.waitFor(() => statusOk(cfg).sessions.length === 1, T(10000), 'one session left');
		try {
			assert.equal(L.text(await c.useTool('fx', 'f', 'wait', { ms: 5 })), 'waited 5');
		} finally {
			await c.close();
		}
	});
});
