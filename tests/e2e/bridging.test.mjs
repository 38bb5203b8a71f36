// The eras bridged, with the real SDKs: what a 2025 server is told when a
// 2026-07-28 client starts it, every result a modern client can get from
// the workbench checked by the v2 client's own schemas, a modern-only
// server slower to start than probeTimeoutMs, the era's _meta kept from
// 2025 servers, and a minted requestState that ends with its call.
//
// Clients: the SDK v2 client pinned to 2026-07-28 and in auto mode.
// Servers: server-everything (SDK 1.x, npm), the v2 server
// (tests/e2e/v2-server.mjs, modern only or dual), the fixture server
// (what a 2025 server receives), and the C mock for what the others
// cannot provoke (a server that exits on server/discover).

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as L from './lib.mjs';
import * as E from './eras-lib.mjs';

after(L.cleanup);

const T = { timeout: 60000 };

const CAPS = { elicitation: {}, sampling: {}, roots: {} };
const HANDLERS = {
	'elicitation/create': async () => ({ action: 'accept', content: { name: 'Ada', check: true } }),
	'sampling/createMessage': async () => ({ role: 'assistant', content: { type: 'text', text: 'sampled by the client' }, model: 'm' }),
	'roots/list': async () => ({ roots: [{ uri: 'file:///root-one', name: 'one' }] }),
};
const ERA_KEYS = ['protocolVersion', 'clientInfo', 'clientCapabilities', 'logLevel'].map((k) => `io.modelcontextprotocol/${k}`);

const one = (servers, extra = {}) => ({ ...extra, toolboxes: { box: { description: 'x', mcpServers: servers } } });

// A server started only once a file exists: slower to start than any
// probeTimeoutMs, for as long as the test wants (npx -y and uvx look so).
function gated(server, gate) {
	return { ...server, command: 'sh', args: ['-c', 'while [ ! -e "$0" ]; do sleep 0.02; done; exec "$@"', gate, server.command, ...server.args] };
}

// What the fixture server received, and its initialize among it.
async function received(wb, server) {
	return L.resultJson(await wb.useTool('box', server, 'received', {}));
}

async function initCaps(wb, server) {
	const init = (await received(wb, server)).find((m) => m.method === 'initialize');
	assert.ok(init, `${server} was initialized`);
	return init.params.capabilities;
}

// The v2 client's capabilities, as declared to a 2025 server.
function assertTold(caps, what) {
	assert.deepEqual(Object.keys(caps ?? {}).sort(), ['elicitation', 'roots', 'sampling'], `${what}: ${JSON.stringify(caps)}`);
}

// open_toolbox until the tool is listed: server-everything registers the
// tools that depend on the client's capabilities after initialize.
async function openUntil(wb, tool) {
	let names = [];
	return L.waitFor(async () => {
		names = L.openedTools(L.resultJson(await wb.openToolbox('box'))).map((t) => t.name);
		return names.includes(tool) ? names : null;
	}, 10000, `${tool} in open_toolbox (listed: ${names.join(' ')})`, 100);
}

