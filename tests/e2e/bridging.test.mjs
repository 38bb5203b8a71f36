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
		names = L.resultJson(await wb.openToolbox('box')).tools.map((t) => t.name);
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
			assert.equal(wb.stderr.match(/\[box\/legacy\] fixture-server: started/g).length, 2, wb.stderr);
			const init = L.resultJson(await wb.useTool('box', 'picky', 'init_params', {}));
			assertTold(init.capabilities, 'auto, started again after exiting on server/discover');
			assert.match(wb.stderr, /box\/picky: .*after server\/discover; starting it again/);
			assert.doesNotMatch(wb.stderr, /box\/late: .*(failed|protocol error)/);
		});
	});
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
				assert.ok(opened.tools.some((t) => t.name === 'echo'), JSON.stringify(opened).slice(0, 300));
				for (const message of ['first', 'next']) {
					const r = await wb.useTool('box', 'v', 'echo', { message });
					L.assertOk(r, message);
					assert.equal(L.text(r), message);
				}
				assert.equal(wb.stderr.match(/\[box\/v\] v2-server: started/g).length, 1, wb.stderr);
				assert.doesNotMatch(wb.stderr, /failed|Unsupported protocol version/, wb.stderr);
				if (legacy === 'reject')
					assert.match(wb.stderr, /box\/v: refused initialize after its silence on server\/discover; speaking the 2026-07-28 era/);
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
			const slow = await wb.useTool('box', 'v', 'slow', { ms: 50 }, { onprogress: (p) => progress.push(p.progress) });
			assert.equal(L.text(slow), 'done');
			assert.deepEqual(progress, [1, 2], 'progress under the token the dual server got');
			const meta = L.resultJson(await wb.useTool('box', 'f', 'meta', {}, { onprogress: () => {} }));
			hasNoEraKeys(meta, 'fixture server, tools/call');
			assert.equal(typeof meta.progressToken, 'number', JSON.stringify(meta));
			const prompt = await wb.client.getPrompt({ name: 'box__f__meta' });
			hasNoEraKeys(JSON.parse(prompt.messages[0].content.text), 'fixture server, prompts/get');
		});
	});
});
