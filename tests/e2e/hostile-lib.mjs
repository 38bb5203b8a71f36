// Byte-level client and process measurements for hostile.test.mjs and
// soak.test.mjs (issue 6).  Unlike lib.mjs's startRaw, this client keeps
// every stdout line as raw bytes (so tests can check that the workbench
// writes valid UTF-8), honours backpressure when writing, can stop
// reading stdout on purpose, and never keeps more than a bounded tail of
// the workbench's stderr (servers that flood stderr send many MB).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as L from './lib.mjs';

// Under `make asan` and `make valgrind` (WB_TEST_SLOW=asan or valgrind,
// or any WORKBENCH other than ./mcp-workbench) the workbench runs slower
// and its RSS says nothing about its own memory.  Waits and time limits
// are then multiplied by SLOW (WORKBENCH_SLOW overrides), and memory
// bounds are only checked when CHECK_RSS says so (default: not wrapped).
export const WRAPPED = (process.env.WB_TEST_SLOW ?? '') !== '' ||
    (process.env.WORKBENCH !== undefined &&
    path.resolve(process.env.WORKBENCH) !== path.join(L.REPO_DIR, 'mcp-workbench'));
export const SLOW = Number(process.env.WORKBENCH_SLOW ??
    ({ asan: 3, valgrind: 10 }[process.env.WB_TEST_SLOW] ?? (WRAPPED ? 10 : 1)));
export const CHECK_RSS = process.env.CHECK_RSS !== undefined ? process.env.CHECK_RSS === '1' : !WRAPPED;

// A time limit in ms, stretched under a wrapper.
export function T(ms) {
	return ms * SLOW;
}

const live = new Set();		// Sessions not yet closed.
const seenPids = new Map();	// Mock servers, their grandchildren -> startTime.

const utf8 = new TextDecoder('utf-8', { fatal: true });

// True when buf is valid UTF-8 (no overlongs, surrogates or stray bytes).
export function isUtf8(buf) {
	try {
		utf8.decode(buf);
		return true;
	} catch {
		return false;
	}
}

// A process to kill at the end if it still runs: noted with its start time
// (L.killNoted), as its pid may be another's by then.
function see(pid) {
	if (!seenPids.has(pid))
		seenPids.set(pid, L.startTime(pid));
}

// A session that ended cleanly: its process groups are not ours to kill
// any more (their pids may be reused).
export function forget(s) {
	for (const p of [...s.pids, ...s.grandchildren, ...s.childPids])
		seenPids.delete(p);
}

// Kill every session still running and every process group we saw.
export function cleanupAll() {
	// Only one not reaped yet: a reaped one's pid may be another's.
	for (const s of live)
		if (s.proc.exitCode === null && s.proc.signalCode === null)
			L.killWorkbench(s.pid, 'cleanup');
	live.clear();
	for (const [pid, started] of seenPids)
		L.killNoted(pid, started);
	seenPids.clear();
	L.cleanup();
}

process.on('exit', cleanupAll);

// ---------------------------------------------------------------------------
// /proc measurements (Linux).

// CPU time (user and system) a process has used so far, in ms; Linux
// counts it in ticks of 10 ms (USER_HZ 100).
export function cpuMs(pid) {
	const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	return (Number(f[11]) + Number(f[12])) * 10;
}

export function procStatus(pid) {
	const out = {};
	for (const line of fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
		const m = line.match(/^(\w+):\s+(\d+) kB$/);
		if (m)
			out[m[1]] = Number(m[2]);
	}
	return out;
}

// Resident set size in kB, and its peak (VmHWM).
export function rssKb(pid) {
	return procStatus(pid).VmRSS;
}

export function hwmKb(pid) {
	return procStatus(pid).VmHWM;
}

export function fdCount(pid) {
	return fs.readdirSync(`/proc/${pid}/fd`).length;
}

// The workbench's guardian process names itself so (guard.c).
export const GUARDIAN = 'wb-guardian';

// Children of pid, zombies included (an unreaped child is a leak too),
// but for the workbench's guardian, which lives as long as it does.
export function children(pid) {
	return L.processes().filter((p) => p.ppid === pid && p.comm !== GUARDIAN).map((p) => ({ pid: p.pid, state: p.state }));
}

// The workbench's guardian processes (one, once a server has started).
export function guardians(pid) {
	return L.processes().filter((p) => p.ppid === pid && p.comm === GUARDIAN).map((p) => p.pid);
}

// ---------------------------------------------------------------------------
// The session.

function lineObj(buf) {
	const text = buf.toString('utf8');
	let json;
	let parsed = false;
	return {
		buf,
		text,
		get json() {
			if (!parsed) {
				parsed = true;
				try {
					json = JSON.parse(text);
				} catch {
					json = undefined;
				}
			}
			return json;
		},
	};
}