describe('a 2025 server started for a 2026-07-28 client is told the capabilities of the request that started it', () => {
	for (const mode of ['pin', 'auto']) {
		test(`server-everything under "auto", v2 client ${mode}: the tools that need the capabilities are listed, and elicitation, sampling and roots complete (MRTR)`, T, async () => {
			const config = one({ ev: { ...L.everythingServer(), protocol: 'auto' } });
			await E.withV2(config, mode, { capabilities: CAPS, handlers: HANDLERS }, async (wb) => {
				const names = await openUntil(wb, 'trigger-elicitation-request');
				for (const n of ['trigger-sampling-request', 'get-roots-list'])
					assert.ok(names.includes(n), `${n} listed: ${names.join(' ')}`);
				let r = await wb.useTool('box', 'ev', 'trigger-elicitation-request', {});
				L.assertOk(r, 'elicitation');
				assert.match(r.content.map((c) => c.text).join('\n'), /User provided the requested information[\s\S]*Name: Ada/);
				r = await wb.useTool('box', 'ev', 'trigger-sampling-request', { prompt: 'hi', maxTokens: 5 });
				L.assertOk(r, 'sampling');
				assert.match(L.text(r), /sampled by the client/);
				r = await wb.useTool('box', 'ev', 'get-roots-list', {});
				L.assertOk(r, 'roots');
				assert.match(L.text(r), /file:\/\/\/root-one/);
			});
		});
	}

	test('every way to initialize: auto after server/discover, auto after probeTimeoutMs (a late error to discover), legacy, a restart after idleTimeoutMs, a restart after exiting on discover', T, async () => {
		const gate = path.join(L.makeTempDir('wb-gate-'), 'go');
		const config = one({
			auto: L.fixtureServer(),
			late: { ...gated(L.fixtureServer(), gate), probeTimeoutMs: 100 },
			legacy: { ...L.fixtureServer(), protocol: 'legacy', idleTimeoutMs: 300 },
			picky: L.mock('--discover', 'exit'),
		});
		await E.withV2(config, 'pin', { capabilities: CAPS }, async (wb) => {
			assertTold(await initCaps(wb, 'auto'), 'auto, after server/discover');
			assertTold(await initCaps(wb, 'legacy'), 'legacy');
			const late = wb.useTool('box', 'late', 'received', {});
			await wb.waitStderr(/box\/late: no answer to server\/discover in 100 ms/, 10000);
			fs.writeFileSync(gate, '');
			const got = L.resultJson(await late);
			assertTold(got.find((m) => m.method === 'initialize')?.params.capabilities, 'auto, after probeTimeoutMs');
			assert.ok(got.some((m) => m.method === 'server/discover'), 'the probe was sent too');
			await wb.waitStderr(/box\/legacy: stopped after 300 ms without traffic/, 10000);
			assertTold(await initCaps(wb, 'legacy'), 'legacy, started again after idleTimeoutMs');
			// Start lines are on stderr, which may come after an answer.
			const legacyStarts = () => (wb.stderr.match(/\[box\/legacy\] fixture-server: started/g) ?? []).length;
			await L.waitFor(() => legacyStarts() >= 2, 10000, 'the second start\'s line');
			assert.equal(legacyStarts(), 2, wb.stderr);
			const init = L.resultJson(await wb.useTool('box', 'picky', 'init_params', {}));
			assertTold(init.capabilities, 'auto, started again after exiting on server/discover');
			await wb.waitStderr(/box\/picky: .*after server\/discover; starting it again/, 10000);
			assert.doesNotMatch(wb.stderr, /box\/late: .*(failed|protocol error)/);
		});
	});
});

// What each kind of server offers for the v2 client to call: a tool, a
// resource template and a URI it matches, a completion of the template's
// variable, and a prompt (with a completion of one of its arguments); and
// the cache hints of its first resource as the client reads it.
const OFFERS = {
	'a 2025 server (server-everything)': {
		server: L.everythingServer(),
		hints: [0, 'private'],
		echo: ['echo', { message: 'hi' }, /hi/],
		template: ['demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/text/1', 'resourceId', '1', '1'],
		prompt: ['simple-prompt', {}, /simple prompt/i],
		promptCompletion: ['completable-prompt', 'department', 'Eng', 'Engineering'],
	},
	'a modern server (v2, modern only)': {
		server: E.v2Server('reject'),
		hints: [5000, 'public'],
		echo: ['echo', { message: 'hi' }, /^hi$/],
		template: ['v2://item/{id}', 'v2://item/alpha', 'id', 'a', 'alpha'],
		prompt: ['greet', undefined, /hello from v2/],
	},
	'a dual v2 server under "legacy"': {
		server: { ...E.v2Server('serve'), protocol: 'legacy' },
		hints: [0, 'private'],
		echo: ['echo', { message: 'hi' }, /^hi$/],
		template: ['v2://item/{id}', 'v2://item/beta', 'id', 'b', 'beta'],
		prompt: ['greet', undefined, /hello from v2/],
	},
};

