// The shared workbench's transport (share.c, front.c), end to end through
// tests/share-probe: fronts as a client starts them, and the daemon they
// start, which serves each session on the client's own stdio.  What the
// workbench will do with sessions is not here: only the directory, lock,
// socket, start, handover, lifeline, status and linger.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { describe, test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';

const PROBE = process.env.SHARE_PROBE ? path.resolve(process.env.SHARE_PROBE) : path.join(L.TESTS_DIR, 'share-probe');
const SLOW = Number(process.env.WORKBENCH_SLOW ??
    ({ asan: 3, valgrind: 10 }[process.env.WB_TEST_SLOW] ?? 1));
// A probe of another build (SHARE_PROBE, e.g. with sanitizers): its RSS
// says nothing of the front's.
const CHECK_RSS = process.env.SHARE_PROBE === undefined;
const T = (ms) => ms * SLOW;
const NOBODY = 65534;

const fronts = new Set();
const daemons = new Map();	// Shared workbenches seen -> L.startTime.
const dirs = new Set();		// Share directories made here.

function killQuietly(pid, sig = 'SIGKILL') {
	try {
		process.kill(pid, sig);
	} catch {
		// gone
	}
}

// Daemons a test did not learn of (it failed before they answered):
// those whose command line names one of this suite's share directories.
function strayDaemons() {
	const pids = [];
	for (const p of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(p))
			continue;
		try {
			const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
			const d = argv.indexOf('-d');
			if (argv.includes('--share-serve') && d >= 0 && dirs.has(argv[d + 1]))
				pids.push(Number(p));
		} catch {
			// gone
		}
	}
	return pids;
}

function cleanup() {
	for (const f of fronts)
		if (f.proc.exitCode === null && f.proc.signalCode === null)
			killQuietly(f.proc.pid);
	fronts.clear();
	// A daemon seen earlier only while its pid is still its own.
	for (const [d, started] of daemons)
		if (L.startTime(d) === started)
			killQuietly(d);
	for (const d of strayDaemons())
		killQuietly(d);
	daemons.clear();
	dirs.clear();
}

afterEach(cleanup);
after(() => {
	cleanup();
	L.cleanup();
});

// A front: share-probe front, its stdout read line by line.  shell: its
// stdin and stdout are pipes (cat | front | cat) rather than node's
// socket pairs; gate: a FIFO it reads a line from before it execs the
// front (same pid), so that many start at one instant.
class Front {
	constructor(dir, config, { args = [], env, cwd, linger = 60000, shell = false, gate, ignore } = {}) {
		const argv = ['front', '-d', dir, '-l', String(linger), ...args, config];
		const opts = { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env, cwd };
		this.t0 = Date.now();
		if (shell)
			this.proc = spawn('bash', ['-c', 'cat | "$0" "$@" | cat; exit ${PIPESTATUS[1]}', PROBE, ...argv], opts);
		else if (ignore)
			this.proc = spawn('bash', ['-c', `trap '' ${ignore}; exec "$@"`, 'sh', PROBE, ...argv], opts);
		else if (gate)
			this.proc = spawn('bash', ['-c', 'read _ < "$0"; exec "$@"', gate, PROBE, ...argv], opts);
		else
			this.proc = spawn(PROBE, argv, opts);
		this.lines = [];
		this.stderr = '';
		this.wakers = new Set();
		readline.createInterface({ input: this.proc.stdout }).on('line', (l) => {
			this.lines.push(l);
			this.wake();
		});
		this.proc.stderr.on('data', (d) => {
			this.stderr += d;
			this.wake();
		});
		// Its exit, timed when it came, but resolved once its stderr has
		// ended too: node may tell the exit before the last lines it wrote.
		const errEnd = new Promise((r) => this.proc.stderr.on('end', r));
		this.exit = new Promise((r) => this.proc.on('exit', (code, signal) => {
			const e = { code, signal, at: Date.now() };
			errEnd.then(() => {
				r(e);
				this.wake();
			});
		}));
		this.eof = new Promise((r) => this.proc.stdout.on('end', () => r(Date.now())));
		this.proc.stdin.on('error', () => {});
		fronts.add(this);
	}

	wake() {
		for (const w of this.wakers)
			w();
		this.wakers.clear();
	}

