// Issue 2: command line, configuration, JSON-RPC core, initialize,
// instructions and tools/list, checked against the built binary.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as L from './lib.mjs';
import { T as scaled } from './hostile-lib.mjs';

const { withWorkbench, withRaw } = L;

after(L.cleanup);

const T = { timeout: 20000 };

// Servers are only started when a toolbox is opened, so nothing here runs
// the mock; its path only has to look plausible.
const CONFIG = {
	toolboxes: {
		zeta: {
			description: 'Zeta tools for testing',
			mcpServers: { one: L.mock(), two: L.mock() },
		},
		alpha: {
			description: 'Alpha: a single server',
			mcpServers: { solo: L.mock() },
		},
	},
};

const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const LATEST = '2025-11-25';

function cliVersion() {
	const r = L.runCli(['--version']);
	const m = r.stdout.trim().match(/^mcp-workbench (\S+)$/);
	assert.ok(m, `--version output: ${JSON.stringify(r.stdout)}`);
	return m[1];
}

// ---------------------------------------------------------------------------

describe('initialize through the SDK client', () => {
	test('serverInfo, version and capabilities', T, async () => {
		const version = cliVersion();
		const mk = L.makefileVersion();
		if (mk !== null)
			assert.equal(version, mk, '--version must report the Makefile VERSION');
		await withWorkbench(CONFIG, {}, async (wb) => {
			const info = wb.client.getServerVersion();
			assert.equal(info.name, 'mcp-workbench');
			assert.equal(info.version, version, 'serverInfo.version must match --version');
			const caps = wb.client.getServerCapabilities();
			assert.equal(caps?.tools?.listChanged, true, `capabilities: ${JSON.stringify(caps)}`);
		});
	});

	test('instructions list every toolbox in config order, each once with its description, then how to reach a tool', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const ins = wb.client.getInstructions();
			assert.equal(typeof ins, 'string', 'instructions must be present');
			const lines = ins.split('\n');
			const iz = lines.indexOf('- zeta: Zeta tools for testing');
			const ia = lines.indexOf('- alpha: Alpha: a single server');
			assert.ok(iz >= 0, `no line for zeta in:\n${ins}`);
			assert.ok(ia >= 0, `no line for alpha in:\n${ins}`);
			assert.ok(iz < ia, 'toolboxes must be listed in config order (zeta before alpha)');
			assert.equal(ins.split('zeta').length - 1, 1, 'each toolbox once');
			const footer = lines.slice(ia + 1).join('\n');
			const is = footer.indexOf('search_tools');
			const io = footer.indexOf('open_toolbox');
			const iu = footer.indexOf('use_tool');
			assert.ok(is >= 0 && io >= 0 && iu >= 0, `footer must name search_tools, open_toolbox and use_tool:\n${footer}`);
			assert.ok(is < io && io < iu, 'search first, then open, then use');
		});
	});

	test('no toolboxes: instructions say how to add them', T, async () => {
		await withWorkbench({ toolboxes: {} }, {}, async (wb) => {
			const ins = wb.client.getInstructions();
			assert.equal(typeof ins, 'string', 'instructions must be present');
			assert.match(ins, /toolboxes/, `should name the "toolboxes" key:\n${ins}`);
			assert.match(ins, /mcpServers|workbench-config\.json/, `should say how to add one:\n${ins}`);
			assert.doesNotMatch(ins, /\(\d+ servers?\)/);
			const { tools } = await wb.client.listTools();
			assert.deepEqual(tools.map((t) => t.name).sort(), ['open_toolbox', 'search_tools', 'use_tool']);
		});
	});

	test('tools/list: open_toolbox and use_tool with complete schemas', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const { tools, nextCursor } = await wb.client.listTools();
			assert.equal(nextCursor, undefined, 'everything in one page');
			assert.deepEqual(tools.map((t) => t.name).sort(), ['open_toolbox', 'search_tools', 'use_tool']);
			const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
			for (const t of tools) {
				assert.equal(typeof t.description, 'string');
				assert.ok(t.description.length >= 40, `${t.name}: description too thin: ${t.description}`);
				assert.equal(t.inputSchema.type, 'object');
				assert.equal(typeof t.annotations, 'object', `${t.name}: annotations expected`);
			}
			const ot = byName.open_toolbox.inputSchema;
			assert.equal(ot.properties?.toolbox_name?.type, 'string', JSON.stringify(ot));

			const ut = byName.use_tool.inputSchema;
			assert.ok(ut.required?.includes('tool'), `use_tool must require "tool": ${JSON.stringify(ut)}`);
			assert.equal(ut.additionalProperties, false, 'use_tool input is strict');
			const tool = ut.properties?.tool;
			assert.equal(tool?.type, 'object');
			for (const k of ['toolbox', 'server', 'name'])
				assert.equal(tool.properties?.[k]?.type, 'string', `tool.${k}`);
			assert.deepEqual([...tool.required].sort(), ['name', 'server', 'toolbox']);
			assert.equal(tool.additionalProperties, false, 'tool object is strict');
			assert.equal(ut.properties?.arguments?.type, 'object');
			assert.ok(!ut.required.includes('arguments'), 'arguments is optional');
			assert.match(byName.use_tool.description, /open_toolbox/, 'use_tool description should point to open_toolbox');
		});
	});
});

