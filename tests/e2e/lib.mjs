// Shared helpers for the end-to-end suites (node --test tests/e2e/).
//
// The workbench under test is $WORKBENCH or the repository's ./mcp-workbench.
// Downstream servers are the C mock (tests/mock-server, built by `make`) and
// the pinned npm servers, run with `node` on their installed entry points:
// no npx, no network.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
export const TESTS_DIR = path.dirname(E2E_DIR);
export const REPO_DIR = path.dirname(TESTS_DIR);
export const WORKBENCH = process.env.WORKBENCH
    ? path.resolve(process.env.WORKBENCH)
    : path.join(REPO_DIR, 'mcp-workbench');
// How much slower the workbench runs under `make asan` and `make
// valgrind` (WB_TEST_SLOW), for the raw sessions' default waits.
export const SLOW = Number(process.env.WORKBENCH_SLOW ??
    ({ asan: 3, valgrind: 10 }[process.env.WB_TEST_SLOW] ?? 1));
// Under valgrind a front cannot start the shared workbench: it executes
// /proc/self/exe, which is valgrind's tool there (tests/valgrind.sh), so
// each session would run alone. Tests of a shared workbench skip there,
// saying so; they run plain and under make asan.
export const NO_SHARING = process.env.WB_TEST_SLOW === 'valgrind' &&
    'a front cannot start a shared workbench under valgrind';
export const MOCK = process.env.MOCK_SERVER
    ? path.resolve(process.env.MOCK_SERVER)
    : path.join(TESTS_DIR, 'mock-server');
export const NODE = process.execPath;

// ---------------------------------------------------------------------------
// Bookkeeping: everything spawned or created here is cleaned up by cleanup()
// (suites call it from after()) and, as a last resort, on process exit.

const liveProcs = new Set();	// ChildProcess objects we spawned
const mockPgids = new Map();	// mock servers seen on stderr -> startTime
const tempDirs = new Set();

function killQuietly(pid, sig) {
	try {
		process.kill(pid, sig);
		return true;
	} catch {
		return false;
	}
}

// A workbench ended with SIGKILL leaves valgrind no time to write its
// summary (make valgrind): each such kill is noted in $WB_TEST_KILLED with
// its reason, so that tests/valgrind.sh tells a deliberate kill from a
// workbench that would not exit or crashed.  Reasons: "deliberate ..." (a
// test of being killed), "escalation ..." (it did not exit in time: a
// failure), "cleanup" (still running when its suite ended).
export function killWorkbench(pid, reason) {
	if (!killQuietly(pid, 'SIGKILL'))
		return false;
	if (process.env.WB_TEST_KILLED) {
		try {
			fs.appendFileSync(process.env.WB_TEST_KILLED, `${pid} ${reason}\n`);
		} catch {
			// The verdict then is "no summary, no reason": a failure.
		}
	}
	return true;
}

// A workbench started some other way (http-lib.mjs): killed at cleanup.
export function adopt(proc) {
	liveProcs.add(proc);
}

export function notePids(text) {
	for (const m of text.matchAll(/(?:mock|fixture)-server: started pid=(\d+)/g))
		if (!mockPgids.has(Number(m[1])))
			mockPgids.set(Number(m[1]), startTime(Number(m[1])));
}

// What tells a process from a later one given the same pid: its start time
// (clock ticks after boot, /proc/PID/stat), or null once it is gone.
export function startTime(pid) {
	try {
		const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		return st.slice(st.lastIndexOf(')') + 2).split(' ')[19];
	} catch {
		return null;
	}
}

// Kill the process group of pid and pid, a process noted when its start
// time was started: never a process that has the pid since (pid_max is
// often 32768, so over a test run pids come round to other tests' and
// other runs' processes).  A group outlives its leader, and its pid is
// not given out while the group lasts: with the leader gone and the pid
// free, what is left of its group is killed.
export function killNoted(pid, started) {
	const now = startTime(pid);
	if (now !== null && now !== started)
		return;
	killQuietly(-pid, 'SIGKILL');
	if (now !== null)
		killQuietly(pid, 'SIGKILL');
}

