// Helpers for the protocol-era suites: SDK v2 clients (pinned to
// 2026-07-28, or 'auto') and SDK v2 servers (modern only, or dual).

import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import * as L from './lib.mjs';

export const MODERN = '2026-07-28';
export const META = {
	'io.modelcontextprotocol/protocolVersion': MODERN,
	'io.modelcontextprotocol/clientCapabilities': {},
};

// A v2 server (tests/e2e/v2-server.mjs): 'reject' is modern only, 'serve'
// serves both eras.
export function v2Server(legacy = 'reject', ...args) {
	return { command: L.NODE, args: [path.join(L.E2E_DIR, 'v2-server.mjs'), legacy, ...args] };
}

// A v2 client on the workbench: mode 'pin' (2026-07-28 only) or 'auto'.
export async function startV2(config, mode, opts = {}) {
	const configPath = typeof config === 'string' ? config : L.writeConfig(config);
	const transport = new StdioClientTransport({
		command: L.WORKBENCH,
		args: ['-c', configPath, ...(opts.args ?? [])],
		env: { XDG_CACHE_HOME: L.makeTempDir('wb-cache-'), ...opts.env },
		stderr: 'pipe',
	});
	let stderr = '';
	transport.stderr?.on('data', (d) => {
		stderr += d.toString();
	});
	const client = new Client({ name: 'wb-e2e-v2', version: '2.0.0' }, {
		versionNegotiation: { mode: mode === 'pin' ? { pin: MODERN } : mode },
		capabilities: opts.capabilities ?? {},
		...(opts.clientOptions ?? {}),
	});
	for (const [method, fn] of Object.entries(opts.handlers ?? {}))
		client.setRequestHandler(method, fn);
	try {
		await L.withTimeout(client.connect(transport), 10000 * L.SLOW, 'v2 connect');
	} catch (e) {
		e.message += `\nworkbench stderr:\n${stderr}`;
		await transport.close().catch(() => {});
		throw e;
	}
	return {
		client,
		get stderr() {
			return stderr;
		},
		async waitStderr(re, ms = 5000 * L.SLOW) {
			return L.waitFor(() => re.test(stderr), ms, `stderr matching ${re}\nstderr so far:\n${stderr}`);
		},
		callTool(name, args, options) {
			return client.callTool({ name, arguments: args }, options);
		},
		openToolbox(name) {
			return client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: name } });
		},
		useTool(toolbox, server, name, args, options) {
			const a = { tool: { toolbox, server, name } };
			if (args !== undefined)
				a.arguments = args;
			return client.callTool({ name: 'use_tool', arguments: a }, options);
		},
		async close() {
			await L.withTimeout(client.close(), 6000 * L.SLOW, 'v2 close').catch(() => {});
		},
	};
}

export async function withV2(config, mode, opts, fn) {
	const wb = await startV2(config, mode, opts);
	try {
		return await fn(wb);
	} finally {
		await wb.close();
	}
}

// A raw modern request line.
export function modern(id, method, params = {}, meta = META) {
	return { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
}