function assertCacheable(r, what) {
	assert.ok(Number.isInteger(r.ttlMs) && r.ttlMs >= 0, `${what}: ttlMs ${JSON.stringify(r).slice(0, 300)}`);
	assert.ok(['public', 'private'].includes(r.cacheScope), `${what}: cacheScope ${r.cacheScope}`);
}

describe('every result a 2026-07-28 client can get passes the v2 client\'s own schemas', () => {
	for (const [kind, o] of Object.entries(OFFERS)) {
		test(`${kind}: discover, lists, resources/read (listed and templated), prompts/get, completion/complete, every meta-tool, in proxy and dynamic mode, subscriptions/listen`, T, async () => {
			await E.withV2(one({ s: o.server }, { searchTool: true }), 'pin', {}, async (wb) => {
				const c = wb.client;
				const d = await c.discover();
				assert.ok(d.supportedVersions.includes(E.MODERN), JSON.stringify(d));
				assert.deepEqual((await c.listTools()).tools.map((t) => t.name), ['open_toolbox', 'use_tool', 'search_tools']);
				assert.equal(L.resultJson(await wb.openToolbox('box')).servers_connected, 1);
				const found = await wb.callTool('search_tools', { query: o.echo[0] });
				L.assertOk(found, 'search_tools');
				assert.match(L.text(found), new RegExp(`"${o.echo[0]}"`));
				const [tool, args, want] = o.echo;
				assert.match(L.text(await wb.useTool('box', 's', tool, args)), want);
				assert.equal((await wb.useTool('box', 's', 'no_such_tool', {})).isError, true);

				const resources = await c.listResources();
				assertCacheable(resources, 'resources/list');
				assert.ok(resources.resources.length > 0, 'resources listed');
				const read = await c.readResource({ uri: resources.resources[0].uri });
				assertCacheable(read, 'resources/read');
				// A 2025 server's result is not to be kept; a modern one's hints pass.
				assert.deepEqual([read.ttlMs, read.cacheScope], o.hints);
				assert.equal(read.contents[0].uri, resources.resources[0].uri);
				const [template, uri, variable, typed, completed] = o.template;
				const templates = await c.listResourceTemplates();
				assertCacheable(templates, 'resources/templates/list');
				assert.ok(templates.resourceTemplates.some((t) => t.uriTemplate === template), JSON.stringify(templates).slice(0, 400));
				const templated = await c.readResource({ uri });
				assertCacheable(templated, 'resources/read of a templated URI');
				assert.equal(templated.contents[0].uri, uri);
				const values = await c.complete({ ref: { type: 'ref/resource', uri: template }, argument: { name: variable, value: typed } });
				assert.ok(values.completion.values.includes(completed), JSON.stringify(values));

				const prompts = await c.listPrompts();
				assertCacheable(prompts, 'prompts/list');
				const [prompt, pargs, ptext] = o.prompt;
				assert.ok(prompts.prompts.some((p) => p.name === `box__s__${prompt}`), JSON.stringify(prompts).slice(0, 400));
				const got = await c.getPrompt({ name: `box__s__${prompt}`, arguments: pargs });
				assert.match(got.messages[0].content.text, ptext);
				if (o.promptCompletion) {
					const [p, arg, value, want2] = o.promptCompletion;
					const r = await c.complete({ ref: { type: 'ref/prompt', name: `box__s__${p}` }, argument: { name: arg, value } });
					assert.ok(r.completion.values.includes(want2), JSON.stringify(r));
				}
			});
			// Declaring every capability, the client is listed every tool the server has.
			await E.withV2(one({ s: o.server }, { toolMode: 'dynamic' }), 'pin', { capabilities: CAPS, handlers: HANDLERS }, async (wb) => {
				const [tool, args, want] = o.echo;
				const changed = [];
				wb.client.setNotificationHandler('notifications/tools/list_changed', (n) => changed.push(n));
				const listen = await wb.client.listen({ toolsListChanged: true });
				assert.deepEqual(listen.honoredFilter, { toolsListChanged: true });
				// Stateless: the native name of a toolbox not open opens it.
				assert.match(L.text(await wb.callTool(`box__s__${tool}`, args)), want);
				await L.waitFor(() => changed.length > 0, 10000, 'tools/list_changed under the subscription');
				await listen.close();
				L.assertOk(await wb.openToolbox('box'), 'open_toolbox, dynamic mode');
				const names = (await wb.client.listTools()).tools.map((t) => t.name);
				assert.ok(names.includes(`box__s__${tool}`), names.join(' '));
				assert.ok(names.length > 3, names.join(' '));
				assert.match(L.text(await wb.useTool('box', 's', tool, args)), want);
			});
		});
	}
});

