// Prompts, resources and completions: the servers' prompts are listed as
// {toolbox}__{server}__{prompt}, their resources and templates with URIs
// unchanged, once their toolbox is open (in both modes); prompts/get,
// resources/read, subscriptions and completion/complete reach the owning
// server and come back verbatim; list changes reach the client once.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
	PromptListChangedNotificationSchema,
	ResourceListChangedNotificationSchema,
	ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as L from './lib.mjs';

const { withWorkbench, withRaw, openOk, assertOk, text } = L;

after(L.cleanup);

const T = { timeout: 20000 };
const TE = { timeout: 40000 };
const QUIET_MS = 400;
const NOT_FOUND = -32002;

function box(servers, description = 'A toolbox') {
	return { description, mcpServers: servers };
}

// The SDK call's JSON-RPC error.
async function rpcError(promise, what) {
	const e = await L.rejection(promise, what);
	assert.equal(typeof e.code, 'number', `${what}: ${e.stack}`);
	return e;
}

// Send a raw request; the answer line, past notifications (list_changed).
async function ask(raw, msg) {
	if (typeof msg === 'string')
		raw.sendLine(msg);
	else
		raw.send(msg);
	for (;;) {
		const line = await raw.readLine();
		const json = JSON.parse(line);
		if (json.id !== undefined)
			return { line, json };
	}
}

// Open toolbox d over a raw session.
async function rawOpen(raw) {
	await raw.initialize();
	const r = await ask(raw, { jsonrpc: '2.0', id: 'open', method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'd' } } });
	assert.equal(r.json.result.isError, undefined, r.line);
}

// What server-everything offers, asked directly.
async function direct(server) {
	const transport = new StdioClientTransport({ command: server.command, args: server.args, stderr: 'ignore' });
	const client = new Client({ name: 'direct', version: '1' }, { capabilities: {} });
	await L.withTimeout(client.connect(transport), 10000, 'direct connect');
	try {
		return {
			prompts: (await client.listPrompts()).prompts,
			resources: (await client.listResources()).resources,
			templates: (await client.listResourceTemplates()).resourceTemplates,
			doc: await client.readResource({ uri: 'demo://resource/static/document/features.md' }),
		};
	} finally {
		await client.close();
	}
}

function assertShown(got, src, name, what) {
	assert.equal(got.name, name, what);
	assert.equal(got.description, src.description ? `[ev/everything] ${src.description}` : '[ev/everything]', what);
	assert.deepEqual(got._meta, { ...(src._meta ?? {}), source_server: 'everything', toolbox_name: 'ev',
		original_name: src.name }, what);
	for (const k of Object.keys(src))
		if (!['name', 'description', '_meta'].includes(k))
			assert.deepEqual(got[k], src[k], `${what}: ${k}`);
}