export function cleanup() {
	for (const p of liveProcs) {
		if (p.exitCode === null && p.signalCode === null)
			killWorkbench(p.pid, 'cleanup');
	}
	liveProcs.clear();
	// Each mock server is a process group leader (setsid) if the
	// workbench did its job; kill the group, then the pid itself.
	for (const [pid, started] of mockPgids)
		killNoted(pid, started);
	mockPgids.clear();
	for (const d of tempDirs) {
		try {
			fs.rmSync(d, { recursive: true, force: true });
		} catch {
			// ignore
		}
	}
	tempDirs.clear();
}

process.on('exit', cleanup);

export function makeTempDir(prefix = 'wb-e2e-') {
	const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
	tempDirs.add(d);
	return d;
}

// The environment of a workbench: each gets a tool catalogue directory of
// its own (XDG_CACHE_HOME), so that no test sees another's tool lists;
// env, when given, is the whole environment otherwise.
export function workbenchEnv(env) {
	const cache = { XDG_CACHE_HOME: makeTempDir('wb-cache-') };
	return env ? { ...cache, ...env } : { ...process.env, ...cache };
}

// Write a config object (or raw text) to a fresh temporary file; returns its path.
export function writeConfig(config, name = 'workbench-config.json') {
	const dir = makeTempDir('wb-cfg-');
	const file = path.join(dir, name);
	fs.writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
	return file;
}

// ---------------------------------------------------------------------------
// Small utilities.

export function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

// The promise's value, or null if it has not settled within ms; the
// timer is cleared either way, so nothing is left to keep node running.
export async function within(promise, ms) {
	let timer;
	const late = new Promise((r) => {
		timer = setTimeout(() => r(null), ms);
	});
	try {
		return await Promise.race([promise, late]);
	} finally {
		clearTimeout(timer);
	}
}

export async function withTimeout(promise, ms, what) {
	const r = await within(Promise.resolve(promise).then((value) => ({ value })), ms);
	if (r === null)
		throw new Error(`timed out after ${ms} ms: ${what}`);
	return r.value;
}

// The port a fixture server says it listens on ("listening PORT" on its
// stdout), or an error if it exits first or says nothing within ms.
export function listeningPort(proc, ms, what) {
	return withTimeout(new Promise((resolve, reject) => {
		readline.createInterface({ input: proc.stdout }).on('line', (l) => {
			const m = /^listening (\d+)$/.exec(l);
			if (m)
				resolve(Number(m[1]));
		});
		proc.once('exit', () => reject(new Error(`${what} exited`)));
	}), ms, `${what} listening`);
}

// A process's exit, { code, signal, at } timed when it came, told once
// its stderr has closed too: node may tell an exit before the last lines
// the process wrote (a descendant holding stderr open is waited for 2 s
// at most).  then(code, signal, at) is called with it as well.
export function exitOf(proc, then = () => {}) {
	const closed = proc.stderr === null || proc.stderr.closed ? Promise.resolve() :
	    new Promise((r) => proc.stderr.once('close', r));
	return new Promise((resolve) => {
		const told = (code, signal, at) => {
			let timer;
			const bound = new Promise((r) => { timer = setTimeout(r, 2000); });
			Promise.race([closed, bound]).then(() => {
				clearTimeout(timer);
				then(code, signal, at);
				resolve({ code, signal, at });
			});
		};
		if (proc.exitCode !== null || proc.signalCode !== null)
			told(proc.exitCode, proc.signalCode, Date.now());
		else
			proc.once('exit', (code, signal) => told(code, signal, Date.now()));
	});
}

export async function waitFor(pred, ms = 5000, what = 'condition', step = 20) {
	const end = Date.now() + ms;
	for (;;) {
		const v = await pred();
		if (v)
			return v;
		if (Date.now() > end)
			throw new Error(`timed out after ${ms} ms waiting for ${what}`);
		await sleep(step);
	}
}