describe('a server slower to start than probeTimeoutMs, started by a 2026-07-28 client', () => {
	const cases = [
		['reject', 'pin', 'a modern-only server: its late server/discover answer counts and its -32022 to initialize makes it modern'],
		['reject', 'auto', 'a modern-only server, v2 client in auto mode'],
		['serve', 'pin', 'a dual server: it accepted initialize, so it is spoken to in the 2025 era'],
	];
	for (const [legacy, mode, what] of cases) {
		test(`${what}: one start, and every call works`, T, async () => {
			const gate = path.join(L.makeTempDir('wb-gate-'), 'go');
			const config = one({ v: { ...gated(E.v2Server(legacy), gate), probeTimeoutMs: 100 } });
			await E.withV2(config, mode, {}, async (wb) => {
				const opening = wb.openToolbox('box');
				await wb.waitStderr(/box\/v: no answer to server\/discover in 100 ms/, 10000);
				fs.writeFileSync(gate, '');
				const opened = L.resultJson(await opening);
				assert.equal(opened.servers_connected, 1, JSON.stringify(opened));
				assert.ok(L.openedTools(opened).some((t) => t.name === 'echo'), JSON.stringify(opened).slice(0, 300));
				for (const message of ['first', 'next']) {
					const r = await wb.useTool('box', 'v', 'echo', { message });
					L.assertOk(r, message);
					assert.equal(L.text(r), message);
				}
				assert.equal(wb.stderr.match(/\[box\/v\] v2-server: started/g).length, 1, wb.stderr);
				assert.doesNotMatch(wb.stderr, /failed|Unsupported protocol version/, wb.stderr);
				if (legacy === 'reject')
					await wb.waitStderr(/box\/v: refused initialize after its silence on server\/discover; speaking the 2026-07-28 era/, 10000);
				else
					assert.doesNotMatch(wb.stderr, /refused initialize/);
			});
		});
	}
});

describe('a 2025 server gets none of the era\'s _meta keys from a 2026-07-28 client', () => {
	const hasNoEraKeys = (meta, what) => {
		for (const k of ERA_KEYS)
			assert.ok(!(k in (meta ?? {})), `${what}: ${k} in ${JSON.stringify(meta)}`);
	};

	test('a dual v2 server under "legacy" sees the 2025 era; the fixture server\'s calls and prompts/get carry no era keys; a progressToken still passes', T, async () => {
		const config = one({ v: { ...E.v2Server('serve'), protocol: 'legacy' }, f: L.fixtureServer('--prompts') });
		await E.withV2(config, 'pin', { capabilities: CAPS }, async (wb) => {
			// The toolbox is not open: the call waits for its server's start.
			const seen = JSON.parse(L.text(await wb.useTool('box', 'v', 'meta', {})));
			assert.equal(seen.envelope, null, `the dual server served a 2026-07-28 request: ${JSON.stringify(seen)}`);
			hasNoEraKeys(seen.meta, 'dual server, tools/call');
			const progress = [];
			const wire = L.tapMessages(wb.client);
			const slow = await wb.useTool('box', 'v', 'slow', { ms: 50 }, { onprogress: (p) => progress.push(p.progress) });
			assert.equal(L.text(slow), 'done');
			L.assertWireProgress(wire, progress, [1, 2], 'progress under the token the dual server got');
			const meta = L.resultJson(await wb.useTool('box', 'f', 'meta', {}, { onprogress: () => {} }));
			hasNoEraKeys(meta, 'fixture server, tools/call');
			assert.equal(typeof meta.progressToken, 'number', JSON.stringify(meta));
			const prompt = await wb.client.getPrompt({ name: 'box__f__meta' });
			hasNoEraKeys(JSON.parse(prompt.messages[0].content.text), 'fixture server, prompts/get');
		});
	});
});

