// Issue 19: supervision.  Idle servers are stopped and started again on
// demand; servers and what they started die with the workbench, even when
// it is killed with SIGKILL; --probe reports how each server starts; a
// configuration that cannot be read says why and where its path came from.  (Backoff of
// automatic restarts: hostile.test.mjs.)

import fs from 'node:fs';
import path from 'node:path';
import { describe, test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';
import * as H from './hostile-lib.mjs';

const T = H.T;

after(H.cleanupAll);
afterEach(H.cleanupAll);

async function opened(config, name) {
	const s = H.startSession(config);
	await s.initialize();
	const l = await s.open(name);
	assert.equal(l.json?.result?.isError, undefined, `open_toolbox ${name}: ${l.text.slice(0, 500)}`);
	// Their start lines, which tests count, may come after the answer.
	await s.allStarted(config, name);
	return s;
}

function text(l) {
	assert.ok(!l.json?.result?.isError, l.text.slice(0, 400));
	return H.text(l);
}

// VmRSS of every process in these groups, in kB.
function groupsRssKb(pgids) {
	let kb = 0;
	for (const p of H.survivors(pgids)) {
		try {
			kb += H.rssKb(p);
		} catch {
			// raced with exit
		}
	}
	return kb;
}

describe('idle stop', () => {
	// Longer than a loaded machine's pause between two of the test's steps
	// (the server must still run when the call below is sent).
	const IDLE = 1500;
	test('a server idle for idleTimeoutMs is stopped (not a crash), stays listed, and the next call starts it again', { timeout: T(30000) }, async (t) => {
		const config = {
			toolMode: 'dynamic',
			toolboxes: {
				b: {
					description: 'idle',
					mcpServers: {
						i: { ...L.mock('--name', 'i'), idleTimeoutMs: IDLE },
						k: L.mock('--name', 'k'),
					},
				},
			},
		};
		const s = await opened(config, 'b');
		const i0 = await s.startedPid('b/i');
		const k0 = await s.startedPid('b/k');
		// Busy for longer than the idle limit: a call in flight is traffic.
		// Its answer is the proof: a stop closes the server's pipes, so a
		// call in flight then is never answered.  (Not its pid, nor its RSS
		// after the answer: by the time a loaded machine looks, the idle
		// stop may have come.)
		const call = s.useTool('b', 'i', 'sleep', { ms: 2 * IDLE }, T(5000) + 2 * IDLE);
		const before = groupsRssKb([i0, k0]);
		assert.equal(text(await call), `slept ${2 * IDLE}`, 'not stopped while a call was in flight');
		await L.waitFor(() => H.survivors([i0]).length === 0, T(3000) + IDLE, 'the idle server to be stopped');
		// The process may be gone before the workbench has reaped it and
		// said why: wait for the line, then look at what else it said.
		const stopped = new RegExp(`b/i: stopped after ${IDLE} ms without traffic \\(idleTimeoutMs\\)`);
		await L.waitFor(() => stopped.test(s.stderrTail), T(3000), 'the idle stop reported');
		const afterStop = groupsRssKb([i0, k0]);
		assert.ok(L.pidAlive(k0), `the server without idleTimeoutMs runs on; ${s.describe()}`);
		assert.doesNotMatch(s.stderrTail, /b\/i: .*exited|killed by signal/, 'an idle stop is not a failure');
		t.diagnostic(`servers' RSS ${before} kB -> ${afterStop} kB once the idle one stopped`);
		assert.ok(afterStop < before, `RSS of the servers drops: ${before} -> ${afterStop} kB`);
		// Its tools are still listed, and a call starts it again.
		const list = await s.request('tools/list', {});
		assert.ok(list.json.result.tools.some((x) => x.name === 'b__i__echo'), 'still listed');
		assert.equal(text(await s.useTool('b', 'i', 'echo', { message: 'again' }, T(5000))), 'again');
		// Its start line comes on stderr, maybe after the answer on stdout.
		await L.waitFor(() => s.pidOf('b/i') !== i0, T(3000), 'the new start\'s line');
		assert.notEqual(s.pidOf('b/i'), i0, 'a new process');
		assert.match(s.stderrTail, /b\/i: starting again \(it was stopped while idle\)/);
		const r = await s.close(5000);
		assert.equal(r?.code, 0);
		H.forget(s);
	});

	test('idleTimeoutMs is checked in the configuration', () => {
		const dir = L.makeTempDir();
		const file = path.join(dir, 'c.json');
		fs.writeFileSync(file, JSON.stringify({ idleTimeoutMs: -1, toolboxes: {} }));
		const r = L.runCli(['--check', '-c', file]);
		assert.equal(r.status, 1, r.all);
		assert.match(r.stderr, /idleTimeoutMs: expected a whole number of milliseconds from 0 to 86400000/);
	});
});

describe('shutdown', () => {
	// The client's close() waits for the workbench's exit, not for its
	// servers': those still exiting are the guardian's, which gives each
	// the rest of its 0.5 s (stdin closed) before SIGTERM.
	test('the workbench exits once its answers are written; a server still exiting gets its time from the guardian', { timeout: T(20000) }, async () => {
		const config = { toolboxes: { b: { description: 'x', mcpServers: { slow: L.mock('--linger'), quick: L.mock() } } } };
		const s = await opened(config, 'b');
		await L.waitFor(() => s.pids.size === 2, T(3000), 'both servers\' pids');
		await L.waitFor(() => H.guardians(s.pid).length > 0, T(2000), 'the guardian');
		const lingerer = s.pidOf('b/slow');
		assert.ok(lingerer > 0, 'the lingering server\'s pid');
		const closed = Date.now();
		s.proc.stdin.end();
		const r = await L.within(s.exited, T(5000));
		assert.ok(r !== null, 'the workbench exited');
		assert.equal(r.code, 0);
		// It did not wait for the server that ignores its stdin's end.  Under
		// valgrind the exit itself (the leak check) can outlast the 0.5 s.
		if (H.SLOW === 1)
			assert.ok(L.pidAlive(lingerer), 'the lingering server is still there when the workbench has exited');
		await L.waitFor(() => !L.pidAlive(lingerer), T(4000), 'the lingering server ended by the guardian', 10);
		const lived = Date.now() - closed;
		// Not at once (a parent-death signal would): after its 0.5 s.
		assert.ok(lived >= 450, `the lingering server was ended ${lived} ms after stdin closed`);
		assert.deepEqual(H.survivors([...s.pids]), [], 'no server left');
		H.forget(s);
	});
});

describe('no orphans', () => {
	test('SIGKILL of the workbench: servers that ignore stdin EOF and SIGTERM, and a grandchild, are all gone', { timeout: T(20000) }, async () => {
		const config = {
			toolboxes: {
				b: {
					description: 'stubborn',
					mcpServers: {
						a: L.mock('--linger', '--ignore-sigterm', '--grandchild'),
						c: L.mock('--linger', '--ignore-sigterm'),
					},
				},
			},
		};
		const s = await opened(config, 'b');
		await L.waitFor(() => s.grandchildren.size === 1, T(3000), 'grandchild pid');
		const pids = [...s.pids, ...s.grandchildren];
		await L.waitFor(() => H.guardians(s.pid).length > 0, T(2000), 'the guardian');
		const guardians = H.guardians(s.pid);
		assert.equal(guardians.length, 1, 'one guardian process');
		assert.ok(L.killWorkbench(s.pid, 'deliberate: the no-orphans tests'));
		await L.within(s.exited, T(3000));
		await L.waitFor(() => H.survivors([...s.pids]).length === 0 &&
		    pids.every((p) => !L.pidAlive(p)), T(4000), 'every server and the grandchild gone');
		await L.waitFor(() => !L.pidAlive(guardians[0]), T(3000), 'the guardian gone too');
		H.forget(s);
	});

	test('the guardian lets the client see the end at once: stdout closes with the workbench', { timeout: T(20000) }, async () => {
		const config = { toolboxes: { b: { description: 'x', mcpServers: { a: L.mock() } } } };
		const s = await opened(config, 'b');
		// The guardian names itself just after its fork: wait for the name.
		await L.waitFor(() => H.guardians(s.pid).length > 0, T(2000), 'the guardian');
		assert.equal(H.guardians(s.pid).length, 1);
		const closed = new Promise((resolve) => s.proc.stdout.once('close', resolve));
		assert.ok(L.killWorkbench(s.pid, 'deliberate: the no-orphans tests'));
		assert.notEqual(await L.within(closed.then(() => true), T(2000)), null, 'stdout closed');
		await L.waitFor(() => H.survivors([...s.pids]).length === 0, T(4000), 'the server gone');
		H.forget(s);
	});
});

describe('--probe', () => {
	const config = {
		toolboxes: {
			good: {
				description: 'fine',
				mcpServers: {
					a: L.mock('--tools', '3', '--prompts', '--resources', '2'),
					b: L.mock('--init-delay', '200'),
				},
			},
			bad: {
				description: 'broken',
				mcpServers: {
					x: L.mock('--exit-on-init', '4', '--stderr-lines', '2'),
					y: { command: '/nonexistent/server' },
				},
			},
		},
	};

	test('reports every server: ready with its tools and time, or failed with the reason and its last stderr lines', async () => {
		const file = L.writeConfig(config);
		const r = L.runCli(['--probe', '-c', file]);
		assert.equal(r.status, 1, r.all);
		const lines = r.stdout.trim().split('\n');
		assert.equal(lines.length, 4, r.stdout);
		assert.match(lines[0], /^good\/a: ready, \d+ tools, \d+ prompts?, \d+ resources, \d+ templates?, \d+ ms$/);
		const b = lines[1].match(/^good\/b: ready, \d+ tools, (\d+) ms$/);
		assert.ok(b, lines[1]);
		assert.ok(Number(b[1]) >= 200, `time to ready ${b[1]} ms includes the 200 ms init delay`);
		assert.match(lines[2], /^bad\/x: failed: .*exited with status 4.*mock stderr line 2/);
		assert.match(lines[3], /^bad\/y: failed: cannot execute '\/nonexistent\/server': No such file or directory$/);
		// The guardian ends what the probe left: a polite 0.5 s, then signals.
		for (const pid of L.mockStarts(r.stderr))
			await L.waitFor(() => !L.pidAlive(pid), T(5000), `server ${pid} to be ended`);
	});

	test('named toolboxes only; exit 0 when all are ready; --json', () => {
		const file = L.writeConfig(config);
		let r = L.runCli(['--probe', '-c', file, 'good']);
		assert.equal(r.status, 0, r.all);
		assert.equal(r.stdout.trim().split('\n').length, 2);
		r = L.runCli(['--probe', '--json', '-c', file, 'good', 'bad']);
		assert.equal(r.status, 1, r.all);
		const j = JSON.parse(r.stdout);
		assert.equal(j.ok, false);
		assert.deepEqual(j.servers.map((x) => [x.toolbox, x.server, x.state]),
		    [['good', 'a', 'ready'], ['good', 'b', 'ready'], ['bad', 'x', 'failed'], ['bad', 'y', 'failed']]);
		assert.ok(j.servers[0].tools > 0 && j.servers[1].readyMs >= 200, r.stdout);
		assert.ok(j.servers[0].prompts > 0 && j.servers[0].resources >= 2, r.stdout);
		assert.match(j.servers[2].error, /exited with status 4/);
	});

	test('an unknown toolbox, and --json without --probe, are usage errors', () => {
		const file = L.writeConfig(config);
		let r = L.runCli(['--probe', '-c', file, 'nope']);
		assert.equal(r.status, 2, r.all);
		assert.match(r.stderr, /--probe: no toolbox 'nope' in .*; it has: good bad/);
		r = L.runCli(['--json', '-c', file]);
		assert.equal(r.status, 2, r.all);
		assert.match(r.stderr, /--json goes with --probe/);
	});
});

describe('a configuration that cannot be read', () => {
	test('a missing file says where its path came from, and how to name one', () => {
		const dir = L.makeTempDir();
		let r = L.runCli([], { cwd: dir });
		assert.equal(r.status, 1, r.all);
		assert.match(r.stderr, /^mcp-workbench: no configuration: workbench-config\.json \(the default: no -c FILE was given and WORKBENCH_CONFIG is not set\) does not exist; name one with -c FILE$/m);
		assert.match(r.stderr, /usage: mcp-workbench \[-c FILE\]/);
		r = L.runCli([], { cwd: dir, env: { ...process.env, WORKBENCH_CONFIG: path.join(dir, 'gone.json') } });
		assert.equal(r.status, 1, r.all);
		assert.match(r.stderr, /no configuration: \S*gone\.json \(from WORKBENCH_CONFIG\) does not exist; name one with -c FILE/);
	});

	test('-c FILE says that FILE does not exist, or why it cannot be read, on one line', () => {
		const dir = L.makeTempDir();
		const missing = path.join(dir, 'nonexistent.json');
		const dangling = path.join(dir, 'dangling.json');
		fs.symlinkSync(missing, dangling);
		const big = path.join(dir, 'big.json');
		fs.writeFileSync(big, '');
		fs.truncateSync(big, 16 * 1024 * 1024 + 1);
		const cases = [
			[missing, 'does not exist'],
			[dangling, 'is a symbolic link to a file that does not exist'],
			[dir, 'cannot be read: Is a directory'],
			[path.join(big, 'x.json'), 'cannot be read: Not a directory'],
			// Unreadable, for root too: reading a process's memory at
			// address 0 fails.
			['/proc/self/mem', 'cannot be read: Input/output error'],
			[big, 'cannot be read: larger than 16 MiB'],
		];
		for (const [file, why] of cases) {
			for (const args of [['-c', file], ['--check', '-c', file], ['--probe', '-c', file]]) {
				const r = L.runCli(args);
				assert.equal(r.status, 1, r.all);
				assert.equal(r.stdout, '');
				assert.equal(r.stderr, `mcp-workbench: no configuration: ${file} (given with -c) ${why}\n`, args.join(' '));
			}
		}
		// A file that is there and wrong is still invalid, not missing.
		const bad = path.join(dir, 'bad.json');
		fs.writeFileSync(bad, '{');
		const r = L.runCli(['-c', bad]);
		assert.equal(r.status, 1, r.all);
		assert.match(r.stderr, /bad\.json:1:2: JSON syntax error \(unexpected end of file\)\nmcp-workbench: \S*bad\.json: configuration is invalid\n$/);
	});
});