// Start the workbench on a config (object or path).  Options: args, env,
// cwd, onStderrLine(line) called for every stderr line (as text), wrap: a
// command (an array) that execs the workbench given after it.
export function startSession(config, opts = {}) {
	const configPath = typeof config === 'string' ? config : L.writeConfig(config);
	const argv = [...(opts.wrap ?? []), L.WORKBENCH, '-c', configPath, ...(opts.args ?? [])];
	const proc = spawn(argv[0], argv.slice(1), {
		stdio: ['pipe', 'pipe', 'pipe'],
		env: L.workbenchEnv(opts.env),
		cwd: opts.cwd,
	});
	const s = {
		proc,
		pid: proc.pid,
		configPath,
		lines: [],		// Unread stdout lines.
		chunks: [],		// Partial stdout line.
		stderrTail: '',
		stderrLines: 0,
		pids: new Set(),	// Mock pids seen on stderr.
		starts: 0,		// Their start lines: a pid may come again.
		started: new Map(),	// "toolbox/server" -> its pids, in order.
		grandchildren: new Set(),
		childPids: new Set(),	// Children seen in /proc (for cleanup).
		waiter: null,
		exit: null,
		bytesOut: 0,
	};
	live.add(s);
	// A workbench that dies abruptly (a sanitizer abort) orphans servers it
	// never got to announce: note its children as they come, for cleanup.
	const watchChildren = setInterval(() => {
		for (const c of children(s.pid)) {
			s.childPids.add(c.pid);
			see(c.pid);
		}
	}, 250);
	watchChildren.unref();
	proc.stdin.on('error', () => {});
	proc.stdout.on('error', () => {});
	let errPartial = '';
	proc.stderr.on('data', (d) => {
		const text = errPartial + d.toString('latin1');
		const parts = text.split('\n');
		errPartial = parts.pop();
		if (errPartial.length > 65536)
			errPartial = errPartial.slice(-65536);
		for (const l of parts) {
			s.stderrLines++;
			let m = l.match(/^(?:\[([^\]]*)\] )?mock-server: started pid=(\d+)$/);
			if (m) {
				const pid = Number(m[2]);
				s.starts++;
				s.pids.add(pid);
				see(pid);
				if (m[1] !== undefined)
					s.started.set(m[1], [...(s.started.get(m[1]) ?? []), pid]);
			}
			m = l.match(/mock-server: grandchild pid=(\d+)$/);
			if (m) {
				s.grandchildren.add(Number(m[1]));
				see(Number(m[1]));
			}
			if (opts.onStderrLine)
				opts.onStderrLine(l);
		}
		s.stderrTail += parts.length > 0 ? parts.join('\n') + '\n' : '';
		if (s.stderrTail.length > 262144)
			s.stderrTail = s.stderrTail.slice(-131072);
	});
	proc.stdout.on('data', (d) => {
		s.bytesOut += d.length;
		let start = 0;
		let i;
		while ((i = d.indexOf(10, start)) >= 0) {
			s.chunks.push(d.subarray(start, i));
			s.lines.push(lineObj(Buffer.concat(s.chunks)));
			s.chunks = [];
			start = i + 1;
		}
		if (start < d.length)
			s.chunks.push(d.subarray(start));
		s.wake();
	});
	s.exited = new Promise((resolve) => {
		const done = (code, signal, at = Date.now()) => {
			if (s.exit !== null)
				return;
			clearInterval(watchChildren);
			s.exit = { code, signal, at };
			live.delete(s);
			resolve(s.exit);
			s.wake();
		};
		L.exitOf(proc, done);
		proc.once('error', (e) => {
			s.spawnError = e;
			done(null, null);
		});
	});
	s.wake = () => {
		if (s.waiter) {
			const w = s.waiter;
			s.waiter = null;
			w();
		}
	};
	// The pid of the latest start of "toolbox/server" (servers start in
	// parallel: the order of their stderr lines says nothing).
	s.pidOf = (label) => {
		const p = s.started.get(label);
		return p === undefined ? undefined : p[p.length - 1];
	};
	// The same, once its line has come: stderr may come after the answers.
	s.startedPid = (label, ms = T(5000)) =>
		L.waitFor(() => s.pidOf(label), ms, `the start line of ${label}`);
	// Once each mock server of toolbox name in config has said it started.
	s.allStarted = (config, name) => {
		const labels = Object.entries(config.toolboxes[name].mcpServers)
		    .filter(([, c]) => c.command === L.MOCK).map(([k]) => `${name}/${k}`);
		return L.waitFor(() => labels.every((l) => s.started.has(l)), T(5000),
		    `the start lines of ${labels.join(', ')}`);
	};
	s.describe = () => `workbench pid ${s.pid}; stderr tail:\n${s.stderrTail.slice(-3000)}`;
	// Write bytes, waiting for the pipe to drain (never buffers without bound).
	s.write = (data) => new Promise((resolve) => {
		if (s.exit !== null || proc.stdin.destroyed) {
			resolve(false);
			return;
		}
		if (proc.stdin.write(data))
			resolve(true);
		else {
			const done = () => {
				proc.stdin.off('drain', done);
				proc.stdin.off('close', done);
				resolve(true);
			};
			proc.stdin.once('drain', done);
			proc.stdin.once('close', done);
		}
	});
	s.sendLine = (text) => s.write(typeof text === 'string' ? text + '\n' : Buffer.concat([text, Buffer.from('\n')]));
	s.send = (obj) => s.sendLine(JSON.stringify(obj));
	// Waits are given as for the plain binary and stretched by SLOW.
	s.readLine = (ms = 5000) => readLineRaw(ms * SLOW);
	const readLineRaw = async (ms) => {
		const end = Date.now() + ms;
		while (s.lines.length === 0) {
			if (s.spawnError)
				throw new Error(`cannot run ${L.WORKBENCH}: ${s.spawnError.message}`);
			if (s.exit !== null)
				throw new Error(`workbench exited (${s.exit.code ?? s.exit.signal}) before answering; ${s.describe()}`);
			const left = end - Date.now();
			if (left <= 0)
				throw new Error(`no stdout line within ${ms} ms; ${s.describe()}`);
			await new Promise((r) => {
				const t = setTimeout(() => {
					s.waiter = null;
					r();
				}, left);
				s.waiter = () => {
					clearTimeout(t);
					r();
				};
			});
		}
		return s.lines.shift();
	};
	// Read until a line satisfies pred; the lines before it go to others.
	s.waitLine = async (pred, ms = 5000, others = null) => {
		const end = Date.now() + ms * SLOW;
		for (;;) {
			const l = await readLineRaw(Math.max(1, end - Date.now()));
			if (pred(l))
				return l;
			if (others)
				others.push(l);
		}
	};
	// Read until the answer whose id equals id.
	s.waitId = (id, ms = 5000, others = null) => s.waitLine((l) => l.json !== null &&
	    typeof l.json === 'object' && 'id' in l.json && Object.is(l.json.id, id), ms, others);
	let nextId = 1;
	s.newId = () => `h-${nextId++}`;
	s.request = async (method, params, ms = 5000, others = null) => {
		const id = s.newId();
		const msg = { jsonrpc: '2.0', id, method };
		if (params !== undefined)
			msg.params = params;
		await s.send(msg);
		return s.waitId(id, ms, others);
	};
	s.call = (name, args, ms = 5000, others = null) =>
		s.request('tools/call', { name, arguments: args }, ms, others);
	s.useTool = (toolbox, server, name, args, ms = 5000, others = null) => {
		const a = { tool: { toolbox, server, name } };
		if (args !== undefined)
			a.arguments = args;
		return s.call('use_tool', a, ms, others);
	};
	s.open = (toolbox, ms = 10000) => s.call('open_toolbox', { toolbox_name: toolbox }, ms);
	// Every line that arrives until a ping with a fresh id is answered.
	s.drain = async (ms = 5000) => {
		const others = [];
		await s.request('ping', undefined, ms, others);
		return others;
	};
	s.initialize = async (protocolVersion = '2025-11-25', capabilities = {}) => {
		const l = await s.request('initialize', {
			protocolVersion, capabilities, clientInfo: { name: 'hostile-e2e', version: '1.0.0' },
		});
		if (!l.json?.result)
			throw new Error(`initialize failed: ${l.text}`);
		await s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
		return l.json.result;
	};
	s.pause = () => proc.stdout.pause();
	s.resume = () => proc.stdout.resume();
	// Close stdin (the polite end of a session) and wait for the exit.
	s.close = async (ms = 4000) => {
		ms *= SLOW;
		try {
			proc.stdin.end();
		} catch {
			// ignore
		}
		const r = await L.within(s.exited, ms);
		if (r === null && proc.exitCode === null && proc.signalCode === null)
			L.killWorkbench(s.pid, `escalation: no exit within ${ms} ms of stdin's end`);
		return r;
	};
	return s;
}

// The text of a tools/call answer line's first content item.
export function text(line) {
	const c = line.json?.result?.content?.[0];
	if (!c || c.type !== 'text')
		throw new Error(`answer has no text content: ${line.text.slice(0, 500)}`);
	return c.text;
}

// Living members of each process group (each mock leads its own group).
export function survivors(pgids) {
	const out = [];
	for (const g of pgids)
		for (const p of L.groupMembers(g))
			out.push(p);
	return out;
}
