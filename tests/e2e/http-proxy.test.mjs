// The manual's TLS proxy examples, as written (issue 38 item 13): stunnel
// (which passes the client's Host through, so the name must be in
// allowedHosts) and nginx (which sets Host to the listener), each in front
// of a loopback listener, driven over HTTPS by a client that names
// mcp.example.com.  Only the ports, the certificate's path and, for the
// test, a loopback accept address are changed; nginx's location block goes
// into a minimal server block of its own.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import * as L from './lib.mjs';
import * as H from './http-lib.mjs';

after(() => L.cleanup());

const STUNNEL = ['stunnel4', 'stunnel'].find((b) => spawnSync(b, ['-version']).error === undefined);
const NGINX = ['nginx', '/usr/sbin/nginx'].find((b) => spawnSync(b, ['-v']).error === undefined);
const OPENSSL = spawnSync('openssl', ['version']).status === 0;
const T = { timeout: 120000 };
const TOKEN = 'proxy-token-0123456789abcdef';
const NAME = 'mcp.example.com';
const FIXTURE = { fx: { description: 'fixture', mcpServers: { f: L.fixtureServer() } } };

const PAGE = fs.readFileSync(path.join(L.REPO_DIR, 'man', 'mcp-workbench.1'), 'utf8');

// The display that follows the line holding marker, as text.
function display(marker) {
	const at = PAGE.indexOf(marker);
	assert.ok(at >= 0, `the manual has ${marker}`);
	const start = PAGE.indexOf('.Bd -literal -offset indent\n', at) + 28;
	return PAGE.slice(start, PAGE.indexOf('.Ed\n', start)).replaceAll('\\e', '\\');
}

// The manual's configuration for a proxy, its toolboxes ours.
function proxyConfig() {
	const text = display('so that streams flow').replace('"toolboxes": { ... }', `"toolboxes": ${JSON.stringify(FIXTURE)}`);
	const config = JSON.parse(text);
	assert.ok(config.allowedHosts.includes(NAME), 'the example allows the name of its proxy');
	return config;
}

function certificate(dir) {
	execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'),
		'-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', `/CN=${NAME}`, '-addext', `subjectAltName=DNS:${NAME}`], { stdio: 'ignore' });
	fs.writeFileSync(path.join(dir, 'mcp.pem'), fs.readFileSync(path.join(dir, 'key.pem'), 'utf8') + fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8'));
	return fs.readFileSync(path.join(dir, 'cert.pem'));
}

// A request over TLS to the proxy at port, for mcp.example.com.
function request(port, ca, method, headers, body) {
	return new Promise((resolve, reject) => {
		const req = https.request({ host: '127.0.0.1', port, servername: NAME, ca, method, path: '/mcp',
			headers: { host: `${NAME}:${port}`, authorization: `Bearer ${TOKEN}`, ...headers } }, (res) => {
			let text = '';
			res.on('data', (d) => { text += d; });
			res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
		});
		req.on('error', reject);
		req.end(body);
	});
}

// initialize, open_toolbox, a call and DELETE through the proxy.
async function session(port, ca) {
	const json = { 'content-type': 'application/json', accept: 'application/json' };
	const init = await request(port, ca, 'POST', json, H.rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tls', version: '1' } }));
	if (init.status !== 200)
		return init;
	const hs = { ...json, 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
	assert.equal((await request(port, ca, 'POST', hs, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status, 202);
	const opened = await request(port, ca, 'POST', hs, H.rpc(2, 'tools/call', { name: 'open_toolbox', arguments: { toolbox_name: 'fx' } }));
	assert.equal(opened.status, 200, opened.text);
	const called = await request(port, ca, 'POST', hs, H.rpc(3, 'tools/call', { name: 'use_tool', arguments: { tool: { toolbox: 'fx', server: 'f', name: 'wait' }, arguments: { ms: 1 } } }));
	assert.equal(L.resultText(JSON.parse(called.text).result), 'waited 1');
	assert.equal((await request(port, ca, 'DELETE', { 'mcp-session-id': hs['mcp-session-id'] })).status, 200);
	return init;
}

describe('http: behind the manual\'s TLS proxies', () => {
	test('stunnel, as written: the client\'s Host passes through, allowedHosts lets it in (403 without it)', { ...T, skip: STUNNEL && OPENSSL ? false : 'needs stunnel4 and openssl' }, async () => {
		const dir = L.makeTempDir('wb-stunnel-');
		const ca = certificate(dir);
		const config = proxyConfig();
		for (const allowed of [true, false]) {
			const c = { ...config };
			if (!allowed)
				delete c.allowedHosts;
			await H.withListener(c, { env: { MCP_WORKBENCH_TOKEN: TOKEN } }, async (wb) => {
				const port = await H.freePort();
				const conf = display('stunnel does the same')
					.replace(/^accept = \d+$/m, `accept = 127.0.0.1:${port}`)
					.replace(/^connect = 127\.0\.0\.1:8931$/m, `connect = 127.0.0.1:${wb.port}`)
					.replace(/^cert = .*$/m, `cert = ${path.join(dir, 'mcp.pem')}`);
				assert.match(conf, new RegExp(`accept = 127.0.0.1:${port}\\nconnect = 127.0.0.1:${wb.port}\\n`));
				fs.writeFileSync(path.join(dir, 'mcp.conf'), `foreground = yes\npid =\n${conf}`);
				const st = await H.startProxy(STUNNEL, [path.join(dir, 'mcp.conf')], port);
				try {
					const init = await session(port, ca);
					assert.equal(init.status, allowed ? 200 : 403, init.text);
				} finally {
					st.stop();
				}
			});
		}
	});

	test('nginx, as written: initialize, open_toolbox, a call and DELETE over TLS', { ...T, skip: NGINX && OPENSSL ? false : 'needs nginx and openssl' }, async () => {
		const dir = L.makeTempDir('wb-nginx-');
		const ca = certificate(dir);
		await H.withListener(proxyConfig(), { env: { MCP_WORKBENCH_TOKEN: TOKEN } }, async (wb) => {
			const port = await H.freePort();
			const location = display('\nnginx:\n').replaceAll('127.0.0.1:8931', `127.0.0.1:${wb.port}`);
			assert.match(location, /proxy_buffering off;/);
			fs.writeFileSync(path.join(dir, 'nginx.conf'), `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path ${dir}/body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    server {
        listen 127.0.0.1:${port} ssl;
        server_name ${NAME};
        ssl_certificate ${dir}/cert.pem;
        ssl_certificate_key ${dir}/key.pem;
${location}    }
}
`);
			const ng = await H.startProxy(NGINX, ['-p', dir, '-e', `${dir}/error.log`, '-c', path.join(dir, 'nginx.conf')], port);
			try {
				const init = await session(port, ca);
				assert.equal(init.status, 200, `${init.text}\n${ng.stderr}`);
				assert.match(init.headers['mcp-session-id'], /^[0-9a-f]{32}$/);
			} finally {
				ng.stop();
			}
		});
	});
});