describe('with server-everything', () => {
	const EV = L.everythingServer();
	const CONFIG = { toolboxes: { ev: box({ everything: EV }), other: box({ m: L.mock() }) } };

	test('capabilities; nothing of a toolbox is shown or reachable before it is opened', T, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const caps = wb.client.getServerCapabilities();
			assert.deepEqual(caps.prompts, { listChanged: true });
			assert.deepEqual(caps.resources, { subscribe: true, listChanged: true });
			assert.deepEqual(caps.completions, {});
			assert.deepEqual((await wb.client.listPrompts()).prompts, []);
			assert.deepEqual((await wb.client.listResources()).resources, []);
			assert.deepEqual((await wb.client.listResourceTemplates()).resourceTemplates, []);
			let e = await rpcError(wb.client.getPrompt({ name: 'ev__everything__simple-prompt' }), 'getPrompt');
			assert.equal(e.code, -32602);
			assert.match(e.message, /Unknown prompt: ev__everything__simple-prompt/);
			e = await rpcError(wb.client.readResource({ uri: 'demo://resource/static/document/features.md' }), 'read');
			assert.equal(e.code, NOT_FOUND);
			e = await rpcError(wb.client.readResource({ uri: 'demo://resource/dynamic/text/1' }), 'read template');
			assert.equal(e.code, NOT_FOUND);
			e = await rpcError(wb.client.complete({ ref: { type: 'ref/prompt', name: 'ev__everything__completable-prompt' },
				argument: { name: 'department', value: 'E' } }), 'complete');
			assert.equal(e.code, -32602);
		});
	});

	test('prompts, resources and templates as the server lists them, named, prefixed and tagged; one list_changed of each kind on open', TE, async () => {
		const src = await direct(EV);
		assert.ok(src.prompts.length >= 3 && src.resources.length >= 3 && src.templates.length >= 2, 'server-everything offers them');
		for (const mode of ['proxy', 'dynamic']) {
			await withWorkbench({ ...CONFIG, toolMode: mode }, {}, async (wb) => {
				const pc = L.collectNotifications(wb.client, PromptListChangedNotificationSchema);
				const rc = L.collectNotifications(wb.client, ResourceListChangedNotificationSchema);
				const opened = await openOk(wb, 'ev');
				const offers = opened.servers.find((s) => s.server === 'everything');
				assert.equal(offers.prompts, src.prompts.length);
				assert.equal(offers.resources, src.resources.length);
				assert.equal(offers.resource_templates, src.templates.length);
				await pc.waitCount(1);
				await rc.waitCount(1);
				const prompts = (await wb.client.listPrompts()).prompts;
				assert.deepEqual(prompts.map((p) => p.name), src.prompts.map((p) => `ev__everything__${p.name}`));
				src.prompts.forEach((p, i) => assertShown(prompts[i], p, `ev__everything__${p.name}`, `${mode} prompt ${p.name}`));
				const resources = (await wb.client.listResources()).resources;
				assert.deepEqual(resources.map((r) => r.uri), src.resources.map((r) => r.uri));
				src.resources.forEach((r, i) => assertShown(resources[i], r, r.name, `resource ${r.uri}`));
				const templates = (await wb.client.listResourceTemplates()).resourceTemplates;
				assert.deepEqual(templates.map((t) => t.uriTemplate), src.templates.map((t) => t.uriTemplate));
				src.templates.forEach((t, i) => assertShown(templates[i], t, t.name, `template ${t.uriTemplate}`));
				// Opening it again changes nothing: no more notifications.
				await openOk(wb, 'ev');
				await openOk(wb, 'other');
				await L.sleep(QUIET_MS);
				assert.equal(pc.count, 1, 'one prompts/list_changed');
				assert.equal(rc.count, 1, 'one resources/list_changed');
			});
		}
	});

	test('prompts/get with arguments, embedded resources; completion/complete for prompts and templates', TE, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'ev');
			let r = await wb.client.getPrompt({ name: 'ev__everything__args-prompt', arguments: { city: 'Paris', state: 'TX' } });
			assert.equal(r.messages[0].content.text, "What's weather in Paris, TX?");
			r = await wb.client.getPrompt({ name: 'ev__everything__resource-prompt', arguments: { resourceType: 'Blob', resourceId: '3' } });
			const res = r.messages.find((m) => m.content.type === 'resource').content.resource;
			assert.equal(res.uri, 'demo://resource/dynamic/blob/3');
			assert.match(Buffer.from(res.blob, 'base64').toString(), /^Resource 3: This is a base64 blob/);
			// The server's own error comes back as it is.
			const e = await rpcError(wb.client.getPrompt({ name: 'ev__everything__resource-prompt',
				arguments: { resourceType: 'Nope', resourceId: '1' } }), 'bad argument');
			assert.match(e.message, /Invalid resourceType/);
			const ref = { type: 'ref/prompt', name: 'ev__everything__completable-prompt' };
			r = await wb.client.complete({ ref, argument: { name: 'department', value: 'E' } });
			assert.deepEqual(r.completion.values, ['Engineering']);
			r = await wb.client.complete({ ref, argument: { name: 'name', value: 'A' },
				context: { arguments: { department: 'Engineering' } } });
			assert.deepEqual(r.completion.values, ['Alice']);
			r = await wb.client.complete({ ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' },
				argument: { name: 'resourceId', value: '5' } });
			assert.deepEqual(r.completion.values, ['5']);
		});
	});

	test('resources/read: listed, by template (text and blob), not found', TE, async () => {
		const src = await direct(EV);
		await withWorkbench(CONFIG, {}, async (wb) => {
			await openOk(wb, 'ev');
			const doc = await wb.client.readResource({ uri: 'demo://resource/static/document/features.md' });
			assert.deepEqual(doc, src.doc);
			let r = await wb.client.readResource({ uri: 'demo://resource/dynamic/text/7' });
			assert.match(r.contents[0].text, /^Resource 7: This is a plaintext resource/);
			r = await wb.client.readResource({ uri: 'demo://resource/dynamic/blob/2' });
			assert.match(Buffer.from(r.contents[0].blob, 'base64').toString(), /^Resource 2: This is a base64 blob/);
			const e = await rpcError(wb.client.readResource({ uri: 'demo://resource/nowhere' }), 'unknown');
			assert.equal(e.code, NOT_FOUND);
			assert.deepEqual(e.data, { uri: 'demo://resource/nowhere' });
		});
	});

	test('resources/subscribe: the server\'s updates reach the client; unsubscribe', TE, async () => {
		await withWorkbench(CONFIG, {}, async (wb) => {
			const up = L.collectNotifications(wb.client, ResourceUpdatedNotificationSchema);
			await openOk(wb, 'ev');
			const uri = 'demo://resource/static/document/features.md';
			assert.deepEqual(await wb.client.subscribeResource({ uri }), {});
			assertOk(await wb.useTool('ev', 'everything', 'toggle-subscriber-updates', {}));
			await up.waitCount(1);
			assert.deepEqual(up.list[0].params, { uri });
			assert.deepEqual(await wb.client.unsubscribeResource({ uri }), {});
			assertOk(await wb.useTool('ev', 'everything', 'toggle-subscriber-updates', {}));
		});
	});
});