	// Wait until pred() gives something, woken by what the front says.
	async until(pred, ms, what) {
		const end = Date.now() + ms;
		for (;;) {
			const v = pred();
			if (v)
				return v;
			const left = end - Date.now();
			if (left <= 0)
				throw new Error(`timed out after ${ms} ms: ${what}; stderr: ${this.stderr}`);
			await L.within(new Promise((r) => this.wakers.add(r)), left);
		}
	}

	async ask(line, ms = T(5000)) {
		const n = this.lines.length;
		this.proc.stdin.write(line + '\n');
		return this.until(() => this.lines[n], ms, `the answer to ${line}`);
	}

	// The front's and its daemon's pids once it joined.
	async joined(ms = T(10000)) {
		const m = await this.until(() => this.stderr.match(/front (\d+) joined daemon (\d+)( \(started it\))? in (\d+) us/) ||
		    this.stderr.match(/not sharing: .*/), ms, 'joined');
		assert.ok(m[1] !== undefined, `did not join: ${this.stderr}`);
		if (!daemons.has(Number(m[2])))
			daemons.set(Number(m[2]), L.startTime(Number(m[2])));
		return { front: Number(m[1]), daemon: Number(m[2]), started: m[3] !== undefined, us: Number(m[4]) };
	}

	async alone(ms = T(10000)) {
		const m = await this.until(() => this.stderr.match(/not sharing: (.*)\n/), ms, 'a refusal');
		return m[1];
	}
}

function shareDir() {
	const d = path.join(L.makeTempDir('wb-share-'), 's');
	dirs.add(d);
	return d;
}

function config(extra = {}) {
	return L.writeConfig({ share: true, toolboxes: {}, ...extra });
}

function status(dir, cfg) {
	const r = spawnSync(PROBE, ['status', '-d', dir, cfg], { encoding: 'utf8', timeout: T(10000) });
	return { code: r.status, json: r.status === 0 ? JSON.parse(r.stdout) : null, stderr: r.stderr };
}

function logOf(dir) {
	const logs = fs.readdirSync(dir).filter((f) => f.endsWith('.log'));
	return logs.map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('');
}

async function logSays(dir, re, ms = T(5000)) {
	return L.waitFor(() => logOf(dir).match(re), ms, `${re} in the log`);
}

function count(text, re) {
	return (text.match(new RegExp(re, 'g')) ?? []).length;
}

