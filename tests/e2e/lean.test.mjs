// Issue 37: what a model reads.  Lean tools in open_toolbox ("toolDetail":
// "full" keeps them whole), search hits that carry their input schema,
// several queries at once, every field of a tool searched, the thesaurus,
// "openOnUse", the instructions and the not-indexed note.  Tools are
// chosen member by member with tests/e2e/tools-server.mjs; the recall on
// real servers is tests/e2e/context.test.mjs's.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as L from './lib.mjs';
import * as H from './http-lib.mjs';

after(L.cleanup);

const T = { timeout: 30000 * L.SLOW };

// A server listing these tools.
function toolsServer(tools) {
	const file = path.join(L.makeTempDir('wb-tools-'), 'tools.json');
	fs.writeFileSync(file, JSON.stringify(tools));
	return { command: L.NODE, args: [path.join(L.E2E_DIR, 'tools-server.mjs'), file] };
}

function tool(name, description, properties = {}, more = {}) {
	return { name, description, inputSchema: { type: 'object', properties }, ...more };
}

// A schema nested depth levels deep, each level titled "L<k>".
function nested(depth) {
	let s = { type: 'string', title: `L${depth}` };
	for (let k = depth - 1; k >= 0; k--)
		s = { type: 'object', title: `L${k}`, properties: { c: s } };
	return s;
}

const WEATHER = {
	name: 'get_weather',
	title: 'Weather now',
	description: 'Current weather for a city.',
	inputSchema: {
		$schema: 'http://json-schema.org/draft-07/schema#',
		$comment: 'made by hand',
		type: 'object',
		title: 'Args',
		properties: {
			city: { type: 'string', title: 'City', description: 'City name' },
			title: { type: 'string', description: 'A parameter named title' },
			list: { type: 'array', items: { type: 'object', title: 'Item', properties: { a: { type: 'number' } } } },
			choice: { anyOf: [{ type: 'string', title: 'S' }, { type: 'null' }] },
			deep: nested(20),
		},
		required: ['city'],
		additionalProperties: false,
	},
	outputSchema: { type: 'object', properties: { t: { type: 'number' } } },
	annotations: { readOnlyHint: true },
	execution: { taskSupport: 'forbidden' },
	_meta: { 'example.com/x': 1 },
};

// What lean keeps of WEATHER's schema: "title" gone where a schema is,
// kept as a parameter's name and from 16 levels below the input schema on,
// copied whole; the input schema's own "type": "object" gone (MCP makes
// every input schema one), a nested schema's kept.
function leanDeep() {
	const s = nested(20);
	let at = s;
	for (let k = 0; k < 16; k++) {
		delete at.title;
		at = at.properties?.c;
	}
	return s;
}

const LEAN_WEATHER = {
	properties: {
		city: { type: 'string', description: 'City name' },
		title: { type: 'string', description: 'A parameter named title' },
		list: { type: 'array', items: { type: 'object', properties: { a: { type: 'number' } } } },
		choice: { anyOf: [{ type: 'string' }, { type: 'null' }] },
		deep: leanDeep(),
	},
	required: ['city'],
	additionalProperties: false,
};

function box(servers, description = 'A toolbox') {
	return { description, mcpServers: servers };
}