describe('with the C mock', () => {
	const res = (name, ...more) => L.mock('--name', name, ...more);

	test('a URI or template offered by two servers goes to the first, with one warning each', T, async () => {
		const config = { toolboxes: { d: box({ a: res('A', '--resources', '2'), b: res('B', '--resources', '3') }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'd');
			for (let round = 0; round < 3; round++) {
				const list = (await wb.client.listResources()).resources;
				assert.deepEqual(list.map((r) => `${r.uri} ${r._meta.source_server}`),
				    ['mock://r/0 a', 'mock://r/1 a', 'mock://blob a', 'mock://r/2 b']);
				const t = (await wb.client.listResourceTemplates()).resourceTemplates;
				assert.deepEqual(t.map((x) => `${x.uriTemplate} ${x._meta.source_server}`), ['mock://item/{id} a']);
			}
			assert.equal((await wb.client.readResource({ uri: 'mock://r/1' })).contents[0].text, 'mock://r/1 from A');
			assert.equal((await wb.client.readResource({ uri: 'mock://r/2' })).contents[0].text, 'mock://r/2 from B');
			assert.equal((await wb.client.readResource({ uri: 'mock://item/42' })).contents[0].text, 'mock://item/42 from A');
			const warned = wb.stderr.split('\n').filter((l) => /also offered by/.test(l));
			assert.deepEqual(warned.map((l) => l.match(/'([^']*)'/)[1]).sort(),
			    ['mock://blob', 'mock://item/{id}', 'mock://r/0', 'mock://r/1'], wb.stderr);
			assert.ok(warned.every((l) => l.startsWith('mcp-workbench: d/b: ') || l.includes('d/b:')), wb.stderr);
		});
	});

	test('failing lists: the server keeps its tools, with a warning naming it; undeclared lists are never asked', T, async () => {
		const config = { toolboxes: { d: box({ bad: res('bad', '--prompts', '--resources', '2', '--fail-lists'), plain: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			const opened = await openOk(wb, 'd');
			assert.equal(opened.servers_connected, 2);
			assert.equal(text(await wb.useTool('d', 'bad', 'echo', { message: 'still here' })), 'still here');
			assert.deepEqual((await wb.client.listPrompts()).prompts, []);
			assert.deepEqual((await wb.client.listResources()).resources, []);
			for (const m of ['prompts/list', 'resources/list', 'resources/templates/list'])
				await wb.waitStderr(new RegExp(`d/bad: ${m} failed \\(list failure\\)`), 10000);
			assert.doesNotMatch(wb.stderr, /d\/plain: (prompts|resources)/);
		});
	});

	test('paging: every page walked and shown in one; a repeated cursor ends the walk', T, async () => {
		const config = { toolboxes: { d: box({
			paged: res('P', '--resources', '25', '--prompts', '--page-size', '4'),
			loop: L.mock('--resources', '3', '--repeat-cursor', '--resource-uri', 'loop://x'),
		}) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'd');
			const r = await wb.client.listResources();
			assert.equal(r.nextCursor, undefined);
			const uris = r.resources.map((x) => x.uri);
			assert.deepEqual(uris.slice(0, 26), [...Array(25).keys()].map((i) => `mock://r/${i}`).concat('mock://blob'));
			assert.deepEqual(uris.slice(26), ['loop://x'], 'the looping server: its first page only, minus duplicates');
			await wb.waitStderr(/d\/loop: resources\/list repeated a cursor/, 10000);
			assert.equal((await wb.client.listPrompts()).prompts.length, 2 + 0);
		});
	});

	test('a list that changes is fetched again; one list_changed of each kind, only when it changed', T, async () => {
		const config = { toolboxes: { d: box({ c: res('C', '--prompts', '--resources', '1') }), e: box({ m: L.mock() }) } };
		await withWorkbench(config, {}, async (wb) => {
			const pc = L.collectNotifications(wb.client, PromptListChangedNotificationSchema);
			const rc = L.collectNotifications(wb.client, ResourceListChangedNotificationSchema);
			await openOk(wb, 'd');
			await pc.waitCount(1);
			await rc.waitCount(1);
			assert.deepEqual((await wb.client.listPrompts()).prompts.map((p) => p.name), ['d__c__greet', 'd__c__plain']);
			assertOk(await wb.useTool('d', 'c', 'change_lists'));
			await pc.waitCount(2);
			await rc.waitCount(2);
			assert.deepEqual((await wb.client.listPrompts()).prompts.map((p) => p.name), ['d__c__greet', 'd__c__plain', 'd__c__added_1']);
			assert.ok((await wb.client.listResources()).resources.some((r) => r.uri === 'mock://added/1'));
			// Opening toolboxes that add nothing of the kind: no notification.
			await openOk(wb, 'd');
			await openOk(wb, 'e');
			await L.sleep(QUIET_MS);
			assert.equal(pc.count, 2);
			assert.equal(rc.count, 2);
		});
	});

	test('promptFilters and resourceFilters keep names and URIs by glob', T, async () => {
		const config = { toolboxes: { d: box({ f: { ...res('F', '--prompts', '--resources', '3'),
			promptFilters: ['gr*'], resourceFilters: ['mock://r/*'] } }) } };
		await withWorkbench(config, {}, async (wb) => {
			await openOk(wb, 'd');
			assert.deepEqual((await wb.client.listPrompts()).prompts.map((p) => p.name), ['d__f__greet']);
			assert.deepEqual((await wb.client.listResources()).resources.map((r) => r.uri), ['mock://r/0', 'mock://r/1', 'mock://r/2']);
			assert.deepEqual((await wb.client.listResourceTemplates()).resourceTemplates, []);
			assert.equal((await rpcError(wb.client.readResource({ uri: 'mock://blob' }), 'filtered')).code, NOT_FOUND);
			assert.equal((await rpcError(wb.client.readResource({ uri: 'mock://item/1' }), 'filtered template')).code, NOT_FOUND);
			assert.equal((await rpcError(wb.client.getPrompt({ name: 'd__f__plain' }), 'filtered prompt')).code, -32602);
		});
	});

	test('subscriptions: updates only for subscribed URIs', T, async () => {
		const config = { toolboxes: { d: box({ s: res('S', '--resources', '2') }) } };
		await withWorkbench(config, {}, async (wb) => {
			const up = L.collectNotifications(wb.client, ResourceUpdatedNotificationSchema);
			await openOk(wb, 'd');
			await wb.client.subscribeResource({ uri: 'mock://r/0' });
			assertOk(await wb.useTool('d', 's', 'touch', { uri: 'mock://r/1' }));
			assertOk(await wb.useTool('d', 's', 'touch', { uri: 'mock://r/0' }));
			await up.waitCount(1);
			await wb.client.unsubscribeResource({ uri: 'mock://r/0' });
			assertOk(await wb.useTool('d', 's', 'touch', { uri: 'mock://r/0' }));
			await L.sleep(QUIET_MS);
			assert.deepEqual(up.list.map((n) => n.params.uri), ['mock://r/0']);
		});
	});

	test('raw: results byte for byte (blob, escapes, _meta) under the client\'s id; the server gets its own names', T, async () => {
		const config = { toolboxes: { d: box({ m: res('M', '--prompts', '--resources', '1') }) } };
		await withRaw(config, {}, async (raw) => {
			await rawOpen(raw);
			const { line } = await ask(raw, '{"jsonrpc":"2.0","id":"r\\u00e9","method":"resources/read","params":{"uri":"mock://blob"}}');
			const blob = Buffer.from([...Array(256).keys()]).toString('base64');
			assert.equal(line, `{"jsonrpc":"2.0","id":"r\\u00e9","result":{"contents":[{"uri":"mock://blob","mimeType":"application/octet-stream","blob":"${blob}"}],"_meta":{"x":"\\u00e9\\/\\n"}}}`);
			let r = await ask(raw, { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'd__m__greet', arguments: { name: 'Ann' }, _meta: { progressToken: 'tok' } } });
			assert.equal(r.json.result.messages[0].content.text, 'greet {"name":"Ann"}', r.line);
			r = await ask(raw, { jsonrpc: '2.0', id: 3, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'd__m__greet' }, argument: { name: 'name', value: 'A' } } });
			assert.deepEqual(r.json.result.completion.values, ['{"type":"ref/prompt","name":"greet"}', '{"name":"name","value":"A"}'], r.line);
			r = await ask(raw, { jsonrpc: '2.0', id: 4, method: 'completion/complete', params: { ref: { type: 'ref/resource', uri: 'mock://item/{id}' }, argument: { name: 'id', value: '1' } } });
			assert.equal(r.json.result.completion.values[0], '{"type":"ref/resource","uri":"mock://item/{id}"}', r.line);
		});
	});

	test('hostile requests: wrong types, NULs, huge and pathological URIs, unknown refs; the workbench lives', T, async () => {
		const config = { toolboxes: { d: box({ m: res('M', '--prompts', '--resources', '1') }) } };
		await withRaw(config, {}, async (raw) => {
			await rawOpen(raw);
			const cases = [
				[{ method: 'prompts/get', params: { name: 5 } }, -32602],
				[{ method: 'prompts/get', params: {} }, -32602],
				[{ method: 'prompts/get', params: { name: 'd__m__gr\u0000eet' } }, -32602],
				[{ method: 'prompts/get', params: { name: '____' } }, -32602],
				[{ method: 'resources/read', params: { uri: ['x'] } }, -32602],
				[{ method: 'resources/read' }, -32602],
				[{ method: 'resources/read', params: { uri: 'mock://blob\u0000' } }, -32602],
				[{ method: 'resources/read', params: { uri: 'mock://item/' + 'a/'.repeat(50000) } }, NOT_FOUND],
				// {id} is one or more characters, none of them / ? #.
				[{ method: 'resources/read', params: { uri: 'mock://item/a/b' } }, NOT_FOUND],
				[{ method: 'resources/read', params: { uri: 'mock://item/' } }, NOT_FOUND],
				[{ method: 'resources/read', params: { uri: 'mock://item/' + 'a'.repeat(8000) + '/' } }, NOT_FOUND],
				[{ method: 'resources/read', params: { uri: 'x'.repeat(200000) } }, NOT_FOUND],
				[{ method: 'resources/subscribe', params: { uri: 'nope://' } }, NOT_FOUND],
				[{ method: 'completion/complete', params: { ref: { type: 'ref/other' } } }, -32602],
				[{ method: 'completion/complete', params: { ref: { type: 'ref/resource', uri: 7 } } }, NOT_FOUND],
				[{ method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'd__m__nope' } } }, -32602],
			];
			let id = 100;
			for (const [msg, code] of cases) {
				const r = await ask(raw, { jsonrpc: '2.0', id: ++id, ...msg });
				assert.equal(r.json.id, id, r.line.slice(0, 300));
				assert.equal(r.json.error?.code, code, `${JSON.stringify(msg).slice(0, 200)} -> ${r.line.slice(0, 300)}`);
			}
			// A cursor we never gave is moot: everything, in one page.
			const r = await ask(raw, { jsonrpc: '2.0', id: 'c', method: 'resources/list', params: { cursor: '\u0000'.repeat(10) } });
			assert.equal(r.json.result.resources.length, 2);
			assert.equal((await ask(raw, { jsonrpc: '2.0', id: 'p', method: 'ping' })).json.id, 'p');
		});
	});
});