describe('share: one daemon, the client\'s own stdio', () => {
	test('eight fronts started at one instant make exactly one daemon, which serves all eight: seven wait for the lock while the first starts it', { timeout: T(60000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		const fifos = L.makeTempDir('wb-gate-');
		const gate = path.join(fifos, 'gate');
		const hold = path.join(fifos, 'hold');
		assert.equal(spawnSync('mkfifo', [gate, hold]).status, 0);
		const held = fs.openSync(gate, fs.constants.O_RDWR);
		const env = { ...process.env, SHARE_PROBE_HOLD: hold };
		const gated = [];
		for (let i = 0; i < 8; i++)
			gated.push(new Front(dir, cfg, { gate, env }));
		// All eight at the gate (reading it), then one line each at once.
		await L.waitFor(() => gated.every((f) => {
			try {
				return fs.readlinkSync(`/proc/${f.proc.pid}/fd/0`) === gate;
			} catch {
				return false;
			}
		}), T(10000), 'eight fronts at the gate');
		fs.writeSync(held, '\n'.repeat(8));
		// The daemon is held before it listens: the other seven are
		// blocked on the lock meanwhile (not starting daemons of their own).
		const lock = await L.waitFor(() => fs.existsSync(dir) && fs.readdirSync(dir).find((n) => n.endsWith('.lock')),
		    T(10000), 'the lock file');
		const ino = fs.statSync(path.join(dir, lock)).ino;
		await L.waitFor(() => fs.readFileSync('/proc/locks', 'utf8').split('\n')
		    .filter((l) => l.includes('->') && l.includes(`:${ino} `)).length === 7, T(10000), 'seven fronts waiting for the lock');
		fs.closeSync(fs.openSync(hold, 'w'));
		const joined = await Promise.all(gated.map((f) => f.joined()));
		fs.closeSync(held);
		const pids = new Set(joined.map((j) => j.daemon));
		assert.equal(pids.size, 1, `daemons: ${[...pids]}`);
		assert.equal(joined.filter((j) => j.started).length, 1);
		assert.deepEqual(joined.map((j) => j.front).sort(), gated.map((f) => f.proc.pid).sort());
		const answers = await Promise.all(gated.map((f) => f.ask('pid')));
		const daemon = [...pids][0];
		for (let i = 0; i < 8; i++)
			assert.equal(answers[i], `${daemon} pid ${gated[i].proc.pid}`);
		const log = logOf(dir);
		assert.equal(count(log, 'listens'), 1, log);
		assert.equal(count(log, 'session of pid \\d+ began'), 8, log);
		const st = status(dir, cfg);
		assert.equal(st.code, 0, st.stderr);
		assert.equal(st.json.pid, daemon);
		assert.deepEqual(st.json.sessions.map((s) => s.pid).sort(), gated.map((f) => f.proc.pid).sort());
		for (const f of gated)
			f.proc.stdin.end();
		for (const f of gated)
			assert.equal((await f.exit).code, 0);
	});

	test('SIGTERM of a front still waiting for the lock ends it at once; the one starting the daemon goes on', { timeout: T(30000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		const hold = path.join(L.makeTempDir('wb-hold-'), 'hold');
		assert.equal(spawnSync('mkfifo', [hold]).status, 0);
		const held = fs.openSync(hold, fs.constants.O_RDWR);
		const env = { ...process.env, SHARE_PROBE_HOLD: hold };
		const first = new Front(dir, cfg, { env });
		const lock = await L.waitFor(() => fs.existsSync(dir) && fs.readdirSync(dir).find((n) => n.endsWith('.lock')),
		    T(10000), 'the lock file');
		const ino = fs.statSync(path.join(dir, lock)).ino;
		const waiting = () => fs.readFileSync('/proc/locks', 'utf8').split('\n')
		    .filter((l) => l.includes('->') && l.includes(`:${ino} `)).length;
		const second = new Front(dir, cfg, { env });
		await L.waitFor(() => waiting() === 1, T(10000), 'the second front waiting for the lock');
		process.kill(second.proc.pid, 'SIGTERM');
		const e = await L.withTimeout(second.exit, T(5000), 'the waiting front to end');
		assert.equal(e.signal, 'SIGTERM');
		assert.ok(!first.lines.length && waiting() === 0, 'the daemon is still held');
		fs.closeSync(held);
		const j = await first.joined();
		assert.equal(await first.ask('x'), `${j.daemon} echo x`);
		first.proc.stdin.end();
		assert.equal((await first.exit).code, 0);
	});

	test('the daemon answers on the client\'s own pipes while the front is stopped: no extra hop; env, cwd, options and stderr come along', { timeout: T(30000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		const cwd = L.makeTempDir('wb-cwd-');
		const secret = `value-${process.pid}-not-on-disk`;
		const f = new Front(dir, cfg, { shell: true, cwd, args: ['-o', 'mode=dynamic'],
		    env: { ...process.env, SHARE_SECRET: secret } });
		const { front, daemon } = await f.joined();
		assert.equal(await f.ask('hello'), `${daemon} echo hello`);
		// The front stopped: the daemon still reads and writes the pipes.
		process.kill(front, 'SIGSTOP');
		try {
			assert.equal(await f.ask('while stopped'), `${daemon} echo while stopped`);
			assert.equal(await f.ask('env SHARE_SECRET'), `${daemon} env SHARE_SECRET=${secret}`);
			assert.equal(await f.ask('cwd'), `${daemon} cwd ${fs.realpathSync(cwd)}`);
			assert.equal(await f.ask('opt'), `${daemon} opt mode=dynamic`);
			assert.equal(await f.ask('stderr a line for the client\'s log'), `${daemon} ok`);
			await f.until(() => f.stderr.includes('a line for the client\'s log\n'), T(5000), 'stderr');
		} finally {
			process.kill(front, 'SIGCONT');
		}
		// The front is a pipe's reader and writer no more: only the daemon is.
		const fd0 = fs.readlinkSync(`/proc/${front}/fd/0`);
		const fd1 = fs.readlinkSync(`/proc/${front}/fd/1`);
		assert.equal(fd0, '/dev/null');
		assert.equal(fd1, '/dev/null');
		const dfds = fs.readdirSync(`/proc/${daemon}/fd`).map((n) => {
			try {
				return fs.readlinkSync(`/proc/${daemon}/fd/${n}`);
			} catch {
				return '';
			}
		});
		assert.ok(dfds.filter((l) => l.startsWith('pipe:')).length >= 2, dfds.join(' '));
		// Nothing of the environment or the configuration is on disk or in a name.
		for (const name of fs.readdirSync(dir)) {
			assert.match(name, /^(key|[0-9a-f]{16}\.(sock|lock|log))$/);
			const p = path.join(dir, name);
			if (fs.lstatSync(p).isFile())
				assert.ok(!fs.readFileSync(p, 'latin1').includes(secret), name);
		}
		assert.equal(await f.ask('exit 5'), `${daemon} bye`);
		f.proc.stdin.end();	/* for the first cat */
		assert.equal((await f.exit).code, 5);
	});

	test('a client that closes stdin ends its session: the front exits 0', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const f = new Front(dir, config());
		const { daemon } = await f.joined();
		assert.equal(await f.ask('x'), `${daemon} echo x`);
		f.proc.stdin.end();
		assert.equal((await f.exit).code, 0);
		await f.eof;
		await logSays(dir, /session of pid \d+ ended: its stdin is closed/);
	});

	test('SIGKILL of a front: the daemon ends its session and closes the client\'s stdout', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		const f = new Front(dir, cfg);
		const g = new Front(dir, cfg);
		const { front, daemon } = await f.joined();
		await g.joined();
		assert.equal(await f.ask('x'), `${daemon} echo x`);
		process.kill(front, 'SIGKILL');
		// The client's stdout ends: the daemon held its last copy.
		await L.withTimeout(f.eof, T(5000), 'the killed front\'s stdout to end');
		await logSays(dir, new RegExp(`session of pid ${front} ended: its front is gone`));
		const st = status(dir, cfg);
		assert.deepEqual(st.json.sessions.map((s) => s.pid), [g.proc.pid]);
		assert.equal(await g.ask('still'), `${daemon} echo still`);
	});

	test('SIGTERM of a front (the client ending it): it exits 0 and the daemon ends its session', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const f = new Front(dir, config());
		const { front, daemon } = await f.joined();
		assert.equal(await f.ask('x'), `${daemon} echo x`);
		process.kill(front, 'SIGTERM');
		assert.deepEqual({ ...(await f.exit), at: 0 }, { code: 0, signal: null, at: 0 });
		await L.withTimeout(f.eof, T(5000), 'the client\'s stdout to end');
		await logSays(dir, new RegExp(`session of pid ${front} ended: its front is gone`));
	});

	test('SIGTERM of a front the moment it has joined, before it waits: it exits 0 all the same', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const fifo = path.join(L.makeTempDir('wb-joined-'), 'hold');
		assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
		const held = fs.openSync(fifo, fs.constants.O_RDWR);
		const f = new Front(dir, config(), { env: { ...process.env, SHARE_PROBE_JOINED_HOLD: fifo } });
		const { front, daemon } = await f.joined();
		await L.waitFor(() => fs.readdirSync(`/proc/${front}/fd`).some((n) => {
			try {
				return fs.readlinkSync(`/proc/${front}/fd/${n}`) === fifo;
			} catch {
				return false;
			}
		}), T(10000), 'the front held after joining');
		assert.equal(await f.ask('x'), `${daemon} echo x`);
		process.kill(front, 'SIGTERM');
		fs.closeSync(held);
		assert.deepEqual({ ...(await f.exit), at: 0 }, { code: 0, signal: null, at: 0 });
		await L.withTimeout(f.eof, T(5000), 'the client\'s stdout to end');
		await logSays(dir, new RegExp(`session of pid ${front} ended: its front is gone`));
	});

	test('a stop signal the front was started with ignored (nohup) stays ignored; the others still end it', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const f = new Front(dir, config(), { ignore: 'HUP' });
		const { front, daemon } = await f.joined();
		assert.equal(await f.ask('x'), `${daemon} echo x`);
		// Its dispositions once it waits (SIGTERM caught): HUP still ignored.
		const mask = (name) => BigInt('0x' + fs.readFileSync(`/proc/${front}/status`, 'utf8').match(new RegExp(`^${name}:\\s*(\\w+)`, 'm'))[1]);
		const bit = (sig) => 1n << BigInt(sig - 1);
		await L.waitFor(() => (mask('SigCgt') & bit(15)) !== 0n, T(10000), 'the front waiting');
		assert.deepEqual([mask('SigIgn') & bit(1), mask('SigCgt') & bit(1)], [bit(1), 0n]);
		process.kill(front, 'SIGHUP');
		assert.equal(await f.ask('y'), `${daemon} echo y`);
		process.kill(front, 'SIGTERM');
		assert.deepEqual({ ...(await f.exit), at: 0 }, { code: 0, signal: null, at: 0 });
	});

	test('SIGKILL of the daemon: every front exits within 2 s saying so; the next front replaces the stale socket and starts another', { timeout: T(30000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		const fs3 = [new Front(dir, cfg), new Front(dir, cfg), new Front(dir, cfg)];
		const joined = await Promise.all(fs3.map((f) => f.joined()));
		const daemon = joined[0].daemon;
		await Promise.all(fs3.map((f) => f.ask('ready')));
		const killed = Date.now();
		process.kill(daemon, 'SIGKILL');
		for (const f of fs3) {
			const e = await L.withTimeout(f.exit, T(5000), 'a front to exit');
			assert.equal(e.code, 4, f.stderr);
			assert.ok(e.at - killed < 2000, `exited ${e.at - killed} ms after the kill`);
			assert.match(f.stderr, new RegExp(`the shared workbench \\(pid ${daemon}\\) is gone; this session ended with it`));
			await L.withTimeout(f.eof, T(5000), 'the client\'s stdout to end');
		}
		const sock = fs.readdirSync(dir).find((n) => n.endsWith('.sock'));
		assert.ok(sock, 'the dead daemon\'s socket is there, stale');
		assert.equal(status(dir, cfg).code, 1);
		const next = new Front(dir, cfg);
		const j = await next.joined();
		assert.ok(j.started && j.daemon !== daemon);
		assert.equal(await next.ask('again'), `${j.daemon} echo again`);
		assert.equal(count(logOf(dir), 'listens'), 2);
	});

	test('another configuration text, one byte apart, gets a daemon of its own; both serve on', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const a = new Front(dir, config({ x: 1 }));
		const b = new Front(dir, config({ x: 2 }));
		const ja = await a.joined();
		const jb = await b.joined();
		assert.ok(ja.started && jb.started && ja.daemon !== jb.daemon);
		assert.equal(fs.readdirSync(dir).filter((n) => n.endsWith('.sock')).length, 2);
		assert.equal(await a.ask('a'), `${ja.daemon} echo a`);
		assert.equal(await b.ask('b'), `${jb.daemon} echo b`);
	});

	test('the daemon refuses to serve a configuration that is not what the front read', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		// Make the directory and its key first, as a front does.
		assert.equal(status(dir, cfg).code, 1);
		const r = spawnSync('bash', ['-c', 'exec 3>&1 1>/dev/null; exec "$0" "$@"', PROBE, '--share-serve', '0'.repeat(32),
		    '--share-ready', '3', 'daemon', '-d', dir, cfg], { encoding: 'utf8', timeout: T(10000) });
		assert.equal(r.status, 1);
		assert.equal(r.stdout, 'the configuration changed since the front read it\n');
		assert.equal(fs.readdirSync(dir).filter((n) => n.endsWith('.sock')).length, 0);
	});
});

