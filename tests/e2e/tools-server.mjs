#!/usr/bin/env node
// A stdio MCP server (2025 era, one JSON-RPC message per line, no SDK)
// that lists the tools of a JSON file, for the tests of what a model
// reads (lean.test.mjs): tools whose every member is chosen by the test.
//
// usage: tools-server.mjs TOOLS.json
//
// tools/list answers the file's array; tools/call of a listed tool
// answers the text "NAME ARGUMENTS-AS-JSON".
import fs from 'node:fs';
import readline from 'node:readline';

const tools = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
process.stderr.write(`tools-server: started pid=${process.pid}\n`);

function send(msg) {
	process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
}

function answer(m) {
	switch (m.method) {
	case 'initialize':
		return { protocolVersion: m.params?.protocolVersion ?? '2025-06-18',
		    capabilities: { tools: {} }, serverInfo: { name: 'tools-server', version: '1.0.0' } };
	case 'ping':
		return {};
	case 'tools/list':
		return { tools };
	case 'tools/call': {
		const name = m.params?.name;
		if (!tools.some((t) => t.name === name))
			return { content: [{ type: 'text', text: `no tool ${name}` }], isError: true };
		return { content: [{ type: 'text', text: `${name} ${JSON.stringify(m.params?.arguments ?? {})}` }] };
	}
	default:
		return null;
	}
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
	let m;
	try {
		m = JSON.parse(line);
	} catch {
		return;
	}
	if (m.id === undefined)
		return;
	const result = answer(m);
	if (result === null)
		send({ id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
	else
		send({ id: m.id, result });
});
