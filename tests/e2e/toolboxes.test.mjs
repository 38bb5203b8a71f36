// Issue 3: open_toolbox starts a toolbox's servers, use_tool routes calls to
// them; errors, concurrency, crashes, environment, shutdown; interop with
// the pinned npm reference servers.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as L from './lib.mjs';

const { withWorkbench, text, assertOk, openOk } = L;

after(L.cleanup);

const T = { timeout: 20000 };
const FIXED_TOOLS = ['echo', 'add', 'sleep', 'big', 'crash', 'fail', 'rpc_error', 'structured', 'image',
	'env', 'cwd', 'init_params', 'notify_list_changed', 'stderr'];
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function box(servers, description = 'A toolbox') {
	return { description, mcpServers: servers };
}

function execErrorPrefix(name, server, toolbox) {
	return `Error executing tool '${name}' in server '${server}' (toolbox '${toolbox}'): `;
}

// Number of mock starts the workbench forwarded for [toolbox/server].
function starts(wb, toolbox, server) {
	return L.mockStarts(wb.stderr, `[${toolbox}/${server}] `);
}

// ---------------------------------------------------------------------------

describe('open_toolbox', () => {
	const CONFIG = {
		toolboxes: {
			dev: box({
				alpha: L.mock('--name', 'alpha', '--tool-name', 'only_alpha'),
				beta: L.mock('--name', 'beta', '--tools', '2'),
			}, 'Development box'),
			other: box({ mock: L.mock() }, 'Other box'),
		},
	};

	test('result shape: JSON text, structuredContent, tool entries and order', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const r = await wb.openToolbox('dev');
			assertOk(r);
			const json = L.resultJson(r);
			assert.deepEqual(r.structuredContent, json, 'structuredContent equals the text JSON');
			assert.equal(json.toolbox, 'dev');
			assert.equal(json.description, 'Development box');
			assert.equal(json.servers_connected, 2);
			assert.ok(json.servers_failed === undefined || json.servers_failed.length === 0,
			    `no failures expected: ${JSON.stringify(json.servers_failed)}`);
			assert.ok(Array.isArray(L.openedTools(json)));
			assert.deepEqual(json.servers.map((s) => s.server), ['alpha', 'beta'], 'each server once, in config order');
			for (const t of L.openedTools(json)) {
				assert.equal(typeof t.inputSchema, 'object', JSON.stringify(t));
				assert.equal(t.inputSchema.type, undefined, 'MCP makes every input schema an object');
				assert.equal(typeof t.name, 'string');
			}
			const src = L.openedTools(json).map((t) => t.server);
			assert.equal(src.lastIndexOf('alpha') < src.indexOf('beta'), true, 'config order of servers');
			const alpha = L.openedTools(json).filter((t) => t.server === 'alpha').map((t) => t.name);
			const beta = L.openedTools(json).filter((t) => t.server === 'beta').map((t) => t.name);
			assert.deepEqual(alpha.slice(0, FIXED_TOOLS.length), FIXED_TOOLS, 'server order kept');
			assert.ok(alpha.includes('only_alpha'));
			assert.ok(!beta.includes('only_alpha'));
			assert.deepEqual(beta, [...FIXED_TOOLS, 'tool_0', 'tool_1']);
			// Lean: what a model needs to call it, no outputSchema.
			const add = json.servers[0].tools.find((t) => t.name === 'add');
			assert.deepEqual(Object.keys(add), ['name', 'description', 'inputSchema']);
			assert.equal(typeof add.description, 'string');
		});
		// "toolDetail": "full": the downstream Tool object comes through as
		// sent (outputSchema of add).
		await withWorkbench({ toolDetail: 'full', ...CONFIG }, {}, async (wb) => {
			const json = await openOk(wb, 'dev');
			const add = L.openedTools(json).find((t) => t.name === 'add' && t.server === 'alpha');
			assert.equal(add.outputSchema?.type, 'object', `add keeps its outputSchema: ${JSON.stringify(add)}`);
		});
	});

	test('alias "toolbox" works; unknown toolbox gets the exact text', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const r = await wb.callTool('open_toolbox', { toolbox: 'other' });
			assertOk(r);
			assert.equal(L.resultJson(r).toolbox, 'other');

			const u = await wb.openToolbox('nope');
			assert.equal(u.isError, true);
			assert.equal(text(u), "Toolbox 'nope' not found. Available toolboxes: dev, other");

			const m = await wb.callTool('open_toolbox', {});
			assert.equal(m.isError, true, 'missing toolbox_name is an error');
		});
	});

	test('toolFilters keep exact names and globs; filtered tools are unreachable', T, async () => {
		const config = {
			toolboxes: {
				dev: box({
					mock: { ...L.mock('--tools', '3'), toolFilters: ['ec*', 'add', 'st?uctured', 'tool_[01]'] },
					star: { ...L.mock(), toolFilters: '*' },
					starlist: { ...L.mock(), toolFilters: ['*'] },
				}),
			},
		};
		await withWorkbench(config, {}, async (wb) => {
			const json = await openOk(wb, 'dev');
			const names = (s) => L.openedTools(json).filter((t) => t.server === s).map((t) => t.name);
			assert.deepEqual(names('mock'), ['echo', 'add', 'structured', 'tool_0', 'tool_1']);
			assert.deepEqual(names('star'), FIXED_TOOLS);
			assert.deepEqual(names('starlist'), FIXED_TOOLS);
			const r = await wb.useTool('dev', 'mock', 'sleep', { ms: 1 });
			assert.equal(r.isError, true);
			assert.equal(text(r), "Error executing tool: Tool 'sleep' not found in server 'mock'");
			const ok = await wb.useTool('dev', 'mock', 'tool_1', { x: 1 });
			assertOk(ok);
		});
	});

	test('tools/list of a child is walked page by page', T, async () => {
		const config = { toolboxes: { dev: box({ paged: L.mock('--tools', '25', '--page-size', '4') }) } };
		await withWorkbench(config, {}, async (wb) => {
			const json = await openOk(wb, 'dev');
			const names = L.openedTools(json).map((t) => t.name);
			const gen = Array.from({ length: 25 }, (_, i) => `tool_${i}`);
			assert.deepEqual(names, [...FIXED_TOOLS, ...gen]);
		});
	});

	test('a repeated cursor does not loop forever', T, async () => {
		const config = { toolboxes: { dev: box({ broken: L.mock('--repeat-cursor'), good: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			const r = await wb.openToolbox('dev', { timeout: 10000 });
			const json = L.resultJson(r);
			const good = L.openedTools(json).filter((t) => t.server === 'good').map((t) => t.name);
			assert.deepEqual(good, FIXED_TOOLS);
			const broken = L.openedTools(json).filter((t) => t.server === 'broken').map((t) => t.name);
			assert.equal(new Set(broken).size, broken.length, 'no duplicated tools');
			await wb.client.ping();
		});
	});

	test('init timeout is reported as that server\'s failure', T, async () => {
		const config = {
			initTimeoutMs: 400,
			toolboxes: {
				slow: box({ hang: L.mock('--no-init') }),
				mixed: box({ good: L.mock(), hang: { ...L.mock('--no-init'), initTimeoutMs: 300 } }),
			},
		};
		await withWorkbench(config, {}, async (wb) => {
			let t0 = Date.now();
			const r = await wb.openToolbox('slow', { timeout: 10000 });
			assert.ok(Date.now() - t0 < 3000, 'answered soon after the timeout');
			assert.equal(r.isError, true, JSON.stringify(r));
			assert.match(text(r), /hang/);
			assert.match(text(r), /time/i);
			// The server that never answered is not left running.
			const [hung] = starts(wb, 'slow', 'hang');
			assert.ok(hung, `start of slow/hang seen:\n${wb.stderr}`);
			await L.waitFor(() => !L.pidAlive(hung) && L.groupMembers(hung).length === 0, 2500,
			    'the timed-out server to be stopped');

			t0 = Date.now();
			const m = await wb.openToolbox('mixed', { timeout: 10000 });
			assert.ok(Date.now() - t0 < 3000);
			assertOk(m);
			const json = L.resultJson(m);
			assert.equal(json.servers_connected, 1);
			assert.ok(L.openedTools(json).every((t) => t.server === 'good'));
			assert.equal(json.servers_failed?.length, 1, JSON.stringify(json));
			assert.equal(json.servers_failed[0].server, 'hang');
			assert.match(json.servers_failed[0].error, /time/i);
		});
	});

	test('all servers fail: isError naming each with reason and last stderr lines', T, async () => {
		const noexec = path.join(L.makeTempDir(), 'not-executable');
		fs.writeFileSync(noexec, '#!/bin/sh\necho hi\n', { mode: 0o644 });
		const config = {
			toolboxes: {
				broken: box({
					dies: L.mock('--stderr-lines', '3', '--exit-on-init', '7'),
					missing: { command: '/nonexistent/wb-e2e-no-such-binary' },
					noperm: { command: noexec },
				}),
			},
		};
		await withWorkbench(config, {}, async (wb) => {
			const t0 = Date.now();
			const r = await wb.openToolbox('broken', { timeout: 10000 });
			assert.ok(Date.now() - t0 < 5000, 'not a hang');
			assert.equal(r.isError, true, JSON.stringify(r));
			const t = text(r);
			assert.match(t, /dies/);
			assert.match(t, /\b7\b/, `exit status 7 expected:\n${t}`);
			assert.match(t, /mock-server: dying on init/, `last stderr lines quoted:\n${t}`);
			assert.match(t, /mock stderr line/, `last stderr lines quoted:\n${t}`);
			assert.match(t, /missing/);
			assert.match(t, /No such file or directory|ENOENT/i, t);
			assert.match(t, /noperm/);
			assert.match(t, /Permission denied|EACCES/i, t);
			await wb.client.ping();
		});
	});

	test('partial failure: success with servers_failed', T, async () => {
		const config = {
			toolboxes: { dev: box({ good: L.mock(), missing: { command: '/nonexistent/wb-e2e-no-such-binary' } }) },
		};
		await withWorkbench(config, {}, async (wb) => {
			const json = await openOk(wb, 'dev');
			assert.equal(json.servers_connected, 1);
			assert.deepEqual(L.openedTools(json).map((t) => t.name), FIXED_TOOLS);
			assert.equal(json.servers_failed.length, 1);
			assert.equal(json.servers_failed[0].server, 'missing');
			assert.match(json.servers_failed[0].error, /No such file or directory|ENOENT/i);
			assertOk(await wb.useTool('dev', 'good', 'echo', { message: 'still fine' }));
		});
	});

	test('re-open answers from the cache; concurrent opens share one start', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const [a, b] = await Promise.all([wb.openToolbox('dev'), wb.openToolbox('dev')]);
			assertOk(a);
			assertOk(b);
			assert.deepEqual(L.openedTools(L.resultJson(a)), L.openedTools(L.resultJson(b)));
			const c = await openOk(wb, 'dev');
			assert.deepEqual(L.openedTools(c), L.openedTools(L.resultJson(a)));
			await L.waitFor(() => starts(wb, 'dev', 'beta').length > 0 && starts(wb, 'dev', 'alpha').length > 0, 5000, 'the starts on stderr');
			await L.sleep(300);
			assert.equal(starts(wb, 'dev', 'alpha').length, 1, `one start of alpha:\n${wb.stderr}`);
			assert.equal(starts(wb, 'dev', 'beta').length, 1, `one start of beta:\n${wb.stderr}`);
		});
	});

	test('toolboxes sharing a server name get independent processes', T, async () => {
		const config = { toolboxes: { one: box({ mock: L.mock() }), two: box({ mock: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'one');
			await openOk(wb, 'two');
			await wb.waitStderr(/\[two\/mock\] [^\n]*started pid=/);
			const p1 = starts(wb, 'one', 'mock');
			const p2 = starts(wb, 'two', 'mock');
			assert.equal(p1.length, 1);
			assert.equal(p2.length, 1);
			assert.notEqual(p1[0], p2[0]);
		});
	});

	test('open_toolbox does not block the loop', T, async () => {
		const config = {
			toolboxes: { slow: box({ late: L.mock('--init-delay', '3000') }), fast: box({ mock: L.mock() }) },
		};
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'fast');
			let opened = 0;
			const p = wb.openToolbox('slow').then((r) => {
				opened = Date.now();
				return r;
			});
			await wb.waitStderr(/\[slow\/late\] [^\n]*started pid=/);
			await wb.client.ping();
			const e = await wb.useTool('fast', 'mock', 'echo', { message: 'meanwhile' });
			assert.equal(text(e), 'meanwhile');
			// A loop blocked by the open would have answered it first.
			assert.equal(opened, 0, 'ping and a call were served while the toolbox opened');
			assertOk(await p);
		});
	});

	test('child stderr is forwarded with a [toolbox/server] prefix and cut when long', T, async () => {
		const config = { toolboxes: { dev: box({ mock: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			await wb.waitStderr(/\[dev\/mock\] mock-server: started pid=\d+/);
			assertOk(await wb.useTool('dev', 'mock', 'stderr', { text: 'hello from the child' }));
			await wb.waitStderr(/^\[dev\/mock\] hello from the child$/m);
			assertOk(await wb.useTool('dev', 'mock', 'stderr', { text: 'L'.repeat(20000) + 'END' }));
			await wb.waitStderr(/\[dev\/mock\] LLLL/);
			await L.sleep(200);
			const longest = Math.max(...wb.stderr.split('\n').map((l) => l.length));
			assert.ok(longest <= '[dev/mock] '.length + 4096 + 16, `long stderr lines are cut at 4096 bytes (longest ${longest})`);
			assert.ok(!wb.stderr.includes('LLLEND'), 'the rest of a cut line is dropped');
			assertOk(await wb.useTool('dev', 'mock', 'echo', { message: 'after' }));
		});
	});
});