export function pidAlive(pid) {
	try {
		process.kill(pid, 0);
	} catch (e) {
		return e.code === 'EPERM';
	}
	// A zombie still answers kill(0); look at /proc on Linux.
	try {
		const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		const state = st.slice(st.lastIndexOf(')') + 2, st.lastIndexOf(')') + 3);
		return state !== 'Z' && state !== 'X';
	} catch {
		return false;
	}
}

export function groupAlive(pgid) {
	try {
		process.kill(-pgid, 0);
		return true;
	} catch (e) {
		return e.code === 'EPERM';
	}
}

// Every process as { pid, comm, state, ppid, pgrp } (Linux /proc/PID/stat).
export function processes() {
	const out = [];
	for (const ent of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(ent))
			continue;
		try {
			const st = fs.readFileSync(`/proc/${ent}/stat`, 'utf8');
			const rest = st.slice(st.lastIndexOf(')') + 2).split(' ');
			const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
			out.push({ pid: Number(ent), comm, state: rest[0], ppid: Number(rest[1]), pgrp: Number(rest[2]) });
		} catch {
			// raced with exit
		}
	}
	return out;
}

// Pids of processes whose process group is pgid, zombies excluded.
export function groupMembers(pgid) {
	return processes().filter((p) => p.pgrp === pgid && p.state !== 'Z').map((p) => p.pid);
}

// Pids "mock-server: started pid=N" seen in a text (the workbench forwards
// its children's stderr as "[toolbox/server] line").
export function mockStarts(text, prefix = null) {
	const p = prefix === null ? '(?:\\[[^\\]\\n]*\\] )?' : escapeRe(prefix);
	const re = new RegExp(`^${p}mock-server: started pid=(\\d+)$`, 'gm');
	return [...text.matchAll(re)].map((m) => Number(m[1]));
}

