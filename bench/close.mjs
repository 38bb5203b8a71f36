// bench/close.mjs: the official SDK client's close() (stdin closed, then
// the wait for the process to end), as a client measures a session's end:
// through the workbench with 4 servers of a toolbox open, and directly
// against one of those servers.  Used by bench/run.sh when the test
// suite's node_modules are there.
//
// usage: node bench/close.mjs WORKBENCH RUNS -- SERVER [ARG ...]
// Prints: BENCH close direct=MS workbench=MS (medians, in ms).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, '..', 'tests', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const { Client } = await import(path.join(sdk, 'client', 'index.js'));
const { StdioClientTransport } = await import(path.join(sdk, 'client', 'stdio.js'));

const [wb, runsArg, sep, command, ...args] = process.argv.slice(2);
if (sep !== '--' || command === undefined) {
	console.error('usage: node bench/close.mjs WORKBENCH RUNS -- SERVER [ARG ...]');
	process.exit(2);
}
const runs = Number(runsArg);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-close-'));
const config = path.join(dir, 'c.json');
const servers = {};
for (let i = 0; i < 4; i++)
	servers[`s${i}`] = { command, args };
fs.writeFileSync(config, JSON.stringify({ cache: false, toolboxes: { b: { description: 'close', mcpServers: servers } } }));

async function once(params, open) {
	const client = new Client({ name: 'bench-close', version: '1' });
	await client.connect(new StdioClientTransport({ ...params, stderr: 'ignore' }));
	await open(client);
	const t0 = performance.now();
	await client.close();
	return performance.now() - t0;
}

function median(a) {
	a.sort((x, y) => x - y);
	return a[a.length >> 1];
}

const direct = [];
const through = [];
for (let r = 0; r < runs; r++) {
	direct.push(await once({ command, args }, (c) => c.listTools()));
	through.push(await once({ command: wb, args: ['-c', config] },
	    (c) => c.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'b' } })));
}
fs.rmSync(dir, { recursive: true, force: true });
console.log(`BENCH close direct=${median(direct).toFixed(3)} workbench=${median(through).toFixed(3)}`);
