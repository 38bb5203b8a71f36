// Issue 39: log levels.  "logLevel" (error, warning, info, debug) and -v
// (debug, over logLevel).  At debug the log says each message routed
// (session, server, ids), each server process started and stopped, each
// session opened and closed; never a secret: not the environment, not
// the arguments a server runs with, not a call's arguments or result.
// In a shared workbench each session hears at the level its front asked
// for, and another session's messages not at all.

import fs from 'node:fs';
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';

const SLOW = Number(process.env.WORKBENCH_SLOW ??
    ({ asan: 3, valgrind: 10 }[process.env.WB_TEST_SLOW] ?? 1));
const T = { timeout: 30000 * SLOW };

// What must never reach the log: a value of the server's env, an
// argument it runs with, and an argument of a call.
const ENV_SECRET = 'env-secret-7f3a9c';
const ARG_SECRET = 'arg-secret-5d1e2b';
const CALL_SECRET = 'call-secret-9b8c4d';

const shared = new Set();

after(() => {
	// A shared workbench still lingering (its command line names the
	// configuration): ended with the suite.
	for (const p of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(p))
			continue;
		try {
			const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
			if (argv.includes('--share-serve') && shared.has(argv[argv.indexOf('-c') + 1]))
				L.killWorkbench(Number(p), 'cleanup');
		} catch {
			// gone
		}
	}
	L.cleanup();
});

function config(extra = {}, server = {}) {
	return {
		...extra,
		toolboxes: {
			code: {
				description: 'log levels',
				mcpServers: {
					mock: {
						...L.mock('--name', ARG_SECRET),
						env: { WB_TEST_TOKEN: ENV_SECRET },
						...server,
					},
				},
			},
		},
	};
}

// One call of echo through use_tool, its arguments holding CALL_SECRET.
async function echo(wb) {
	const r = await wb.useTool('code', 'mock', 'echo', { message: CALL_SECRET });
	L.assertOk(r, 'echo:');
}

function debugLines(stderr) {
	return stderr.split('\n').filter((l) => l.startsWith('mcp-workbench: debug: '));
}

function assertNoSecret(stderr) {
	for (const s of [ENV_SECRET, ARG_SECRET, CALL_SECRET])
		assert.ok(!stderr.includes(s), `the log holds ${s}:\n${stderr}`);
}