// ---------------------------------------------------------------------------

describe('use_tool', () => {
	const CONFIG = {
		toolboxes: {
			dev: box({ mock: L.mock() }),
			closed: box({ mock: L.mock() }),
		},
	};
	const INVALID = 'Invalid tool invocation parameters: ';

	test('invalid structure: Invalid tool invocation parameters naming each field', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			const good = { toolbox: 'dev', server: 'mock', name: 'echo' };
			const cases = [
				[{}, ['tool']],
				[{ tool: 'dev/mock/echo' }, ['tool']],
				[{ tool: ['dev', 'mock', 'echo'] }, ['tool']],
				[{ tool: { toolbox: 'dev', server: 'mock' } }, ['name']],
				[{ tool: { toolbox: 'dev' } }, ['server', 'name']],
				[{ tool: { ...good, extra: 1 } }, ['extra']],
				[{ tool: { ...good, toolbox: 1 } }, ['toolbox']],
				[{ tool: { ...good, name: null } }, ['name']],
				[{ tool: good, arguments: 'text' }, ['arguments']],
				[{ tool: good, arguments: [1, 2] }, ['arguments']],
				[{ tool: good, bogus: true }, ['bogus']],
			];
			for (const [args, fields] of cases) {
				const r = await wb.callTool('use_tool', args);
				assert.equal(r.isError, true, JSON.stringify(args));
				const t = text(r);
				assert.ok(t.startsWith(INVALID), `${JSON.stringify(args)} -> ${t}`);
				for (const f of fields)
					assert.ok(t.slice(INVALID.length).includes(f), `${JSON.stringify(args)}: should name ${f}: ${t}`);
			}
		});
	});

	test('empty toolbox / server / name', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			let r = await wb.useTool('', 'mock', 'echo', {});
			assert.equal(r.isError, true);
			assert.equal(text(r), 'toolbox: Toolbox name cannot be empty');
			r = await wb.useTool('dev', '', 'echo', {});
			assert.equal(r.isError, true);
			assert.equal(text(r), 'server: Server name cannot be empty');
			r = await wb.useTool('dev', 'mock', '', {});
			assert.equal(r.isError, true);
			assert.equal(text(r), 'name: Tool name cannot be empty');
		});
	});

	test('toolbox not open / not configured', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			let r = await wb.useTool('closed', 'mock', 'echo', { message: 'x' });
			assert.equal(r.isError, true);
			assert.equal(text(r), `Error executing tool: Toolbox 'closed' is not open; call open_toolbox first in this session (or set "openOnUse": true in the configuration)`);
			r = await wb.useTool('nope', 'mock', 'echo', { message: 'x' });
			assert.equal(r.isError, true);
			assert.ok(text(r).startsWith("Error executing tool: Toolbox 'nope'"), text(r));
			assert.match(text(r), /not configured/);
			await L.sleep(200);
			assert.equal(starts(wb, 'closed', 'mock').length, 0, 'a call does not open a toolbox');
		});
	});

	test('no such server; no such tool', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			let r = await wb.useTool('dev', 'ghost', 'echo', {});
			assert.equal(r.isError, true);
			assert.equal(text(r), "Error executing tool: Server 'ghost' not found in toolbox 'dev'");
			r = await wb.useTool('dev', 'mock', 'nosuch', {});
			assert.equal(r.isError, true);
			assert.equal(text(r), "Error executing tool: Tool 'nosuch' not found in server 'mock'");
			// Names match whole: not a prefix, not an extension.
			for (const srv of ['moc', 'mockx']) {
				r = await wb.useTool('dev', srv, 'echo', { message: 'x' });
				assert.equal(text(r), `Error executing tool: Server '${srv}' not found in toolbox 'dev'`);
			}
			for (const tool of ['ech', 'echox']) {
				r = await wb.useTool('dev', 'mock', tool, { message: 'x' });
				assert.equal(text(r), `Error executing tool: Tool '${tool}' not found in server 'mock'`);
			}
			for (const box of ['de', 'devx']) {
				r = await wb.useTool(box, 'mock', 'echo', { message: 'x' });
				assert.match(text(r), new RegExp(`^Error executing tool: Toolbox '${box}' is not configured`));
			}
			r = await wb.useTool('dev', 'mock', 'echo', { message: 'whole' });
			assert.equal(r.isError, undefined, text(r));
		});
	});

	test('JSON-RPC error from the server', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			const r = await wb.useTool('dev', 'mock', 'rpc_error', { message: 'boom-42' });
			assert.equal(r.isError, true);
			const t = text(r);
			assert.ok(t.startsWith(execErrorPrefix('rpc_error', 'mock', 'dev')), t);
			assert.match(t, /boom-42/);
		});
	});

	test('call timeout (callTimeoutMs)', T, async () => {
		const config = { toolboxes: { dev: box({ mock: { ...L.mock(), callTimeoutMs: 300 } }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			const t0 = Date.now();
			const r = await wb.useTool('dev', 'mock', 'sleep', { ms: 5000 }, { timeout: 8000 });
			assert.ok(Date.now() - t0 < 3000, 'timed out long before the sleep ended');
			assert.equal(r.isError, true);
			const t = text(r);
			assert.ok(t.startsWith(execErrorPrefix('sleep', 'mock', 'dev')), t);
			assert.match(t, /time/i);
			assertOk(await wb.useTool('dev', 'mock', 'echo', { message: 'next' }));
		});
	});

	test('results come back verbatim', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'dev');
			let r = await wb.useTool('dev', 'mock', 'echo', { message: 'héllo "world"\n\\' });
			assert.deepEqual(r.content, [{ type: 'text', text: 'héllo "world"\n\\' }]);
			assert.ok(!r.isError);

			r = await wb.useTool('dev', 'mock', 'add', { a: 2, b: 40 });
			assertOk(r);
			assert.deepEqual(r.structuredContent, { sum: 42 });
			assert.equal(text(r), '42');

			r = await wb.useTool('dev', 'mock', 'structured', {});
			assert.deepEqual(r.structuredContent, { answer: 42, items: ['a', 'b'] });

			r = await wb.useTool('dev', 'mock', 'image');
			assert.equal(r.content[0].type, 'image');
			assert.equal(r.content[0].mimeType, 'image/png');
			assert.ok(Buffer.from(r.content[0].data, 'base64').subarray(0, 8).equals(PNG_MAGIC));

			r = await wb.useTool('dev', 'mock', 'fail', { message: 'tool said no' });
			assert.equal(r.isError, true);
			assert.deepEqual(r.content, [{ type: 'text', text: 'tool said no' }]);

			r = await wb.useTool('dev', 'mock', 'big', { bytes: 1000000 });
			assertOk(r);
			assert.equal(text(r).length, 1000000);
			assert.ok(/^x+$/.test(text(r)));

			// arguments default to {}
			r = await wb.useTool('dev', 'mock', 'cwd');
			assertOk(r);
		});
	});

	test('tools/call arguments that are not an object (raw)', T, async () => {
		const raw = L.startRaw(CONFIG);
		try {
			await raw.initialize();
			let r = await raw.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'dev' } } }, 10000);
			assert.ok(r.json.result && !r.json.result.isError, r.line);
			r = await raw.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'use_tool', arguments: 'nope' } });
			const res = r.json.result;
			if (res) {
				assert.equal(res.isError, true, r.line);
				assert.ok(res.content[0].text.startsWith(INVALID), r.line);
			} else {
				assert.equal(r.json.error?.code, -32602, r.line);
			}
			r = await raw.request({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'no_such_meta_tool', arguments: {} } });
			assert.equal(r.json.error?.code, -32602, `unknown tool is -32602: ${r.line}`);
		} finally {
			await raw.close();
		}
	});

	test('concurrent calls answer out of order; ping is served meanwhile', T, async () => {
		const config = { toolboxes: { dev: box({ mock: L.mock(), other: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			const order = [];
			const t0 = Date.now();
			const slow = wb.useTool('dev', 'mock', 'sleep', { ms: 1200 }).then((r) => (order.push('slow'), r));
			const fast = wb.useTool('dev', 'mock', 'sleep', { ms: 100 }).then((r) => (order.push('fast'), r));
			const other = wb.useTool('dev', 'other', 'sleep', { ms: 300 }).then((r) => (order.push('other'), r));
			await wb.client.ping();
			const pingMs = Date.now() - t0;
			const [s, f, o] = await Promise.all([slow, fast, other]);
			assert.equal(text(s), 'slept 1200');
			assert.equal(text(f), 'slept 100');
			assert.equal(text(o), 'slept 300');
			assert.deepEqual(order, ['fast', 'other', 'slow']);
			assert.ok(pingMs < 500, `ping waited ${pingMs} ms`);
			assert.ok(Date.now() - t0 < 2500, 'calls ran concurrently');

			const many = await Promise.all(Array.from({ length: 50 }, (_, i) =>
				wb.useTool('dev', i % 2 ? 'mock' : 'other', 'echo', { message: `m${i}` })));
			many.forEach((r, i) => assert.equal(text(r), `m${i}`));
		});
	});

	test('calls in flight answered in any order each get their own answer, many or long-lived', T, async () => {
		// The workbench finds each answer's request by id in a table that
		// grows while calls go out and loses entries in any order.
		const config = { toolboxes: { dev: box({ mock: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			// Long calls stay while ids run on past them many times over
			// (the table is still small): their entries collide with the
			// new ones and must survive every removal around them.
			let done = 0;
			const long = Array.from({ length: 12 }, (_, k) =>
				wb.useTool('dev', 'mock', 'sleep', { ms: 20 * (k + 1) }).then((r) => (done++, r)));
			for (let round = 0; round < 40 || done < long.length; round++) {
				const echoes = await Promise.all(Array.from({ length: 5 }, (_, i) =>
					wb.useTool('dev', 'mock', 'echo', { message: `r${round}m${i}` })));
				echoes.forEach((r, i) => assert.equal(text(r), `r${round}m${i}`));
			}
			(await Promise.all(long)).forEach((r, k) => assert.equal(text(r), `slept ${20 * (k + 1)}`));
			// 301 at once, answered in a shuffled order.
			const ms = Array.from({ length: 301 }, (_, i) => (i * 37) % 301);
			const got = await Promise.all(ms.map((m) => wb.useTool('dev', 'mock', 'sleep', { ms: m })));
			got.forEach((r, i) => assert.equal(text(r), `slept ${ms[i]}`));
		});
	});

	test('a crash answers in-flight calls at once; the next call restarts the server', T, async () => {
		const config = { toolboxes: { dev: box({ mock: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			const t0 = Date.now();
			const pending = wb.useTool('dev', 'mock', 'sleep', { ms: 10000 }, { timeout: 15000 });
			await L.sleep(100);
			const crash = await wb.useTool('dev', 'mock', 'crash', { code: 3 });
			const inflight = await pending;
			assert.ok(Date.now() - t0 < 3000, 'answered at once, not after the sleep');
			for (const [r, name] of [[crash, 'crash'], [inflight, 'sleep']]) {
				assert.equal(r.isError, true, JSON.stringify(r));
				const t = text(r);
				assert.ok(t.startsWith(execErrorPrefix(name, 'mock', 'dev')), t);
				assert.match(t, /\b3\b/, `exit status in: ${t}`);
			}
			assert.match(text(inflight), /mock-server: crashing/, 'quotes the last stderr lines');

			const again = await wb.useTool('dev', 'mock', 'echo', { message: 'back' });
			assertOk(again);
			assert.equal(text(again), 'back');
			await L.waitFor(() => starts(wb, 'dev', 'mock').length >= 2, 5000, 'the restart on stderr');
			await L.sleep(200);
			assert.equal(starts(wb, 'dev', 'mock').length, 2, 'restarted once');

			// open_toolbox after a crash restarts too.
			await wb.useTool('dev', 'mock', 'crash', {});
			await L.sleep(200);
			const json = await openOk(wb, 'dev');
			assert.equal(json.servers_connected, 1);
			await L.waitFor(() => starts(wb, 'dev', 'mock').length >= 3, 5000, 'the restart on stderr');
			await L.sleep(200);
			assert.equal(starts(wb, 'dev', 'mock').length, 3, 'reopen restarted the crashed server');
			assertOk(await wb.useTool('dev', 'mock', 'echo', { message: 'x' }));
		});
	});

	test('a crash loop is bounded', T, async () => {
		const config = { toolboxes: { dev: box({ mock: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			let refused = null;
			for (let i = 0; i < 10 && refused === null; i++) {
				const r = await wb.useTool('dev', 'mock', 'echo', { message: 'x' });
				if (r.isError)
					refused = text(r);
				else
					await wb.useTool('dev', 'mock', 'crash', {});
			}
			assert.ok(refused, 'restarts must stop after a bound');
			assert.ok(refused.startsWith(execErrorPrefix('echo', 'mock', 'dev')), refused);
			await L.sleep(200);
			const n = starts(wb, 'dev', 'mock').length;
			assert.ok(n >= 2 && n <= 6, `${n} starts`);
			await wb.client.ping();
		});
	});

	test('ids of routed calls are echoed byte-exact (raw)', T, async () => {
		const config = { toolboxes: { dev: box({ mock: L.mock() }) } };
		const raw = L.startRaw(config);
		try {
			await raw.initialize();
			let r = await raw.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'dev' } } }, 10000);
			assert.ok(r.json.result && !r.json.result.isError, r.line);
			const call = (id, ms) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":"mock","name":"sleep"},"arguments":{"ms":${ms}}}}}`;
			// 0 and "0" are different ids; answers come back in completion order.
			raw.sendLine(call('"0"', 400));
			raw.sendLine(call('0', 200));
			raw.sendLine(call('"a\\"b\\u00e9"', 50));
			raw.sendLine(call('12345678901234567890', 600));
			const idRe = (id) => new RegExp(`"id"\\s*:\\s*${L.escapeRe(id)}\\s*[,}]`);
			const expect = [['"a\\"b\\u00e9"', 'slept 50'], ['0', 'slept 200'], ['"0"', 'slept 400'], ['12345678901234567890', 'slept 600']];
			for (const [id, t] of expect) {
				const line = await raw.readLine(5000);
				assert.match(line, idRe(id), `expected id ${id} next: ${line}`);
				assert.equal(JSON.parse(line).result?.content?.[0]?.text, t, line);
			}
		} finally {
			await raw.close();
		}
	});

	test('non-JSON lines from a child are skipped', T, async () => {
		const config = { toolboxes: { dev: box({ noisy: L.mock('--garbage') }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'dev');
			const r = await wb.useTool('dev', 'noisy', 'echo', { message: 'through the noise' });
			assert.equal(text(r), 'through the noise');
		});
	});
});

// ---------------------------------------------------------------------------

describe('child process setup', () => {
	test('environment whitelist, server env, inheritEnv', T, async () => {
		const secret = 'hunter2-e2e-secret';
		const env = {
			PATH: process.env.PATH,
			HOME: process.env.HOME ?? '/root',
			TZ: 'UTC',
			LANG: 'C.UTF-8',
			WB_E2E_SECRET: secret,
		};
		const config = {
			toolboxes: {
				dev: box({
					plain: { ...L.mock(), env: { CONFIGURED: 'yes', FROM_VAR: '${WB_E2E_SECRET}', TZ: 'Europe/Paris' } },
					inherit: { ...L.mock(), inheritEnv: true },
				}),
			},
		};
		await withWorkbench(config, { env }, async (wb) => {
			await openOk(wb, 'dev');
			const get = async (server, name) => text(await wb.useTool('dev', server, 'env', { name }));
			assert.equal(await get('plain', 'WB_E2E_SECRET'), '(unset)', 'secrets do not leak');
			assert.equal(await get('plain', 'PATH'), env.PATH);
			assert.equal(await get('plain', 'HOME'), env.HOME);
			assert.equal(await get('plain', 'LANG'), 'C.UTF-8');
			assert.equal(await get('plain', 'CONFIGURED'), 'yes');
			assert.equal(await get('plain', 'FROM_VAR'), secret, '${VAR} expanded from the environment');
			assert.equal(await get('plain', 'TZ'), 'Europe/Paris', 'server env overrides');
			assert.equal(await get('inherit', 'WB_E2E_SECRET'), secret, 'inheritEnv passes everything');
			assert.equal(await get('inherit', 'TZ'), 'UTC');
			assert.ok(!wb.stderr.includes(secret), 'values never appear in the log');
		});
	});

	test('cwd is honoured', T, async () => {
		const dir = fs.realpathSync(L.makeTempDir('wb-cwd-'));
		const config = {
			toolboxes: { dev: box({ here: { ...L.mock(), cwd: dir }, there: { ...L.mock(), cwd: '${WB_E2E_DIR}' } }) },
		};
		await withWorkbench(config, { env: { WB_E2E_DIR: dir } }, async (wb) => {
			await openOk(wb, 'dev');
			assert.equal(text(await wb.useTool('dev', 'here', 'cwd')), dir);
			assert.equal(text(await wb.useTool('dev', 'there', 'cwd')), dir);
		});
	});

	test('a missing cwd is that server\'s failure, not a hang', T, async () => {
		const config = {
			toolboxes: {
				dev: box({
					nodir: { ...L.mock(), cwd: '/nonexistent/wb-e2e-dir' },
					good: L.mock(),
				}),
			},
		};
		await withWorkbench(config, {}, async (wb) => {
			const json = await openOk(wb, 'dev');
			assert.equal(json.servers_connected, 1);
			assert.equal(json.servers_failed?.[0]?.server, 'nodir');
			assert.match(json.servers_failed[0].error, /No such file or directory|ENOENT|wb-e2e-dir/);
		});
	});

	test('children get the client\'s protocol version and capabilities', T, async () => {
		const config = { toolboxes: { dev: box({ mock: L.mock() }) } };
		const capabilities = { roots: { listChanged: true }, sampling: {}, elicitation: {} };
		await withWorkbench(config, { capabilities }, async (wb) => {
			await openOk(wb, 'dev');
			const p = JSON.parse(text(await wb.useTool('dev', 'mock', 'init_params')));
			assert.equal(p.protocolVersion, '2025-11-25');
			assert.ok(p.capabilities?.roots, JSON.stringify(p));
			assert.ok(p.capabilities?.sampling, JSON.stringify(p));
			assert.ok(p.capabilities?.elicitation, JSON.stringify(p));
			assert.equal(typeof p.clientInfo?.name, 'string');
		});

		// A client on an older revision, without capabilities.
		const raw = L.startRaw(config);
		try {
			await raw.initialize('2025-03-26', {});
			let r = await raw.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'dev' } } }, 10000);
			assert.ok(r.json.result && !r.json.result.isError, r.line);
			r = await raw.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'use_tool', arguments: { tool: { toolbox: 'dev', server: 'mock', name: 'init_params' } } } });
			const p = JSON.parse(r.json.result.content[0].text);
			assert.equal(p.protocolVersion, '2025-03-26');
			assert.equal(p.capabilities?.sampling, undefined);
			assert.equal(p.capabilities?.roots, undefined);
			assert.equal(p.capabilities?.elicitation, undefined);
		} finally {
			await raw.close();
		}
	});
});