describe('open_toolbox: lean tools', () => {
	test('a tool is its name, description and input schema without $schema, $comment, schema titles and its own type, grouped under its server, the toolbox named once; "toolDetail": "full" keeps every member', T, async () => {
		const w = toolsServer([WEATHER, tool('bare', 'No schema members.')]);
		await L.withWorkbench({ toolboxes: { wx: box({ w }) } }, {}, async (wb) => {
			const open = await L.openOk(wb, 'wx');
			assert.equal(open.toolbox, 'wx');
			assert.deepEqual(open.servers.map((s) => Object.keys(s)), [['server', 'tools']], 'no offers: no counts');
			assert.equal(open.servers[0].server, 'w');
			const t = open.servers[0].tools.find((x) => x.name === 'get_weather');
			assert.deepEqual(Object.keys(t), ['name', 'description', 'inputSchema']);
			assert.equal(t.description, WEATHER.description);
			assert.deepEqual(t.inputSchema, LEAN_WEATHER);
			const bare = open.servers[0].tools.find((x) => x.name === 'bare');
			assert.deepEqual(bare.inputSchema, { properties: {} });
			// The call goes through as before.
			const r = await wb.useTool('wx', 'w', 'get_weather', { city: 'Oslo' });
			assert.equal(L.text(r), 'get_weather {"city":"Oslo"}');
		});
		await L.withWorkbench({ toolDetail: 'full', toolboxes: { wx: box({ w }) } }, {}, async (wb) => {
			const t = (await L.openOk(wb, 'wx')).servers[0].tools.find((x) => x.name === 'get_weather');
			assert.deepEqual(t, WEATHER);
		});
	});

	test('server-everything: lean leaves out outputSchema, annotations and titles; full keeps them', T, async () => {
		const ev = L.everythingServer();
		const members = new Set();
		await L.withWorkbench({ toolboxes: { ev: box({ ev }) } }, {}, async (wb) => {
			for (const t of (await L.openOk(wb, 'ev')).servers[0].tools) {
				Object.keys(t).forEach((k) => members.add(k));
				assert.equal(t.inputSchema.$schema, undefined, t.name);
			}
		});
		assert.deepEqual([...members].sort(), ['description', 'inputSchema', 'name']);
		await L.withWorkbench({ toolDetail: 'full', toolboxes: { ev: box({ ev }) } }, {}, async (wb) => {
			const tools = L.openedTools(await L.openOk(wb, 'ev'));
			assert.ok(tools.some((t) => t.outputSchema && t.annotations && t.title), JSON.stringify(tools[0]));
		});
	});

	test('"toolDetail" other than "lean" or "full" is refused by --check', T, () => {
		const file = L.writeConfig({ toolDetail: 'short', toolboxes: {} });
		const r = L.runCli(['--check', '-c', file]);
		assert.notEqual(r.status, 0);
		assert.match(r.all, /toolDetail.*expected "lean" or "full"/);
	});
});

// Several tools with "weather" in their names, and one that is not.
const FORECASTS = ['now', 'forecast', 'alerts', 'history', 'radar'].map((k) =>
    tool(`weather_${k}`, `Weather ${k}.`, { city: { type: 'string', title: 'City' } }, { inputSchema: {
	    $schema: 'http://json-schema.org/draft-07/schema#', type: 'object',
	    properties: { city: { type: 'string', title: 'City' } } } }));