export function escapeRe(s) {
	return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---------------------------------------------------------------------------
// Downstream server descriptions for configs.

export function mock(...args) {
	return { command: MOCK, args };
}

function packageBin(pkg) {
	const dir = path.join(TESTS_DIR, 'node_modules', ...pkg.split('/'));
	const meta = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
	let bin = meta.bin;
	if (typeof bin === 'object')
		bin = Object.values(bin)[0];
	if (typeof bin !== 'string')
		throw new Error(`${pkg}: no bin in package.json`);
	return path.join(dir, bin);
}

export function everythingServer() {
	return { command: NODE, args: [packageBin('@modelcontextprotocol/server-everything'), 'stdio'] };
}

export function memoryServer(file) {
	return {
		command: NODE,
		args: [packageBin('@modelcontextprotocol/server-memory')],
		env: { MEMORY_FILE_PATH: file },
	};
}

export function filesystemServer(...dirs) {
	return { command: NODE, args: [packageBin('@modelcontextprotocol/server-filesystem'), ...dirs] };
}

// The JavaScript fixture server of relay.test.mjs (tests/e2e/fixture-server.mjs).
export function fixtureServer(...args) {
	return { command: NODE, args: [path.join(E2E_DIR, 'fixture-server.mjs'), ...args] };
}

// Count the notifications of one method an SDK Client receives (installs a
// handler for that schema). Returns {count, list, reset(), waitCount(n, ms)}.
export function collectNotifications(client, schema) {
	const c = {
		list: [],
		get count() {
			return c.list.length;
		},
		reset() {
			c.list.length = 0;
		},
		waitCount(n, ms = 5000 * SLOW) {
			return waitFor(() => c.list.length >= n, ms,
			    `${n} notification(s) (got ${c.list.length})`);
		},
	};
	client.setNotificationHandler(schema, (n) => {
		c.list.push(n);
	});
	return c;
}

// Every message the client receives, in the order it came on the wire.
// The SDK runs notification handlers a tick after it has handled an
// answer: a notification that arrives together with its call's answer
// reaches no handler (progress is then reported to onerror as for an
// unknown token).  What the workbench sent, and in which order, is told
// by this tap, whatever the client made of it.
export function tapMessages(client) {
	const t = client.transport;
	const seen = [];
	const next = t.onmessage;
	t.onmessage = (m, extra) => {
		seen.push(m);
		next?.call(t, m, extra);
	};
	return seen;
}

// The progress sent on the wire for the one call of seen that asked for
// it (the SDK's token is the request's id): the values before its answer,
// and whether the answer came.
export function wireProgress(seen) {
	const progress = seen.filter((m) => m.method === 'notifications/progress');
	const tokens = new Set(progress.map((m) => m.params.progressToken));
	assert.ok(tokens.size <= 1, `progress for one call only: ${[...tokens]}`);
	const id = [...tokens][0];
	const answer = seen.findIndex((m) => m.id === id && m.method === undefined);
	return {
		answered: answer >= 0,
		before: (answer < 0 ? progress : seen.slice(0, answer).filter((m) =>
		    m.method === 'notifications/progress')).map((m) => m.params.progress),
	};
}

// The one call's progress went out before its answer as want (seen from
// tapMessages), and the client reported a prefix of it, in order: it may
// drop what came together with the answer.
export function assertWireProgress(seen, reported, want, what = 'progress') {
	const sent = wireProgress(seen);
	assert.ok(sent.answered, `${what}: the answer on the wire`);
	assert.deepEqual(sent.before, want, `${what}: sent before the answer`);
	assert.deepEqual(reported, sent.before.slice(0, reported.length), `${what}: reported in order`);
}

// Errors the SDK reports for progress that came with its call's answer
// (see tapMessages), removed from errors; the rest stay.
export function dropLateProgressErrors(errors) {
	for (let i = errors.length - 1; i >= 0; i--)
		if (/progress notification for an unknown token/.test(String(errors[i]?.message)))
			errors.splice(i, 1);
	return errors;
}

// The error an SDK call must throw (assertion failure when it resolves).
export async function rejection(promise, what = 'call') {
	try {
		const r = await promise;
		throw Object.assign(new Error(`${what} should have failed but returned ${JSON.stringify(r).slice(0, 500)}`),
		    { notRejected: true });
	} catch (e) {
		if (e.notRejected)
			throw e;
		return e;
	}
}

export function haveWorkbench() {
	return fs.existsSync(WORKBENCH);
}

export function haveMock() {
	return fs.existsSync(MOCK);
}

// ---------------------------------------------------------------------------
// The workbench under the official SDK client.

// Start the workbench on a config (object or path) and connect an SDK
// Client. Options: args (extra CLI args), env (the child's environment:
// the SDK adds HOME LOGNAME PATH SHELL TERM USER), capabilities (the
// client's), cwd, connectTimeout.
export async function startWorkbench(config, opts = {}) {
	const configPath = typeof config === 'string' ? config : writeConfig(config);
	const transport = new StdioClientTransport({
		command: WORKBENCH,
		args: ['-c', configPath, ...(opts.args ?? [])],
		env: { XDG_CACHE_HOME: makeTempDir('wb-cache-'), ...opts.env },
		cwd: opts.cwd,
		stderr: 'pipe',
	});
	let stderr = '';
	transport.stderr.on('data', (d) => {
		stderr += d.toString();
		notePids(stderr.slice(-8192));
	});
	const client = new Client(
		{ name: 'wb-e2e', version: '1.0.0' },
		{ capabilities: opts.capabilities ?? {} },
	);
	try {
		await withTimeout(client.connect(transport), opts.connectTimeout ?? 10000 * SLOW, 'SDK connect/initialize');
	} catch (e) {
		const proc = transport._process;
		try {
			await transport.close();
		} catch {
			// ignore
		}
		if (proc && proc.exitCode === null)
			killWorkbench(proc.pid, 'escalation: no exit after a failed connect');
		e.message += `\nworkbench stderr:\n${stderr}`;
		throw e;
	}
	const proc = transport._process;
	liveProcs.add(proc);
	const exited = exitOf(proc);
	const wb = {
		client,
		transport,
		proc,
		pid: proc.pid,
		configPath,
		exited,
		get stderr() {
			return stderr;
		},
		async waitStderr(re, ms = 5000 * SLOW) {
			return waitFor(() => re.test(stderr), ms, `stderr matching ${re}\nstderr so far:\n${stderr}`);
		},
		callTool(name, args, options) {
			return client.callTool({ name, arguments: args }, undefined, options);
		},
		openToolbox(name, options) {
			return client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: name } }, undefined, options);
		},
		useTool(toolbox, server, name, args, options) {
			const a = { tool: { toolbox, server, name } };
			if (args !== undefined)
				a.arguments = args;
			return client.callTool({ name: 'use_tool', arguments: a }, undefined, options);
		},
		async close() {
			try {
				await withTimeout(client.close(), 6000 * SLOW, 'client.close');
			} catch {
				// fall through to the kill
			}
			if (proc.exitCode === null && proc.signalCode === null)
				killWorkbench(proc.pid, `escalation: no exit within ${6 * SLOW} s of client.close()`);
			liveProcs.delete(proc);
			notePids(stderr);
		},
	};
	return wb;
}

