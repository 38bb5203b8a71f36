// A browser page as an MCP client (issue 38 item 12): headless Chromium
// loads a page from an origin in allowedOrigins that initializes, opens a
// toolbox and calls a tool with fetch (the CORS preflight answered without
// the token, the session id read from an exposed field); a page from
// another origin cannot.  Both names resolve to 127.0.0.1 inside the
// browser (--host-resolver-rules): no network but loopback.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import * as L from './lib.mjs';
import * as H from './http-lib.mjs';

after(() => L.cleanup());

const CHROMIUM = process.env.CHROMIUM ?? 'chromium';
const HAVE = spawnSync(CHROMIUM, ['--version']).status === 0;
const T = { timeout: 120000, skip: HAVE ? false : 'needs chromium (Debian: apt-get install chromium)' };
const TOKEN = 'browser-token-0123456789abcdef';

// The page: every step with fetch, then what it saw, POSTed to its own
// origin's /report (same origin: no CORS needed there).
const PAGE = `<!doctype html><html><body><script>
const q = new URLSearchParams(location.search);
const url = q.get('wb');
const report = (r) => fetch('/report', { method: 'POST', body: JSON.stringify(r) });
const rpc = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
(async () => {
	try {
		const h = { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: 'Bearer ' + q.get('token') };
		let r = await fetch(url, { method: 'POST', headers: h, body: rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } }) });
		const init = await r.json();
		const sid = r.headers.get('Mcp-Session-Id');
		const hs = { ...h, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' };
		await fetch(url, { method: 'POST', headers: hs, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
		r = await fetch(url, { method: 'POST', headers: hs, body: rpc(2, 'tools/call', { name: 'open_toolbox', arguments: { toolbox_name: 'fx' } }) });
		const opened = await r.json();
		r = await fetch(url, { method: 'POST', headers: hs, body: rpc(3, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'fx', server: 'f', name: 'wait' }, arguments: { ms: 1 } } }) });
		const called = await r.json();
		const del = await fetch(url, { method: 'DELETE', headers: hs });
		report({ ok: true, server: init.result.serverInfo.name, sid, opened: opened.result?.isError !== true, text: called.result.content[0].text, del: del.status });
	} catch (e) {
		report({ ok: false, error: String(e) });
	}
})();
</script></body></html>`;

// Serve the page; report() resolves with what the next page reported.
function pageServer() {
	let waiter = null;
	const srv = http.createServer((req, res) => {
		if (req.method === 'POST' && req.url === '/report') {
			let body = '';
			req.on('data', (d) => { body += d; });
			req.on('end', () => { res.end(); waiter?.(JSON.parse(body)); });
			return;
		}
		res.setHeader('content-type', 'text/html');
		res.end(PAGE);
	});
	return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve({
		port: srv.address().port,
		report: () => new Promise((r) => { waiter = r; }),
		close: () => srv.close(),
	})));
}

// Load url in headless Chromium until the page reports; then it goes.
async function visit(pages, url) {
	const reported = pages.report();
	const dir = L.makeTempDir('wb-chromium-');
	const chr = spawn(CHROMIUM, ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
		'--no-first-run', `--user-data-dir=${dir}`, '--host-resolver-rules=MAP app.test 127.0.0.1, MAP evil.test 127.0.0.1', url],
	{ stdio: 'ignore', detached: true });
	try {
		return await L.withTimeout(reported, 60000, `the page at ${url} reporting`);
	} finally {
		try {
			process.kill(-chr.pid, 'SIGKILL');
		} catch {}
	}
}

describe('http: a browser page', () => {
	test('from an allowed origin: initializes, opens a toolbox and calls a tool with fetch; from another origin it cannot', T, async () => {
		const pages = await pageServer();
		try {
			const app = `http://app.test:${pages.port}`;
			const config = { toolboxes: { fx: { description: 'fixture', mcpServers: { f: L.fixtureServer() } } }, allowedOrigins: [app], httpToken: TOKEN };
			await H.withListener(config, {}, async (wb) => {
				const q = `?wb=${encodeURIComponent(wb.url)}&token=${TOKEN}`;
				const ok = await visit(pages, `${app}/page.html${q}`);
				assert.deepEqual({ ...ok, sid: typeof ok.sid }, { ok: true, server: 'mcp-workbench', sid: 'string', opened: true, text: 'waited 1', del: 200 }, JSON.stringify(ok));
				assert.match(ok.sid, /^[0-9a-f]{32}$/);
				const evil = await visit(pages, `http://evil.test:${pages.port}/page.html${q}`);
				assert.equal(evil.ok, false, JSON.stringify(evil));
				assert.match(evil.error, /TypeError|Failed to fetch/);
			});
		} finally {
			pages.close();
		}
	});
});