// ---------------------------------------------------------------------------

describe('shutdown', () => {
	const CONFIG = {
		toolboxes: {
			dev: box({
				stubborn: L.mock('--ignore-sigterm', '--grandchild'),
				plain: L.mock('--grandchild'),
			}),
		},
	};

	async function openAndCollect(wb) {
		await openOk(wb, 'dev');
		await wb.waitStderr(/\[dev\/stubborn\] [^\n]*started pid=/);
		await wb.waitStderr(/\[dev\/plain\] [^\n]*started pid=/);
		const pgids = [...starts(wb, 'dev', 'stubborn'), ...starts(wb, 'dev', 'plain')];
		assert.equal(pgids.length, 2);
		// Each child leads its own process group, which also holds its grandchild.
		await L.waitFor(() => pgids.every((g) => L.groupMembers(g).length >= 2), 3000, 'grandchildren');
		return pgids;
	}

	// Every server and what it started gone, soon (they are being reaped).
	async function waitGone(pgids) {
		await L.waitFor(() => pgids.every((g) => !L.pidAlive(g) && L.groupMembers(g).length === 0), 3000,
		    'every server process gone').catch(() => {});
		assertGone(pgids);
	}

	function assertGone(pgids) {
		for (const g of pgids) {
			assert.equal(L.pidAlive(g), false, `server ${g} still alive`);
			assert.deepEqual(L.groupMembers(g), [], `process group ${g} still has members`);
		}
	}

	test('closing the client ends the workbench within 2 s, no process left', T, async () => {
		const wb = await L.startWorkbench(CONFIG);
		try {
			const pgids = await openAndCollect(wb);
			const t0 = Date.now();
			wb.proc.stdin.end();
			const r = await L.within(wb.exited, 4000 * L.SLOW);
			assert.ok(r, 'workbench did not exit on stdin EOF');
			assert.ok(r.at - t0 <= 2200 * L.SLOW, `exit took ${r.at - t0} ms`);
			assert.equal(r.code, 0);
			await waitGone(pgids);
		} finally {
			await wb.close();
		}
	});

	for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
		test(`${sig} ends the workbench within 2 s, no process left`, T, async () => {
			const wb = await L.startWorkbench(CONFIG);
			try {
				const pgids = await openAndCollect(wb);
				const t0 = Date.now();
				process.kill(wb.pid, sig);
				const r = await L.within(wb.exited, 4000 * L.SLOW);
				assert.ok(r, `workbench did not exit on ${sig}`);
				assert.ok(r.at - t0 <= 2200 * L.SLOW, `exit took ${r.at - t0} ms`);
				await waitGone(pgids);
			} finally {
				await wb.close();
			}
		});
	}

	test('nothing is answered after shutdown starts', T, async () => {
		const raw = L.startRaw(CONFIG);
		try {
			await raw.initialize();
			const r = await raw.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'dev' } } }, 10000);
			assert.ok(r.json.result, r.line);
			raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'use_tool', arguments: { tool: { toolbox: 'dev', server: 'plain', name: 'sleep' }, arguments: { ms: 3000 } } } });
			await L.sleep(100);
			process.kill(raw.pid, 'SIGTERM');
			const e = await L.within(raw.exited, 4000);
			assert.ok(e, 'exited');
			// The in-flight call may not be answered with a result after SIGTERM.
			const results = raw.pending.map((l) => JSON.parse(l)).filter((m) => m.id === 2 && m.result && !m.result.isError);
			assert.deepEqual(results, []);
		} finally {
			await raw.close();
		}
	});
});