// The text of a tool result's first content item, and that text parsed.
export function resultText(result) {
	const c = result?.content?.[0];
	if (!c || c.type !== 'text')
		throw new Error(`result has no text content: ${JSON.stringify(result)}`);
	return c.text;
}

// The tools of an open_toolbox answer: each server's group's, in order,
// each with that server as `server` (the answer names a server once, for
// its tools).
export function openedTools(json) {
	return (json?.servers ?? []).flatMap((s) =>
	    (s.tools ?? []).map((t) => ({ ...t, server: s.server })));
}

export function resultJson(result) {
	const text = resultText(result);
	try {
		return JSON.parse(text);
	} catch {
		throw new Error(`result text is not JSON: ${text}`);
	}
}

// ---------------------------------------------------------------------------
// Raw line client: spawns the binary directly, writes raw bytes, reads lines.

export function startRaw(config, opts = {}) {
	const configPath = config === null ? null
	    : typeof config === 'string' ? config : writeConfig(config);
	const args = configPath === null ? [...(opts.args ?? [])] : ['-c', configPath, ...(opts.args ?? [])];
	const proc = spawn(WORKBENCH, args, {
		stdio: ['pipe', 'pipe', 'pipe'],
		env: workbenchEnv(opts.env),
		cwd: opts.cwd,
	});
	liveProcs.add(proc);
	proc.stdin.on('error', () => {});
	let stderr = '';
	let partial = '';
	const lines = [];
	let waiter = null;
	proc.stderr.on('data', (d) => {
		stderr += d.toString();
		notePids(stderr.slice(-8192));
	});
	proc.stdout.on('data', (d) => {
		partial += d.toString();
		let i;
		while ((i = partial.indexOf('\n')) >= 0) {
			lines.push(partial.slice(0, i));
			partial = partial.slice(i + 1);
		}
		if (waiter && lines.length > 0) {
			const w = waiter;
			waiter = null;
			w();
		}
	});
	let spawnError = null;
	const wakeWaiter = () => {
		if (waiter) {
			const w = waiter;
			waiter = null;
			w();
		}
	};
	const exited = new Promise((resolve) => {
		exitOf(proc, wakeWaiter).then(resolve);
		proc.once('error', (e) => {
			spawnError = e;
			resolve({ code: null, signal: null, at: Date.now() });
			wakeWaiter();
		});
	});
	const raw = {
		proc,
		pid: proc.pid,
		configPath,
		exited,
		get stderr() {
			return stderr;
		},
		get pending() {
			return lines.slice();
		},
		get partial() {
			return partial;
		},
		write(text) {
			proc.stdin.write(text);
		},
		sendLine(text) {
			proc.stdin.write(text + '\n');
		},
		send(obj) {
			proc.stdin.write(JSON.stringify(obj) + '\n');
		},
		// Next stdout line (without its '\n'), or an error after ms.
		async readLine(ms = 5000 * SLOW) {
			const end = Date.now() + ms;
			while (lines.length === 0) {
				if (spawnError)
					throw new Error(`cannot run ${WORKBENCH}: ${spawnError.message}`);
				if (proc.exitCode !== null || proc.signalCode !== null)
					throw new Error(`workbench exited (${proc.exitCode ?? proc.signalCode}) before answering; stderr:\n${stderr}`);
				const left = end - Date.now();
				if (left <= 0)
					throw new Error(`no answer line within ${ms} ms; stderr:\n${stderr}`);
				await new Promise((r) => {
					const t = setTimeout(() => {
						waiter = null;
						r();
					}, left);
					waiter = () => {
						clearTimeout(t);
						r();
					};
				});
			}
			return lines.shift();
		},
		async readJson(ms = 5000 * SLOW) {
			const line = await raw.readLine(ms);
			try {
				return JSON.parse(line);
			} catch {
				throw new Error(`answer line is not JSON: ${JSON.stringify(line)}`);
			}
		},
		// Send one message and read the next answer line (raw text + parsed).
		async request(objOrText, ms = 5000 * SLOW) {
			if (typeof objOrText === 'string')
				raw.sendLine(objOrText);
			else
				raw.send(objOrText);
			const line = await raw.readLine(ms);
			let json;
			try {
				json = JSON.parse(line);
			} catch {
				throw new Error(`answer line is not JSON: ${JSON.stringify(line)}`);
			}
			return { line, json };
		},
		// Assert that nothing arrives on stdout for ms milliseconds.
		async expectSilence(ms = 300) {
			await sleep(ms);
			if (lines.length > 0 || partial.length > 0)
				throw new Error(`unexpected output: ${JSON.stringify(lines.concat(partial ? [partial] : []))}`);
		},
		// initialize + notifications/initialized; returns the result.
		async initialize(protocolVersion = '2025-11-25', capabilities = {}) {
			const { json } = await raw.request({
				jsonrpc: '2.0', id: 'init', method: 'initialize',
				params: { protocolVersion, capabilities, clientInfo: { name: 'raw-e2e', version: '1.0.0' } },
			});
			if (!json.result)
				throw new Error(`initialize failed: ${JSON.stringify(json)}`);
			raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
			return json.result;
		},
		async close(ms = 3000 * SLOW) {
			try {
				proc.stdin.end();
			} catch {
				// ignore
			}
			const r = await within(exited, ms);
			if (r === null && proc.exitCode === null && proc.signalCode === null)
				killWorkbench(proc.pid, `escalation: no exit within ${ms} ms of stdin's end`);
			liveProcs.delete(proc);
			notePids(stderr);
			return r;
		},
	};
	return raw;
}