describe('log levels', () => {
	test('-v: each call routed there and back (session, server, ids), the server process started and stopped, the session opened; no secret', T, async () => {
		const wb = await L.startWorkbench(config({}, { idleTimeoutMs: 400 }), { args: ['-v'] });
		try {
			await wb.waitStderr(/debug: session (\d+) opened: stdio/);
			const session = wb.stderr.match(/debug: session (\d+) opened: stdio/)[1];
			await L.openOk(wb, 'code');
			await echo(wb);
			const to = new RegExp(`^mcp-workbench: debug: session ${session} -> code/mock: tools/call echo id (\\d+) \\(as (\\d+)\\)$`, 'm');
			await wb.waitStderr(to);
			const [, id, ours] = wb.stderr.match(to);
			await wb.waitStderr(new RegExp(`^mcp-workbench: debug: session ${session} <- code/mock: tools/call echo id ${id} \\(as ${ours}\\)$`, 'm'));
			// Started with the command's name alone; stopped after idleTimeoutMs.
			const started = wb.stderr.match(/^mcp-workbench: debug: code\/mock: process (\d+) started: mock-server$/m);
			assert.ok(started, `no start line:\n${wb.stderr}`);
			await wb.waitStderr(new RegExp(`^mcp-workbench: debug: code/mock: process ${started[1]} stopped: its input closed$`, 'm'), 5000 * SLOW);
			await wb.waitStderr(new RegExp(`^mcp-workbench: debug: process ${started[1]} ended: exited with status 0$`, 'm'), 5000 * SLOW);
			// The lines of the default level are all still there.
			assert.match(wb.stderr, /^mcp-workbench: code\/mock: stopped after 400 ms without traffic \(idleTimeoutMs\)$/m);
			assertNoSecret(wb.stderr);
		} finally {
			await wb.close();
		}
	});

	test('at the default level (info) no debug line; "logLevel": "error" drops info lines (a server\'s stderr, an idle stop); -v overrides it, -v -v -v is -v', T, async () => {
		const idle = { idleTimeoutMs: 300 };
		const info = await L.startWorkbench(config({}, idle));
		try {
			await L.openOk(info, 'code');
			await echo(info);
			await info.waitStderr(/code\/mock: stopped after 300 ms/, 5000 * SLOW);
			assert.match(info.stderr, /^\[code\/mock\] mock-server: started pid=\d+$/m);
			assert.deepEqual(debugLines(info.stderr), []);
		} finally {
			await info.close();
		}
		const quiet = await L.startWorkbench(config({ logLevel: 'error' }, idle));
		try {
			await L.openOk(quiet, 'code');
			await echo(quiet);
			// Past the idle stop, which would have been said by now.
			await L.sleep(1200 * SLOW);
			assert.equal(quiet.stderr, '', 'logLevel error: nothing but errors');
		} finally {
			await quiet.close();
		}
		const loud = await L.startWorkbench(config({ logLevel: 'error' }), { args: ['-v', '-v', '-v'] });
		try {
			await L.openOk(loud, 'code');
			await echo(loud);
			await loud.waitStderr(/debug: session \d+ <- code\/mock: tools\/call echo id \d+/);
			assertNoSecret(loud.stderr);
		} finally {
			await loud.close();
		}
	});

	test('"logLevel": warning keeps a warning and drops info; a bad value is a configuration error', T, async () => {
		for (const good of ['error', 'warning', 'info', 'debug']) {
			const r = L.runCli(['--check', '-c', L.writeConfig(config({ logLevel: good }))]);
			assert.equal(r.status, 0, `${good}: ${r.all}`);
		}
		for (const bad of ['verbose', 'DEBUG', 3, true, null]) {
			const r = L.runCli(['--check', '-c', L.writeConfig(config({ logLevel: bad }))]);
			assert.equal(r.status, 1, `logLevel ${JSON.stringify(bad)}: ${r.all}`);
			assert.match(r.stderr, /logLevel: expected "error", "warning", "info" or "debug"/);
		}
		// A server that writes a line that is not JSON-RPC: a warning.
		const wb = L.startRaw(config({ logLevel: 'warning' }, L.mock('--garbage')));
		try {
			await wb.initialize();
			const open = await wb.request({ jsonrpc: '2.0', id: 1, method: 'tools/call',
				params: { name: 'open_toolbox', arguments: { toolbox_name: 'code' } } });
			assert.ok(open.json.result, open.line);
			await L.waitFor(() => /code\/mock: ignoring a line that is not a JSON-RPC message/.test(wb.stderr),
				5000 * SLOW, `the warning\n${wb.stderr}`);
			assert.doesNotMatch(wb.stderr, /mock-server: started pid=/, 'a server\'s stderr is info');
		} finally {
			await wb.close();
		}
	});

	test('ids come from peers: bounded and escaped in a debug line', T, async () => {
		const wb = L.startRaw(config(), { args: ['-v'] });
		try {
			await wb.initialize();
			await wb.request({ jsonrpc: '2.0', id: 1, method: 'tools/call',
				params: { name: 'open_toolbox', arguments: { toolbox_name: 'code' } } });
			const id = '\u009b31m' + 'x'.repeat(300);
			const { json } = await wb.request({ jsonrpc: '2.0', id, method: 'tools/call',
				params: { name: 'use_tool', arguments: { tool: { toolbox: 'code', server: 'mock', name: 'echo' },
					arguments: { message: CALL_SECRET } } } });
			assert.equal(json.id, id);
			await L.waitFor(() => /<- code\/mock: tools\/call echo id/.test(wb.stderr), 5000 * SLOW, wb.stderr);
			const line = wb.stderr.split('\n').find((l) => /-> code\/mock: tools\/call echo id/.test(l));
			assert.ok(line.includes('id "\\xc2\\x9b31mxxx'), line);
			assert.ok(!line.includes('\u009b'), 'a C1 control reached the log');
			assert.ok(line.length < 200, `${line.length} bytes: ${line}`);
			assert.match(line, /x\.\.\. \(as \d+\)$/);
			assertNoSecret(wb.stderr);
		} finally {
			await wb.close();
		}
	});

	test('shared: a session\'s front with -v hears debug lines of its own messages alone; one without hears none', { ...T, skip: L.NO_SHARING }, async () => {
		const dir = L.makeTempDir('wb-share-');
		const file = L.writeConfig(config({ share: true, shareDir: dir, shareLingerMs: 300 }));
		shared.add(fs.realpathSync(file));
		const loud = await L.startWorkbench(file, { args: ['-v'] });
		const plain = await L.startWorkbench(file);
		try {
			await L.openOk(loud, 'code');
			await L.openOk(plain, 'code');
			await echo(plain);
			await echo(loud);
			await loud.waitStderr(/<- code\/mock: tools\/call echo id \d+/);
			const mine = loud.stderr.match(new RegExp(`debug: session (\\d+) opened: the front of pid ${loud.pid}$`, 'm'));
			assert.ok(mine, loud.stderr);
			for (const m of loud.stderr.matchAll(/debug: session (\d+)/g))
				assert.equal(m[1], mine[1], `another session's line:\n${loud.stderr}`);
			assert.match(loud.stderr, new RegExp(`^mcp-workbench: debug: session ${mine[1]} -> code/mock: tools/call echo id \\d+ \\(as \\d+\\)$`, 'm'));
			assert.deepEqual(debugLines(plain.stderr), []);
			assertNoSecret(loud.stderr);
		} finally {
			await loud.close();
			await plain.close();
		}
		// The shared workbench's own log, at its configuration's level.
		for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.log')))
			assert.doesNotMatch(fs.readFileSync(`${dir}/${f}`, 'utf8'), /debug:/);
	});
});
