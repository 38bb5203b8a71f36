// What the remote tests share (remote.test.mjs, remote-members.test.mjs,
// remote-relay.test.mjs): the SDK 1.x fixture server remote-server.mjs
// started on a port of its own, a toolbox of remote members, and
// certificates for its --tls mode.

import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import assert from 'node:assert/strict';
import * as L from './lib.mjs';

const SERVER = path.join(L.E2E_DIR, 'remote-server.mjs');
const running = new Set();

// A fixture server (remote-server.mjs args; "--tls PEM KEY" for https):
// { port, proc, url(path, host), stats(), forget(), stop() }.
export async function startServer(...args) {
	const proc = spawn(L.NODE, [SERVER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
	running.add(proc);
	const port = await L.listeningPort(proc, 10000 * L.SLOW, 'remote-server');
	const tls = args.includes('--tls');
	const admin = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
	return {
		port, proc,
		url: (p, host = '127.0.0.1') => `${tls ? 'https' : 'http'}://${host}:${port}${p}`,
		stats: async () => (tls ? adminTls(port) : (await fetch(`${admin}/admin/stats`)).json()),
		forget: async () => fetch(`${admin}/admin/forget`),
		stop: async () => {
			const gone = L.exitOf(proc);
			proc.kill('SIGKILL');
			running.delete(proc);
			await gone;
		},
	};
}

// Every fixture server still running, killed (a suite's after()).
export function stopServers() {
	for (const p of running)
		p.kill('SIGKILL');
	running.clear();
}

// The TLS fixture's stats, with node's https, its certificate not
// checked (the test's own request, not the workbench's).
async function adminTls(port) {
	const https = await import('node:https');
	return new Promise((resolve, reject) => {
		https.get({ host: '127.0.0.1', port, path: '/admin/stats', rejectUnauthorized: false }, (res) => {
			let b = '';
			res.on('data', (d) => { b += d; });
			res.on('end', () => resolve(JSON.parse(b)));
		}).on('error', reject);
	});
}

// A configuration of one toolbox, web, of the remote members given.
export function box(members, extra = {}) {
	return { toolboxes: { web: { description: 'remote servers', mcpServers: members } }, ...extra };
}

export const haveOpenssl = spawnSync('openssl', ['version']).status === 0;

// A self-signed certificate for the name cn in dir: [pem, key] paths.
export function cert(dir, name, cn) {
	const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
	    '-keyout', path.join(dir, `${name}.key`), '-out', path.join(dir, `${name}.pem`),
	    '-subj', `/CN=${cn}`, '-addext', `subjectAltName=DNS:${cn}`], { encoding: 'utf8' });
	assert.equal(r.status, 0, r.stderr);
	return [path.join(dir, `${name}.pem`), path.join(dir, `${name}.key`)];
}