describe('search_tools: schemas and queries', () => {
	const config = (extra = {}) => ({ ...extra, toolboxes: { wx: box({ w: toolsServer(FORECASTS) }) } });

	async function searched(extra, args) {
		return L.withWorkbench(config(extra), {}, async (wb) => {
			await L.openOk(wb, 'wx');
			const r = await wb.callTool('search_tools', args);
			return r.isError ? L.text(r) : L.resultJson(r);
		});
	}

	test('the best 3 hits carry their lean inputSchema, the rest none; "searchSchemas" sets how many, 0 none', T, async () => {
		const r = await searched({}, { query: 'weather' });
		assert.equal(r.results.length, 5);
		assert.deepEqual(r.results.map((h) => h.inputSchema !== undefined), [true, true, true, false, false]);
		assert.deepEqual(r.results[0].inputSchema, { properties: { city: { type: 'string' } } });
		assert.deepEqual(Object.keys(r.results[0]), ['toolbox', 'server', 'name', 'description', 'inputSchema']);
		const one = await searched({ searchSchemas: 1 }, { query: 'weather', limit: 2 });
		assert.deepEqual(one.results.map((h) => h.inputSchema !== undefined), [true, false]);
		const none = await searched({ searchSchemas: 0 }, { query: 'weather' });
		assert.ok(none.results.every((h) => h.inputSchema === undefined));
		const all = await searched({ searchSchemas: 50 }, { query: 'weather' });
		assert.ok(all.results.every((h) => h.inputSchema !== undefined));
		for (const bad of [-1, 51, 'x'])
			assert.notEqual(L.runCli(['--check', '-c', L.writeConfig(config({ searchSchemas: bad }))]).status, 0, `searchSchemas ${bad}`);
	});

	test('a query is read up to its first 1,024 bytes, cut where a character begins: a word ending at byte 1,024 counts, one past it not, and a query of a megabyte of quotes answers at once', T, async () => {
		await L.withWorkbench(config(), {}, async (wb) => {
			await L.openOk(wb, 'wx');
			const first = async (query) => L.resultJson(await wb.callTool('search_tools', { query })).results[0]?.name;
			assert.equal(await first(`${' '.repeat(1019)}radar`), 'weather_radar', 'radar ends at byte 1,024');
			assert.notEqual(await first(`${' '.repeat(1020)}radar`), 'weather_radar', 'radar cut to "rada"');
			// The euro sign is bytes 1,022 to 1,024: cut before it.
			assert.equal(await first(`radar${' '.repeat(1017)}\u20ac`), 'weather_radar');
			// Each quote looked for its match: quadratic in the query.
			assert.equal(typeof await first(" 'a".repeat(400000)), 'undefined');
			assert.equal(await first('radar'), 'weather_radar', 'the workbench still answers');
		});
	});

	test('"queries": up to 5 searches in one call, each with its query; more, or with "query", is refused', T, async () => {
		const r = await searched({}, { queries: ['weather radar', 'alerts', 'history', 'forecast', 'now'] });
		assert.deepEqual(r.searches.map((s) => s.query), ['weather radar', 'alerts', 'history', 'forecast', 'now']);
		assert.deepEqual(r.searches.map((s) => s.results[0].name), ['weather_radar', 'weather_alerts', 'weather_history',
		    'weather_forecast', 'weather_now']);
		assert.ok(r.searches.every((s) => s.results[0].inputSchema));
		assert.match(await searched({}, { queries: ['a', 'b', 'c', 'd', 'e', 'f'] }), /queries: expected an array of 1 to 5 strings/);
		assert.match(await searched({}, { queries: [] }), /queries: expected an array of 1 to 5 strings/);
		assert.match(await searched({}, { queries: ['weather', ''] }), /queries\[1\]: expected a non-empty string/);
		assert.match(await searched({}, { query: 'weather', queries: ['now'] }), /query or queries, not both/);
	});

	test('a hit\'s description is its first sentence, cut at 240 bytes before a character that spans the cut', T, async () => {
		const long = `${'a'.repeat(238)}\u20ac and more.`;	// The euro sign is bytes 238 to 240.
		const cfg = { toolboxes: { wx: box({ w: toolsServer([tool('weather_long', long), tool('weather_short', 'Short. Then more.')]) }) } };
		await L.withWorkbench(cfg, {}, async (wb) => {
			await L.openOk(wb, 'wx');
			const hits = L.resultJson(await wb.callTool('search_tools', { query: 'weather' })).results;
			assert.equal(hits.find((h) => h.name === 'weather_long').description, 'a'.repeat(238));
			assert.equal(hits.find((h) => h.name === 'weather_short').description, 'Short.');
		});
	});

	test('a toolbox not indexed yet is named, with how to index it', T, async () => {
		const cfg = { toolboxes: { wx: box({ w: toolsServer(FORECASTS) }), later: box({ m: L.mock() }) } };
		await L.withWorkbench(cfg, {}, async (wb) => {
			await L.openOk(wb, 'wx');
			const r = L.resultJson(await wb.callTool('search_tools', { query: 'weather' }));
			assert.deepEqual(r.not_indexed, ['later']);
			assert.match(r.note, /open_toolbox/);
			assert.match(r.note, /mcp-workbench --probe/);
		});
	});
});