// ---------------------------------------------------------------------------

describe('protocol version negotiation (raw lines)', () => {
	for (const v of [...VERSIONS, '2099-01-01', '2024-10-07']) {
		const expect = VERSIONS.includes(v) ? v : LATEST;
		test(`requested ${v} -> ${expect}`, T, async () => {
			await withRaw(CONFIG, {}, async (raw) => {
				const { line, json } = await raw.request({
					jsonrpc: '2.0', id: 1, method: 'initialize',
					params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
				});
				assert.equal(json.jsonrpc, '2.0');
				assert.equal(json.id, 1, line);
				assert.equal(json.result?.protocolVersion, expect, line);
				assert.equal(json.result.serverInfo?.name, 'mcp-workbench');
				assert.equal(typeof json.result.serverInfo?.version, 'string');
				assert.equal(json.result.capabilities?.tools?.listChanged, true);
			});
		});
	}
});

// ---------------------------------------------------------------------------

describe('JSON-RPC framing and errors (raw lines)', () => {
	function assertError(json, code, id, line) {
		assert.equal(json.jsonrpc, '2.0', line);
		assert.ok(json.error, `expected an error: ${line}`);
		assert.equal(json.error.code, code, line);
		assert.equal(typeof json.error.message, 'string', line);
		assert.equal(json.result, undefined, line);
		if (id !== undefined)
			assert.deepEqual(json.id, id, line);
	}

	test('garbage gets -32700 with id null', T, async () => {
		await withRaw(CONFIG, {}, async (raw) => {
			await raw.initialize();
			const garbage = [
				'this is not json',
				'{"jsonrpc":"2.0","id":1,',
				'{"a" "b"}',
				'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing',
				'{"jsonrpc":"2.0","id":1,"method":tru}',
				'{"jsonrpc":"2.0","id":1,"method":"pi\u0001ng"}',
			];
			for (const g of garbage) {
				const { line, json } = await raw.request(g);
				assertError(json, -32700, null, `${JSON.stringify(g)} -> ${line}`);
			}
			const { json } = await raw.request({ jsonrpc: '2.0', id: 2, method: 'ping' });
			assert.deepEqual(json, { jsonrpc: '2.0', id: 2, result: {} });
		});
	});

	test('invalid requests get -32600', T, async () => {
		await withRaw(CONFIG, {}, async (raw) => {
			await raw.initialize();
			const cases = [
				['{"jsonrpc":"2.0","id":null,"method":"ping"}', [null]],
				['{"jsonrpc":"1.0","id":7,"method":"ping"}', [7, null]],
				['{"id":9,"method":"ping"}', [9, null]],
				['{"jsonrpc":"2.0","id":10,"params":{}}', [10, null]],
				['{"jsonrpc":"2.0","id":11,"method":42}', [11, null]],
				['{"jsonrpc":"2.0","id":true,"method":"ping"}', [null]],
				['42', [null]],
			];
			for (const [text, ids] of cases) {
				const { line, json } = await raw.request(text);
				assertError(json, -32600, undefined, `${text} -> ${line}`);
				assert.ok(ids.some((i) => i === json.id), `${text}: id should be one of ${JSON.stringify(ids)}: ${line}`);
			}
			const { json } = await raw.request({ jsonrpc: '2.0', id: 3, method: 'ping' });
			assert.deepEqual(json, { jsonrpc: '2.0', id: 3, result: {} });
		});
	});

	test('unknown method and server/discover get -32601; ping gets {}', T, async () => {
		await withRaw(CONFIG, {}, async (raw) => {
			await raw.initialize();
			let r = await raw.request({ jsonrpc: '2.0', id: 5, method: 'no/such/method', params: {} });
			assertError(r.json, -32601, 5, r.line);
			r = await raw.request({ jsonrpc: '2.0', id: 6, method: 'server/discover', params: {} });
			assertError(r.json, -32601, 6, r.line);
			r = await raw.request({ jsonrpc: '2.0', id: 7, method: 'ping' });
			assert.deepEqual(r.json, { jsonrpc: '2.0', id: 7, result: {} });
			r = await raw.request({ jsonrpc: '2.0', id: 8, method: 'ping', params: {} });
			assert.deepEqual(r.json, { jsonrpc: '2.0', id: 8, result: {} });
		});
	});

	test('server/discover before initialize gets -32601 at once', T, async () => {
		await withRaw(CONFIG, {}, async (raw) => {
			const t0 = Date.now();
			const r = await raw.request({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: {} }, scaled(2000));
			assertError(r.json, -32601, 'd', r.line);
			// At once: the workbench waits for nothing (a slow build or
			// machine stretches that).
			assert.ok(Date.now() - t0 < scaled(1000), `answered after ${Date.now() - t0} ms`);
			await raw.initialize();
		});
	});

	test('notifications are never answered', T, async () => {
		await withRaw(CONFIG, {}, async (raw) => {
			await raw.initialize();
			raw.sendLine('{"jsonrpc":"2.0","method":"notifications/initialized"}');
			raw.sendLine('{"jsonrpc":"2.0","method":"notifications/no-such-thing","params":{}}');
			raw.sendLine('{"jsonrpc":"2.0","method":"no/such/method"}');
			raw.sendLine('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}');
			raw.sendLine('{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}');
			raw.sendLine('{"jsonrpc":"2.0","method":"ping"}');
			await raw.expectSilence(400);
			const { json } = await raw.request({ jsonrpc: '2.0', id: 1, method: 'ping' });
			assert.deepEqual(json, { jsonrpc: '2.0', id: 1, result: {} });
		});
	});

	test('ids are echoed byte-exact', T, async () => {
		const ids = [
			'"a\\"b\\u00e9"',
			'"x\\\\y\\/z\\u00E9\\n"',
			'"é"',
			'""',
			'0',
			'12345678901234567890',
			'-1',
		];
		await withRaw(CONFIG, {}, async (raw) => {
			await raw.initialize();
			for (const id of ids) {
				const re = new RegExp(`"id"\\s*:\\s*${L.escapeRe(id)}\\s*[,}]`);
				let r = await raw.request(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
				assert.match(r.line, re, `ping id ${id}`);
				assert.deepEqual(r.json.result, {}, r.line);
				r = await raw.request(`{"jsonrpc":"2.0","id":${id},"method":"no/such"}`);
				assert.match(r.line, re, `error id ${id}`);
				assert.equal(r.json.error?.code, -32601, r.line);
			}
		});
	});

	test('\\r\\n line endings, empty lines and split writes are tolerated', T, async () => {
		await withRaw(CONFIG, {}, async (raw) => {
			await raw.initialize();
			raw.write('\r\n\n\r\n{"jsonrpc":"2.0","id":21,"method":"ping"}\r\n\n\n');
			let line = await raw.readLine();
			assert.deepEqual(JSON.parse(line), { jsonrpc: '2.0', id: 21, result: {} });
			assert.ok(!line.includes('\r'), 'answers end in \\n only');
			await raw.expectSilence(300);

			raw.write('{"jsonrpc":"2.0",');
			await L.sleep(100);
			raw.write('"id":22,"method":"ping"}\n{"jsonrpc":"2.0","id":23,"method":"ping"}\n');
			assert.equal(JSON.parse(await raw.readLine()).id, 22);
			assert.equal(JSON.parse(await raw.readLine()).id, 23);
		});
	});

	test('an oversized line is discarded with an error and the session goes on', T, async () => {
		const config = { ...CONFIG, maxMessageBytes: 4096 };
		await withRaw(config, {}, async (raw) => {
			await raw.initialize();
			// Just under the cap: served normally.
			let r = await raw.request({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'y'.repeat(3000) } });
			assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, result: {} });

			const big = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'x'.repeat(20000) } });
			raw.write(big + '\n' + '{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
			const l1 = await raw.readLine();
			const e = JSON.parse(l1);
			assert.ok(e.error, `oversized line must get an error: ${l1}`);
			assert.ok([-32700, -32600].includes(e.error.code), l1);
			assert.ok(e.id === null || e.id === 2, l1);
			const l2 = await raw.readLine();
			assert.deepEqual(JSON.parse(l2), { jsonrpc: '2.0', id: 3, result: {} });
			await raw.expectSilence(300);

			// A long line that arrives in pieces, over a much larger size.
			for (let i = 0; i < 10; i++)
				raw.write('z'.repeat(10000));
			raw.write('\n');
			const l3 = JSON.parse(await raw.readLine());
			assert.ok(l3.error, 'second oversized line must get an error');
			r = await raw.request({ jsonrpc: '2.0', id: 4, method: 'ping' });
			assert.deepEqual(r.json, { jsonrpc: '2.0', id: 4, result: {} });
		});
	});

	test('deeply nested input does not crash the process', T, async () => {
		await withRaw(CONFIG, {}, async (raw) => {
			await raw.initialize();
			raw.write('['.repeat(200000) + '\n');
			const l1 = JSON.parse(await raw.readLine());
			assert.ok(l1.error, 'nested garbage gets an error');
			const nested = `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
			const r1 = await raw.request(nested);
			assert.equal(r1.json.id, 5, r1.line);
			const r2 = await raw.request({ jsonrpc: '2.0', id: 6, method: 'ping' });
			assert.deepEqual(r2.json, { jsonrpc: '2.0', id: 6, result: {} });
			assert.equal(raw.proc.exitCode, null);
		});
	});

	test('stdin EOF ends the process with status 0', T, async () => {
		const raw = L.startRaw(CONFIG);
		await raw.initialize();
		const r = await raw.close(3000);
		assert.ok(r, 'workbench must exit on stdin EOF');
		assert.equal(r.code, 0);
	});
});

// ---------------------------------------------------------------------------

describe('command line', () => {
	test('--version and -V', T, () => {
		for (const flag of ['--version', '-V']) {
			const r = L.runCli([flag]);
			assert.equal(r.status, 0, flag);
			assert.match(r.stdout, /^mcp-workbench \d+\.\d+\.\d+\S*\n$/, `${flag}: ${r.stdout}`);
		}
	});

	test('--help prints the synopsis and exits 0', T, () => {
		for (const flag of ['--help', '-h']) {
			const r = L.runCli([flag]);
			assert.equal(r.status, 0, flag);
			assert.match(r.stdout, /mcp-workbench/);
			assert.match(r.stdout, /-c\b/);
			assert.match(r.stdout, /--check/);
			assert.match(r.stdout, /--version/);
		}
	});

	test('--help, README and the manual agree: the synopsis lines, every exit status, the version of every page', T, () => {
		const help = L.runCli(['--help']).stdout;
		const readme = fs.readFileSync(path.join(L.REPO_DIR, 'README.md'), 'utf8');
		const usage = readme.slice(readme.indexOf('## Usage'));
		const block = usage.slice(usage.indexOf('```') + 3, usage.indexOf('```', usage.indexOf('```') + 3));
		// Each synopsis of --help names options the README's usage shows.
		for (const opt of help.slice(0, help.indexOf('\n\n')).match(/--[a-z]+/g))
			assert.ok(block.includes(opt), `README usage lacks ${opt}:\n${block}`);
		const page = fs.readFileSync(path.join(L.REPO_DIR, 'man', 'mcp-workbench.1'), 'utf8');
		const exits = page.slice(page.indexOf('.Sh EXIT STATUS'), page.indexOf('.Sh SIGNALS'));
		const statuses = [...exits.matchAll(/^\.It (\d+)$/gm)].map((m) => m[1]);
		assert.ok(statuses.includes('4'), `manual's exit statuses: ${statuses}`);
		const said = help.slice(help.indexOf('Exit status:'));
		for (const st of statuses)
			assert.match(said, new RegExp(`\\b${st} [a-z]`), `--help's exit statuses lack ${st}:\n${said}`);
		const mk = L.makefileVersion();
		for (const file of ['mcp-workbench.1', 'mcp-workbench-config.5', 'mcp-workbench.7']) {
			const text = fs.readFileSync(path.join(L.REPO_DIR, 'man', file), 'utf8');
			assert.ok(!text.includes('@VERSION@'), `${file} in the source tree names a placeholder`);
			assert.match(text, new RegExp(`^version ${L.escapeRe(mk ?? cliVersion())}\\.$`, 'm'), `${file} names the version`);
		}
	});

	test('usage errors exit 2 with the synopsis', T, () => {
		for (const args of [['--no-such-option'], ['-c'], ['-x']]) {
			const r = L.runCli(args);
			assert.equal(r.status, 2, `${args.join(' ')}: status ${r.status}\n${r.all}`);
			assert.match(r.stderr, /usage/i, `${args.join(' ')}: ${r.stderr}`);
			assert.match(r.stderr, /mcp-workbench/);
			assert.match(r.stderr, /--check/);
			assert.equal(r.stdout, '', 'nothing on stdout (it carries protocol only)');
		}
	});

	test('--check success lists toolboxes and servers, exit 0', T, () => {
		const file = L.writeConfig(CONFIG);
		const r = L.runCli(['-c', file, '--check']);
		assert.equal(r.status, 0, r.all);
		for (const name of ['zeta', 'one', 'two', 'alpha', 'solo'])
			assert.match(r.all, new RegExp(`\\b${name}\\b`), `--check should list ${name}:\n${r.all}`);
		assert.ok(r.all.indexOf('zeta') < r.all.indexOf('alpha'), 'config order');
	});

	test('--check: JSON syntax error gives file, line and column', T, () => {
		const text = '{\n  "toolboxes": {\n    "dev": @\n  }\n}\n';
		const file = L.writeConfig(text);
		const r = L.runCli(['-c', file, '--check']);
		assert.equal(r.status, 1, r.all);
		assert.ok(r.stderr.includes(file), `must name the file:\n${r.stderr}`);
		assert.match(r.stderr, /\b3:12\b|line 3,? col(umn)? 12\b/, `line 3 column 12:\n${r.stderr}`);
	});

	test('--check: invalid JSON the tokenizer lets through is still an error', T, () => {
		for (const text of ['{"toolboxes": {"a" "b"}}', '{"toolboxes": {}} extra', '{"toolboxes": tru}']) {
			const file = L.writeConfig(text);
			const r = L.runCli(['-c', file, '--check']);
			assert.equal(r.status, 1, `${text}\n${r.all}`);
			assert.ok(r.stderr.includes(file), r.stderr);
			assert.match(r.stderr, /:1:\d+|line 1\b/, `${text}: line 1 expected:\n${r.stderr}`);
		}
	});

	test('--check: bad names name the rule; every problem is reported', T, () => {
		const file = L.writeConfig({
			toolboxes: {
				bad__name: { description: 'x', mcpServers: { ok: L.mock() } },
				good: { description: 'y', mcpServers: { _srv: L.mock(), 'trail_': L.mock() } },
			},
		});
		const r = L.runCli(['-c', file, '--check']);
		assert.equal(r.status, 1, r.all);
		for (const n of ['bad__name', '_srv', 'trail_'])
			assert.ok(r.stderr.includes(n), `must name ${n}:\n${r.stderr}`);
		assert.match(r.stderr, /A-Za-z0-9|underscore/i, `must state the rule:\n${r.stderr}`);
		assert.ok(r.stderr.includes(file));
	});

	test('--check: unset ${VAR} names variable, location and an export hint', T, () => {
		const file = L.writeConfig({
			toolboxes: {
				prod: {
					description: 'p',
					mcpServers: {
						db: {
							command: 'db-server',
							args: ['--flag', '${WB_E2E_UNSET_ARG}'],
							env: { API_KEY: '${WB_E2E_UNSET_KEY}' },
						},
					},
				},
			},
		});
		const env = { ...process.env };
		delete env.WB_E2E_UNSET_ARG;
		delete env.WB_E2E_UNSET_KEY;
		delete env.WORKBENCH_CONFIG;
		const r = L.runCli(['-c', file, '--check'], { env });
		assert.equal(r.status, 1, r.all);
		assert.ok(r.stderr.includes('WB_E2E_UNSET_KEY'), r.stderr);
		assert.ok(r.stderr.includes('toolboxes.prod.mcpServers.db.env.API_KEY'), r.stderr);
		assert.match(r.stderr, /export WB_E2E_UNSET_KEY=/, r.stderr);
		assert.ok(r.stderr.includes('WB_E2E_UNSET_ARG'), `every problem is reported:\n${r.stderr}`);
		assert.ok(r.stderr.includes('toolboxes.prod.mcpServers.db.args[1]'), r.stderr);
		assert.match(r.stderr, /export WB_E2E_UNSET_ARG=/, r.stderr);
	});

	test('--check: ${VAR:-default}, $$ and set variables load; values never printed', T, () => {
		const secret = 'sEcReT-vAlUe-93481';
		const secretDir = L.makeTempDir('wb-secret-');
		const server = {
			command: '${WB_E2E_SECRET_CMD}',
			args: ['--token=${WB_E2E_SECRET}', '$$literal', '${WB_E2E_UNSET_D:-fallback}'],
			env: { TOKEN: '${WB_E2E_SECRET}', EMPTY_DEF: '${WB_E2E_EMPTY:-dflt}' },
			cwd: '${WB_E2E_SECRET_DIR}',
		};
		const env = {
			...process.env,
			WB_E2E_SECRET: secret,
			WB_E2E_SECRET_CMD: `/bin/${secret}`,
			WB_E2E_SECRET_DIR: secretDir,
			WB_E2E_EMPTY: '',
		};
		delete env.WB_E2E_UNSET_D;
		delete env.WORKBENCH_CONFIG;
		const ok = L.writeConfig({ toolboxes: { box: { description: 'd', mcpServers: { srv: server } } } });
		let r = L.runCli(['-c', ok, '--check'], { env });
		assert.equal(r.status, 0, r.all);
		assert.ok(!r.all.includes(secret), `secret value leaked:\n${r.all}`);

		// Same, next to an error, so the output is long.
		const bad = L.writeConfig({
			toolboxes: {
				box: { description: 'd', mcpServers: { srv: server, other: { command: 'x', env: { K: '${WB_E2E_UNSET_D}' } } } },
			},
		});
		r = L.runCli(['-c', bad, '--check'], { env });
		assert.equal(r.status, 1, r.all);
		assert.ok(!r.all.includes(secret), `secret value leaked:\n${r.all}`);
	});

	test('--check: unclosed ${ is an error with its location', T, () => {
		const file = L.writeConfig({
			toolboxes: { prod: { description: 'p', mcpServers: { db: { command: 'x', args: ['a', '${OOPS'] } } } },
		});
		const r = L.runCli(['-c', file, '--check']);
		assert.equal(r.status, 1, r.all);
		assert.ok(r.stderr.includes('toolboxes.prod.mcpServers.db.args[1]'), r.stderr);
	});

	test('--check: schema errors give the path and what was expected', T, () => {
		const cases = [
			[{}, /toolboxes/],
			[{ toolboxes: { a: { description: 'd', mcpServers: { s: { args: [] } } } } }, /toolboxes\.a\.mcpServers\.s[^\n]*command|command[^\n]*toolboxes\.a\.mcpServers\.s/],
			[{ toolboxes: { a: { description: 'd', mcpServers: { s: { command: 'x', args: 'notarray' } } } } }, /toolboxes\.a\.mcpServers\.s\.args/],
			[{ toolboxes: { a: { description: 'd', mcpServers: { s: { command: 'x', env: { K: 1 } } } } } }, /toolboxes\.a\.mcpServers\.s\.env\.K/],
			[{ toolboxes: { a: { description: 'd', mcpServers: { s: { command: 'x', transport: 'sse' } } } } }, /transport[^\n]*stdio|stdio[^\n]*transport/],
			[{ toolboxes: { a: { description: 'd', mcpServers: { s: { command: 'x', inheritEnv: 'yes' } } } } }, /toolboxes\.a\.mcpServers\.s\.inheritEnv/],
		];
		for (const [cfg, re] of cases) {
			const file = L.writeConfig(cfg);
			const r = L.runCli(['-c', file, '--check']);
			assert.equal(r.status, 1, `${JSON.stringify(cfg)}\n${r.all}`);
			assert.match(r.stderr, re, `${JSON.stringify(cfg)}:\n${r.stderr}`);
			assert.ok(r.stderr.includes(file), `must name the file:\n${r.stderr}`);
		}
	});

	test('--check: unknown keys are warned about, not fatal', T, () => {
		const file = L.writeConfig({
			bogusTopKey: 1,
			toolboxes: { a: { description: 'd', mcpServers: { s: { command: 'x', bogusServerKey: true } } } },
		});
		const r = L.runCli(['-c', file, '--check']);
		assert.equal(r.status, 0, r.all);
		assert.match(r.stderr, /bogusTopKey/);
		assert.match(r.stderr, /bogusServerKey/);
	});

	test('--check: a missing file is an error naming it', T, () => {
		const file = path.join(L.makeTempDir(), 'does-not-exist.json');
		const r = L.runCli(['-c', file, '--check']);
		assert.equal(r.status, 1, r.all);
		assert.ok(r.stderr.includes(file), r.stderr);
	});

	test('config file: -c, then $WORKBENCH_CONFIG, then ./workbench-config.json', T, () => {
		const box = (n) => ({ toolboxes: { [n]: { description: n, mcpServers: { s: L.mock() } } } });
		const fromEnv = L.writeConfig(box('from_env'));
		const fromFlag = L.writeConfig(box('from_flag'));
		const cwd = L.makeTempDir('wb-cwd-');
		fs.writeFileSync(path.join(cwd, 'workbench-config.json'), JSON.stringify(box('from_cwd')));
		const base = { ...process.env };
		delete base.WORKBENCH_CONFIG;

		let r = L.runCli(['--check'], { env: base, cwd });
		assert.equal(r.status, 0, r.all);
		assert.match(r.all, /from_cwd/);

		r = L.runCli(['--check'], { env: { ...base, WORKBENCH_CONFIG: fromEnv }, cwd });
		assert.equal(r.status, 0, r.all);
		assert.match(r.all, /from_env/);
		assert.doesNotMatch(r.all, /from_cwd/);

		for (const flag of ['-c', '--config']) {
			r = L.runCli([flag, fromFlag, '--check'], { env: { ...base, WORKBENCH_CONFIG: fromEnv }, cwd });
			assert.equal(r.status, 0, r.all);
			assert.match(r.all, /from_flag/);
			assert.doesNotMatch(r.all, /from_env|from_cwd/);
		}

		const empty = L.makeTempDir('wb-cwd-');
		r = L.runCli(['--check'], { env: base, cwd: empty });
		assert.equal(r.status, 1, r.all);
		assert.match(r.stderr, /workbench-config\.json/);
	});

	test('WORKBENCH_CONFIG is used by a serving workbench too', T, async () => {
		const file = L.writeConfig({ toolboxes: { via_env: { description: 've', mcpServers: { s: L.mock() } } } });
		const raw = L.startRaw(null, { env: { ...process.env, WORKBENCH_CONFIG: file } });
		try {
			const res = await raw.initialize();
			assert.match(res.instructions ?? '', /^- via_env: ve$/m);
		} finally {
			await raw.close();
		}
	});

	test('an invalid config stops the start before answering anything', T, async () => {
		const file = L.writeConfig('{"toolboxes": {"bad__name": {"mcpServers": {}}}}');
		const raw = L.startRaw(file);
		raw.send({
			jsonrpc: '2.0', id: 1, method: 'initialize',
			params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
		});
		const r = await L.within(raw.exited, 3000);
		await raw.close();
		assert.ok(r, 'must exit');
		assert.equal(r.code, 1);
		assert.deepEqual(raw.pending, [], 'nothing answered');
		assert.equal(raw.partial, '');
		assert.ok(raw.stderr.includes('bad__name'), raw.stderr);
	});
});