// ---------------------------------------------------------------------------
// Run the binary to completion (CLI tests).

export function runCli(args, opts = {}) {
	const env = workbenchEnv(opts.env);
	if (!opts.env && !opts.keepWorkbenchConfig)
		delete env.WORKBENCH_CONFIG;
	const r = spawnSync(WORKBENCH, args, {
		env,
		cwd: opts.cwd,
		input: opts.input ?? '',
		timeout: opts.timeout ?? 10000 * SLOW,
		encoding: 'utf8',
	});
	if (r.error)
		throw r.error;
	return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, all: r.stdout + r.stderr };
}

// The VERSION line of the Makefile, if there is one.
export function makefileVersion() {
	try {
		const mk = fs.readFileSync(path.join(REPO_DIR, 'Makefile'), 'utf8');
		const m = mk.match(/^VERSION\s*\??=\s*(\S+)/m);
		return m ? m[1] : null;
	} catch {
		return null;
	}
}

// Helpers the suites share.
export async function withWorkbench(config, opts, fn) {
	const wb = await startWorkbench(config, opts);
	try {
		return await fn(wb);
	} finally {
		await wb.close();
	}
}

export async function withRaw(config, opts, fn) {
	const raw = startRaw(config, opts);
	try {
		return await fn(raw);
	} finally {
		await raw.close();
	}
}

export function text(result) {
	return resultText(result);
}

export function assertOk(result, what = '') {
	assert.ok(!result.isError, `${what} unexpected isError: ${JSON.stringify(result)}`);
}

export async function openOk(wb, name) {
	const r = await wb.openToolbox(name);
	assertOk(r, `open_toolbox ${name}:`);
	return resultJson(r);
}