// ---------------------------------------------------------------------------

describe('interop with the reference servers', () => {
	test('server-everything: echo, get-sum, structured content, image, errors', { timeout: 30000 }, async () => {
		// toolDetail full: the server's tools as it gave them (lean.test.mjs
		// has what the default leaves out).
		const config = { toolDetail: 'full', toolboxes: { ev: box({ everything: L.everythingServer() }) } };
		await withWorkbench(config, {}, async (wb) => {
			const json = await openOk(wb, 'ev');
			const names = L.openedTools(json).map((t) => t.name);
			for (const n of ['echo', 'get-sum', 'get-structured-content', 'get-tiny-image'])
				assert.ok(names.includes(n), `${n} in ${names}`);
			assert.equal(json.toolbox, 'ev');
			assert.ok(L.openedTools(json).every((t) => t.server === 'everything'));
			const sc = L.openedTools(json).find((t) => t.name === 'get-structured-content');
			assert.equal(sc.outputSchema?.type, 'object', 'outputSchema passed through');

			let r = await wb.useTool('ev', 'everything', 'echo', { message: 'hi there' });
			assertOk(r);
			assert.equal(text(r), 'Echo: hi there');

			r = await wb.useTool('ev', 'everything', 'get-sum', { a: 2, b: 3 });
			assertOk(r);
			assert.match(text(r), /\b5\b/);

			r = await wb.useTool('ev', 'everything', 'get-structured-content', { location: 'Chicago' });
			assertOk(r);
			assert.equal(typeof r.structuredContent?.temperature, 'number', JSON.stringify(r));
			assert.deepEqual(JSON.parse(text(r)), r.structuredContent);

			r = await wb.useTool('ev', 'everything', 'get-tiny-image', {});
			assertOk(r);
			const img = r.content.find((c) => c.type === 'image');
			assert.ok(img, JSON.stringify(r).slice(0, 300));
			assert.equal(img.mimeType, 'image/png');
			assert.ok(Buffer.from(img.data, 'base64').subarray(0, 8).equals(PNG_MAGIC));

			r = await wb.useTool('ev', 'everything', 'echo', {});
			assert.equal(r.isError, true, 'bad arguments are an error result');
			r = await wb.useTool('ev', 'everything', 'no-such-tool', {});
			assert.equal(text(r), "Error executing tool: Tool 'no-such-tool' not found in server 'everything'");
		});
	});

	test('server-memory: state is kept between calls', { timeout: 30000 }, async () => {
		const file = path.join(L.makeTempDir('wb-mem-'), 'memory.jsonl');
		const config = { toolboxes: { mem: box({ memory: L.memoryServer(file) }) } };
		await withWorkbench(config, {}, async (wb) => {
			const json = await openOk(wb, 'mem');
			const names = L.openedTools(json).map((t) => t.name);
			assert.ok(names.includes('create_entities') && names.includes('read_graph'), names.join());
			let r = await wb.useTool('mem', 'memory', 'create_entities', {
				entities: [{ name: 'Alice', entityType: 'person', observations: ['writes C'] }],
			});
			assertOk(r);
			r = await wb.useTool('mem', 'memory', 'add_observations', {
				observations: [{ entityName: 'Alice', contents: ['likes poll()'] }],
			});
			assertOk(r);
			r = await wb.useTool('mem', 'memory', 'read_graph', {});
			assertOk(r);
			const graph = r.structuredContent ?? JSON.parse(text(r));
			const alice = graph.entities.find((e) => e.name === 'Alice');
			assert.ok(alice, JSON.stringify(graph));
			assert.deepEqual(alice.observations, ['writes C', 'likes poll()']);
		});
	});

	test('server-filesystem: list_directory and read_text_file', { timeout: 30000 }, async () => {
		const dir = fs.realpathSync(L.makeTempDir('wb-fs-'));
		fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello world\n');
		fs.mkdirSync(path.join(dir, 'sub'));
		const config = { toolboxes: { files: box({ fs: L.filesystemServer(dir) }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'files');
			let r = await wb.useTool('files', 'fs', 'list_directory', { path: dir });
			assertOk(r);
			assert.match(text(r), /\[FILE\] hello\.txt/);
			assert.match(text(r), /\[DIR\] sub/);
			r = await wb.useTool('files', 'fs', 'read_text_file', { path: path.join(dir, 'hello.txt') });
			assertOk(r);
			assert.equal(text(r), 'hello world\n');
			r = await wb.useTool('files', 'fs', 'read_text_file', { path: '/etc/passwd' });
			assert.equal(r.isError, true, 'outside the allowed directory');
		});
	});
});