describe('a minted requestState ends with its call', () => {
	// Hand-written modern requests: the v2 client never sends a state twice.
	const meta = { ...E.META, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } };
	const use = (id, name, args, extra = {}) => E.modern(id, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'box', server: 'f', name }, arguments: args }, ...extra }, meta);
	const ROOTS = { roots: [{ uri: 'file:///r' }] };
	const UNKNOWN = /unknown requestState \(not issued by mcp-workbench, used already, or expired\)/;

	// The call's first answer: its questions and the state to retry with.
	async function parked(raw, id, name, args) {
		const r = (await raw.request(use(id, name, args), 10000)).json.result;
		assert.equal(r?.resultType, 'input_required', JSON.stringify(r));
		return { state: r.requestState, key: Object.keys(r.inputRequests)[0] };
	}

	// A retry with a state whose call is over: refused, and nothing else said.
	async function refused(raw, id, name, args, p) {
		const r = (await raw.request(use(id, name, args, { requestState: p.state, inputResponses: { [p.key]: ROOTS } }))).json;
		assert.equal(r.id, id);
		assert.equal(r.error?.code, -32602, JSON.stringify(r));
		assert.match(r.error.message, UNKNOWN);
		await raw.expectSilence(200);
	}

	const ask = { method: 'roots/list' };

	test('completed after its retry, answered by its server while it waited, failed with its server: a retry with its state is refused each time', T, async () => {
		await L.withRaw(one({ f: L.fixtureServer() }), {}, async (raw) => {
			// Completed: the retry took the call over and got its result.
			let p = await parked(raw, 1, 'ask', ask);
			let r = (await raw.request(use(2, 'ask', ask, { requestState: p.state, inputResponses: { [p.key]: ROOTS } }))).json;
			assert.match(r.result?.content?.[0]?.text, /file:\/\/\/r/, JSON.stringify(r));
			await refused(raw, 3, 'ask', ask, p);

			// Answered by its server while parked (in the write that asked):
			// the first retry gets that answer, the next is refused.
			p = await parked(raw, 4, 'ask_and_answer', ask);
			r = (await raw.request(use(5, 'ask_and_answer', ask, { requestState: p.state, inputResponses: { [p.key]: ROOTS } }))).json;
			assert.equal(r.result?.resultType, 'complete', JSON.stringify(r));
			assert.match(r.result.content[0].text, /^gave up on fx-/);
			await refused(raw, 6, 'ask_and_answer', ask, p);

			// Failed with its server: the retry is told why, the next is refused.
			p = await parked(raw, 7, 'ask', ask);
			r = (await raw.request(use(8, 'crash', {}))).json;
			assert.equal(r.result?.isError, true, JSON.stringify(r));
			r = (await raw.request(use(9, 'ask', ask, { requestState: p.state, inputResponses: { [p.key]: ROOTS } }))).json;
			assert.equal(r.result?.isError, true, JSON.stringify(r));
			assert.match(r.result.content[0].text, /exited with status 5/);
			await refused(raw, 10, 'ask', ask, p);
		});
	});

	test('expired: the call is cancelled on its server, and its state is gone with it', T, async () => {
		await L.withRaw(one({ f: L.fixtureServer() }, { requestStateTtlMs: 300 }), {}, async (raw) => {
			const p = await parked(raw, 1, 'ask', ask);
			await L.waitFor(async () => {
				const got = L.resultJson((await raw.request(use(2, 'received', {}))).json.result);
				return got.some((m) => m.method === 'notifications/cancelled');
			}, 10000, 'the expired call cancelled on its server', 100);
			await refused(raw, 3, 'ask', ask, p);
		});
	});
});