describe('search_tools: ranking', () => {
	// Each query word is in one field of one tool alone.
	const FIELDS = {
		toolboxes: {
			zoo: box({
				keeper: toolsServer([
					tool('zebra_tool', 'Does a thing.'),
					tool('t_title', 'Does a thing.', {}, { title: 'Giraffe finder' }),
					tool('t_atitle', 'Does a thing.', {}, { annotations: { title: 'Okapi finder' } }),
					tool('t_desc', 'Counts the walrus population.'),
					tool('t_param', 'Does a thing.', { penguin_id: { type: 'string' } }),
					tool('t_pdesc', 'Does a thing.', { x: { type: 'string', description: 'The flamingo to feed' } }),
					tool('t_enum', 'Does a thing.', { mode: { type: 'string', enum: ['ocelot', 'lynx'] } }),
					tool('walrus_count', 'Does a thing.'),
				]),
				koala: toolsServer([tool('t_server', 'Does a thing.')]),
			}, 'Animals'),
			narwhal: box({ sea: toolsServer([tool('t_box', 'Does a thing.')]) }, 'Tools about the manatee'),
		},
	};

	test('every field is searched: name, title (or annotations.title), description, parameter names, their descriptions and values, server, toolbox and its description; a name weighs more than a description', T, async () => {
		await L.withWorkbench(FIELDS, {}, async (wb) => {
			await L.openOk(wb, 'zoo');
			await L.openOk(wb, 'narwhal');
			const first = async (query) => L.resultJson(await wb.callTool('search_tools', { query })).results[0]?.name;
			assert.equal(await first('zebra'), 'zebra_tool');
			assert.equal(await first('giraffe'), 't_title');
			assert.equal(await first('okapi'), 't_atitle');
			assert.equal(await first('penguin'), 't_param');
			assert.equal(await first('flamingo'), 't_pdesc');
			assert.equal(await first('ocelot'), 't_enum');
			assert.equal(await first('koala'), 't_server');
			assert.equal(await first('narwhal'), 't_box');
			assert.equal(await first('manatee'), 't_box');
			const walrus = L.resultJson(await wb.callTool('search_tools', { query: 'walrus' })).results.map((h) => h.name);
			assert.deepEqual(walrus, ['walrus_count', 't_desc'], 'the name first, then the description');
		});
	});

	const WORDS = {
		toolboxes: {
			kit: box({
				k: toolsServer([
					tool('list_directory', 'List the entries of a directory.'),
					tool('create_pull_request', 'Open a new pull request.'),
					tool('store_fact', 'Store a fact about a person.'),
					tool('show_items', 'Show the items.'),
					tool('list_items', 'List the items.'),
					tool('unrelated', 'Nothing of the kind.'),
				]),
			}),
		},
	};

	test('the thesaurus: folder finds a directory, PR a pull request, "keep in mind" storing; a related word ranks below the word asked', T, async () => {
		await L.withWorkbench(WORDS, {}, async (wb) => {
			await L.openOk(wb, 'kit');
			const names = async (query) => L.resultJson(await wb.callTool('search_tools', { query })).results.map((h) => h.name);
			assert.equal((await names('folder'))[0], 'list_directory');
			assert.equal((await names('make a PR'))[0], 'create_pull_request');
			assert.equal((await names('keep in mind that Bob likes tea'))[0], 'store_fact');
			assert.deepEqual((await names('keep')), [], 'one word of a phrase alone brings nothing in');
			assert.deepEqual((await names('show items')).slice(0, 2), ['show_items', 'list_items']);
			assert.deepEqual((await names('list items')).slice(0, 2), ['list_items', 'show_items']);
		});
	});

	const QUOTED = { toolboxes: { kit: box({ k: toolsServer([
		tool('edit_text', 'Change a text.'),
		tool('draft_mail', 'Write a mail.'),
	]) }) } };

	const NAMED = { toolboxes: { kit: box({ k: toolsServer([
		tool('get_item_files', 'Get the files of an item.'),
		tool('get_item', 'Get an item by its number, with every detail the store keeps about it and its history.'),
	]) }) } };

	test('a tool whose name the query has whole goes above one whose name says more', T, async () => {
		await L.withWorkbench(NAMED, {}, async (wb) => {
			await L.openOk(wb, 'kit');
			const names = async (query) => L.resultJson(await wb.callTool('search_tools', { query })).results.map((h) => h.name);
			assert.deepEqual(await names('show me item 7'), ['get_item', 'get_item_files']);
		});
	});

	const NUMBER = { toolboxes: { kit: box({ k: toolsServer([
		tool('get_item', 'Get an item.'),
		tool('list_items', 'List the items.'),
	]) }) } };

	test('a name\'s words agree in number with the query\'s: the items are listed, an item is got', T, async () => {
		await L.withWorkbench(NUMBER, {}, async (wb) => {
			await L.openOk(wb, 'kit');
			const names = async (query) => L.resultJson(await wb.callTool('search_tools', { query })).results.map((h) => h.name);
			assert.deepEqual(await names('show me the items'), ['list_items', 'get_item']);
			assert.deepEqual(await names('show me item 7'), ['get_item', 'list_items']);
		});
	});

	// Alike but for what they do to things; the changing ones first.
	const ASKED = { toolboxes: { kit: box({ k: toolsServer([
		tool('create_note', 'A note about a person.'),
		tool('get_note', 'A note about a person.'),
		tool('jot_memo', 'A memo.', {}, { annotations: { readOnlyHint: false } }),
		tool('memo_pad', 'A memo.', {}, { annotations: { readOnlyHint: true } }),
	]) }) } };

	test('a question goes to the tools that only read: by their annotations, else by their name\'s verb', T, async () => {
		await L.withWorkbench(ASKED, {}, async (wb) => {
			await L.openOk(wb, 'kit');
			const first = async (query) => L.resultJson(await wb.callTool('search_tools', { query })).results[0]?.name;
			assert.equal(await first('a note about Carol'), 'create_note', 'alike: in their order');
			assert.equal(await first('what note is there about Carol'), 'get_note');
			assert.equal(await first('a note about Carol?'), 'get_note');
			assert.equal(await first('memo'), 'jot_memo');
			assert.equal(await first('which memo'), 'memo_pad');
		});
	});

	const FILES = { toolboxes: { kit: box({ k: toolsServer([
		tool('notes', 'Take notes.'),
		tool('open_file', 'Open a file.'),
		tool('visit', 'Visit a website.'),
	]) }) } };

	test('a file name is a value and says a file; a web address says a website', T, async () => {
		await L.withWorkbench(FILES, {}, async (wb) => {
			await L.openOk(wb, 'kit');
			const first = async (query) => L.resultJson(await wb.callTool('search_tools', { query })).results[0]?.name;
			assert.equal(await first('notes'), 'notes');
			assert.equal(await first('notes.txt'), 'open_file');
			assert.equal(await first('example.com'), 'visit');
		});
	});

	test('quoted words are values, not what the tool does: they count less', T, async () => {
		await L.withWorkbench(QUOTED, {}, async (wb) => {
			await L.openOk(wb, 'kit');
			const names = async (query) => L.resultJson(await wb.callTool('search_tools', { query })).results.map((h) => h.name);
			assert.deepEqual(await names("change it to 'draft'"), ['edit_text', 'draft_mail']);
			assert.deepEqual(await names('change it to "draft"'), ['edit_text', 'draft_mail']);
			assert.deepEqual(await names('change it to draft'), ['draft_mail', 'edit_text'], 'unquoted, the name weighs more');
			assert.deepEqual(await names("draft's change"), ['draft_mail', 'edit_text'], "an apostrophe is no quote");
		});
	});
});