describe('share: what is refused', () => {
	test('a shareDir open to others, owned by another user or a symbolic link is not used: the session runs on its own with the reason', { timeout: T(30000) }, async () => {
		const dir = shareDir();
		fs.mkdirSync(dir, { mode: 0o700 });
		fs.chmodSync(dir, 0o777);
		let f = new Front(dir, config());
		assert.equal(await f.alone(), `${dir} is open to group or others (mode 0777)`);
		assert.equal(await f.ask('hi'), `alone ${f.proc.pid}: hi`);
		f.proc.stdin.end();
		assert.equal((await f.exit).code, 0);
		assert.deepEqual(fs.readdirSync(dir), []);

		fs.chmodSync(dir, 0o700);
		fs.chownSync(dir, NOBODY, NOBODY);
		f = new Front(dir, config());
		assert.equal(await f.alone(), `${dir} is owned by uid ${NOBODY}, not by this user (uid 0)`);
		assert.equal(await f.ask('hi'), `alone ${f.proc.pid}: hi`);

		const link = `${dir}-link`;
		fs.symlinkSync(L.makeTempDir('wb-target-'), link);
		f = new Front(link, config());
		assert.equal(await f.alone(), `${link} is a symbolic link`);
		assert.equal(await f.ask('hi'), `alone ${f.proc.pid}: hi`);
	});

	test('a connection from uid nobody is refused by the daemon; a front of nobody does not trust a root daemon', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		const f = new Front(dir, cfg);
		const { daemon } = await f.joined();
		const r = spawnSync(PROBE, ['connect-as', String(NOBODY), '-d', dir, cfg], { encoding: 'utf8', timeout: T(10000) });
		assert.equal(r.status, 2, r.stderr);
		assert.match(r.stderr, new RegExp(`uid 0 \\(pid ${daemon}\\) is not this user \\(uid ${NOBODY}\\)`));
		await logSays(dir, new RegExp(`refused a connection: uid ${NOBODY} \\(pid \\d+\\) is not this user \\(uid 0\\)`));
		assert.equal(await f.ask('unharmed'), `${daemon} echo unharmed`);
	});
});

