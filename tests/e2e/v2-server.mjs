// An SDK v2 server for the era tests: `v2-server.mjs reject` serves only
// 2026-07-28 (serveStdio legacy: 'reject'), `v2-server.mjs serve` both eras.
// Tools: echo, structured, fail, rpc_error, meta (the _meta and era envelope
// it got), slow
// (progress, then a wait that cancellation ends, said on stderr), and
// ask_elicit / ask_sample / ask_roots, which need input (MRTR); a prompt,
// greet; a resource, v2://note (cached 5 s, public), and a template,
// v2://item/{id}, whose id completes to alpha or beta.

import { McpServer, ResourceTemplate, inputRequired, inputResponse, fromJsonSchema, ProtocolError } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const legacy = process.argv[2] === 'serve' ? 'serve' : 'reject';
const obj = (props = {}) => fromJsonSchema({ type: 'object', properties: props });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

process.stderr.write(`v2-server: started pid=${process.pid} legacy=${legacy}\n`);

serveStdio(() => {
	const s = new McpServer({ name: 'v2-server', version: '2.0.0' }, { capabilities: { tools: { listChanged: true }, prompts: { listChanged: true } } });
	s.registerTool('echo', { description: 'Echoes message.', inputSchema: obj({ message: { type: 'string' } }) },
	    async (a) => text(a.message));
	s.registerTool('structured', { description: 'Structured.', inputSchema: obj() },
	    async () => ({ ...text('{"answer":42}'), structuredContent: { answer: 42 } }));
	s.registerTool('fail', { description: 'Fails.', inputSchema: obj() },
	    async () => ({ ...text('it failed'), isError: true }));
	s.registerTool('rpc_error', { description: 'JSON-RPC error.', inputSchema: obj() },
	    async () => {
		    throw new ProtocolError(-32000, 'rpc error from v2');
	    });
	s.registerTool('meta', { description: 'Its _meta and the era envelope the SDK read from it.', inputSchema: obj() },
	    async (a, ctx) => text(JSON.stringify({ meta: ctx.mcpReq?._meta ?? null, envelope: ctx.mcpReq?.envelope ?? null })));
	s.registerTool('slow', { description: 'Reports progress twice, then waits ms or until cancelled.', inputSchema: obj({ ms: { type: 'number' } }) },
	    async (a, ctx) => {
		    const token = ctx.mcpReq._meta?.progressToken;
		    for (let i = 1; token !== undefined && i <= 2; i++)
			    await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i } });
		    await new Promise((resolve) => {
			    const t = setTimeout(resolve, a.ms ?? 50);
			    ctx.mcpReq.signal.addEventListener('abort', () => {
				    clearTimeout(t);
				    process.stderr.write('v2-server: cancelled\n');
				    resolve();
			    });
		    });
		    return text(ctx.mcpReq.signal.aborted ? 'cancelled' : 'done');
	    });
	s.registerPrompt('greet', { description: 'A greeting.' },
	    async () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'hello from v2' } }] }));
	s.registerResource('note', 'v2://note', { description: 'A note.', mimeType: 'text/plain', cacheHint: { ttlMs: 5000, cacheScope: 'public' } },
	    async (uri) => ({ contents: [{ uri: uri.href, text: 'a note from v2' }] }));
	s.registerResource('item', new ResourceTemplate('v2://item/{id}', { list: undefined,
	    complete: { id: (v) => ['alpha', 'beta'].filter((x) => x.startsWith(v)) } }),
	{ description: 'An item.', mimeType: 'text/plain' },
	async (uri, vars) => ({ contents: [{ uri: uri.href, text: `item ${vars.id}` }] }));
	const ask = (key, build, show) => async (a, ctx) => {
		const r = inputResponse(ctx.mcpReq.inputResponses, key);
		if (r.kind === 'missing')
			return inputRequired({ inputRequests: { [key]: build() }, requestState: `v2-state-${key}` });
		return text(show(r));
	};
	s.registerTool('ask_elicit', { description: 'Elicits.', inputSchema: obj() },
	    ask('confirm', () => inputRequired.elicit({ message: 'Proceed?',
		requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }),
	    (r) => `elicit ${r.action} ${JSON.stringify(r.content ?? null)}`));
	s.registerTool('ask_sample', { description: 'Samples.', inputSchema: obj() },
	    ask('llm', () => inputRequired.createMessage({ messages: [{ role: 'user',
		content: { type: 'text', text: 'hello?' } }], maxTokens: 10 }),
	    (r) => `sample ${r.kind === 'sampling' ? r.result.content.text : r.kind}`));
	s.registerTool('ask_roots', { description: 'Lists roots.', inputSchema: obj() },
	    ask('roots', () => inputRequired.listRoots(),
	    (r) => `roots ${r.kind === 'roots' ? r.roots.map((x) => x.uri).join(',') : r.kind}`));
	return s;
}, { legacy });