describe('openOnUse', () => {
	const W = () => toolsServer([WEATHER]);

	test('stdio: use_tool of a toolbox not open is refused, naming the setting; with "openOnUse": true it opens the toolbox and calls', T, async () => {
		const w = W();
		await L.withWorkbench({ toolboxes: { wx: box({ w }) } }, {}, async (wb) => {
			const r = await wb.useTool('wx', 'w', 'get_weather', { city: 'Oslo' });
			assert.ok(r.isError);
			assert.match(L.text(r), /Toolbox 'wx' is not open; call open_toolbox first.*"openOnUse": true/);
		});
		await L.withWorkbench({ openOnUse: true, toolboxes: { wx: box({ w }) } }, {}, async (wb) => {
			const r = await wb.useTool('wx', 'w', 'get_weather', { city: 'Oslo' });
			L.assertOk(r);
			assert.equal(L.text(r), 'get_weather {"city":"Oslo"}');
			// Opened: a tool it does not have is named as such.
			const no = await wb.useTool('wx', 'w', 'nope', {});
			assert.match(L.text(no), /Tool 'nope' not found in server 'w'/);
		});
	});

	test('dynamic mode: the opened toolbox\'s tools are listed after the call, and the client is told', T, async () => {
		const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
		await L.withWorkbench({ toolMode: 'dynamic', openOnUse: true, toolboxes: { wx: box({ w: W() }) } }, {}, async (wb) => {
			const changed = L.collectNotifications(wb.client, ToolListChangedNotificationSchema);
			L.assertOk(await wb.useTool('wx', 'w', 'get_weather', { city: 'Oslo' }));
			await changed.waitCount(1, 10000 * L.SLOW);
			const names = (await wb.client.listTools()).tools.map((t) => t.name);
			assert.ok(names.includes('wx__w__get_weather'), names.join(' '));
		});
	});

	test('the instructions name each toolbox once with its description, and say a toolbox is opened first only when it must be', T, async () => {
		const cfg = (extra) => ({ ...extra, toolboxes: { wx: box({ w: W() }, 'Weather of the world'), empty: box({}, '') } });
		await L.withWorkbench(cfg({}), {}, async (wb) => {
			const ins = wb.client.getInstructions();
			assert.equal(ins.split('wx').length - 1, 1, ins);
			assert.match(ins, /^- wx: Weather of the world$/m);
			assert.match(ins, /^- empty$/m);
			assert.match(ins, /search_tools finds a tool and gives its inputSchema/);
			assert.match(ins, /A toolbox must be opened before use_tool/);
		});
		await L.withWorkbench(cfg({ openOnUse: true, searchTool: false }), {}, async (wb) => {
			const ins = wb.client.getInstructions();
			assert.doesNotMatch(ins, /must be opened|search_tools/);
		});
	});

	// A build without HTTP (make check-minimal) has no listener to call.
	test('HTTP: the Inspector CLI calls a tool in one run, its session never opened the toolbox', { timeout: 120000 * L.SLOW, skip: process.env.WORKBENCH_HTTP === '0' && 'this build leaves out HTTP' }, async () => {
		const INSPECTOR = path.join(L.TESTS_DIR, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
		await H.withListener({ openOnUse: true, toolboxes: { wx: box({ w: W() }) } }, {}, async (wb) => {
			const home = L.makeTempDir('wb-inspector-');
			const r = spawnSync(L.NODE, [INSPECTOR, '--cli', wb.url, '--transport', 'http', '--method', 'tools/call',
			    '--tool-name', 'use_tool', '--tool-arg', 'tool={"toolbox":"wx","server":"w","name":"get_weather"}',
			    '--tool-arg', 'arguments={"city":"Oslo"}'], {
				encoding: 'utf8', timeout: 60000 * L.SLOW,
				env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') },
			});
			assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
			assert.equal(L.resultText(JSON.parse(r.stdout)), 'get_weather {"city":"Oslo"}');
		});
	});
});