describe('share: status, linger, cost', () => {
	test('status: none runs (exit 1), then the daemon\'s JSON with its sessions (exit 0)', { timeout: T(20000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		const none = status(dir, cfg);
		assert.equal(none.code, 1);
		assert.match(none.stderr, /none runs/);
		const a = new Front(dir, cfg);
		const b = new Front(dir, cfg);
		const { daemon } = await a.joined();
		await b.joined();
		const st = status(dir, cfg);
		assert.equal(st.code, 0, st.stderr);
		assert.equal(st.json.pid, daemon);
		assert.deepEqual(st.json.sessions.map((s) => s.pid).sort(), [a.proc.pid, b.proc.pid].sort());
		assert.ok(Array.isArray(st.json.servers));
		// Another configuration's status: none runs for it.
		assert.equal(status(dir, config({ other: true })).code, 1);
	});

	test('the daemon stays shareLingerMs after its last session, serves a session that comes meanwhile, then exits and removes its socket', { timeout: T(30000) }, async () => {
		const dir = shareDir();
		const cfg = config();
		const linger = 1500;
		const a = new Front(dir, cfg, { linger });
		const { daemon } = await a.joined();
		a.proc.stdin.end();
		await a.exit;
		const b = new Front(dir, cfg, { linger });
		const jb = await b.joined();
		assert.equal(jb.daemon, daemon, 'a session within the linger joins the same daemon');
		// Taken before the end the daemon's linger follows, so a late wake
		// here cannot make the linger look short.
		const left = Date.now();
		b.proc.stdin.end();
		await b.exit;
		await L.waitFor(() => !L.pidAlive(daemon), T(10000), 'the daemon to exit');
		assert.ok(Date.now() - left >= linger - 50, `exited ${Date.now() - left} ms after the last session`);
		await logSays(dir, new RegExp(`no session for ${linger} ms: exiting`));
		assert.equal(fs.readdirSync(dir).filter((n) => n.endsWith('.sock')).length, 0);
		assert.equal(status(dir, cfg).code, 1);
	});

	test('a waiting front costs little: its RSS; the time a front takes to join a running daemon', { timeout: T(60000) }, async (t) => {
		const dir = shareDir();
		const cfg = config();
		const first = new Front(dir, cfg);
		const { daemon } = await first.joined();
		const times = [];
		const joins = [];
		const rss = [];
		const anon = [];
		for (let i = 0; i < 10; i++) {
			const f = new Front(dir, cfg);
			joins.push((await f.joined()).us);
			await f.ask('hi');
			times.push(Date.now() - f.t0);
			const st = fs.readFileSync(`/proc/${f.proc.pid}/status`, 'utf8');
			rss.push(Number(st.match(/VmRSS:\s+(\d+)/)[1]));
			anon.push(Number(st.match(/RssAnon:\s+(\d+)/)[1]));
			f.proc.stdin.end();
			await f.exit;
		}
		const dst = fs.readFileSync(`/proc/${daemon}/status`, 'utf8');
		const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
		const range = (a) => `median ${median(a)} (${Math.min(...a)}-${Math.max(...a)})`;
		t.diagnostic(`waiting front: VmRSS ${range(rss)} kB, RssAnon ${range(anon)} kB; daemon VmRSS ` +
		    `${dst.match(/VmRSS:\s+(\d+)/)[1]} kB; the front's join (identity, lock, connect, handover) ` +
		    `${range(joins)} us; spawn to first answer (node) ${range(times)} ms`);
		if (CHECK_RSS)
			assert.ok(median(rss) < 4096, `a waiting front's VmRSS ${median(rss)} kB`);
	});
});
