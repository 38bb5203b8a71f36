// Beyond one machine (issue 40): two workbenches behind nginx with the
// recipe of example/nginx-two-workbenches.conf, as written but for its
// ports.  A 2025 SDK client's session stays on one backend (its
// Mcp-Session-Id); a v2 client pinned to 2026-07-28 is served by either,
// and with "openOnUse": true neither opens a toolbox first.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as L from './lib.mjs';
import * as H from './http-lib.mjs';

after(() => L.cleanup());

const NGINX = ['nginx', '/usr/sbin/nginx'].find((b) => spawnSync(b, ['-v']).error === undefined);
const T = { timeout: 120000, skip: NGINX ? false : 'needs nginx' };
const RECIPE = fs.readFileSync(path.join(L.REPO_DIR, 'example', 'nginx-two-workbenches.conf'), 'utf8');
const CONFIG = { openOnUse: true, toolboxes: { fx: { description: 'fixture', mcpServers: { f: L.fixtureServer() } } } };

describe('http: two workbenches behind nginx', () => {
	test('a 2025 session stays on one backend; 2026-07-28 calls go to either; no open_toolbox first', T, async () => {
		const dir = L.makeTempDir('wb-balance-');
		const [front, p1, p2] = [await H.freePort(), await H.freePort(), await H.freePort()];
		const a = await H.startListener(CONFIG, { listen: `127.0.0.1:${p1}` });
		const b = await H.startListener(CONFIG, { listen: `127.0.0.1:${p2}` });
		const recipe = RECIPE.replace('127.0.0.1:8930', `127.0.0.1:${front}`)
		    .replace('127.0.0.1:8931', `127.0.0.1:${p1}`).replace('127.0.0.1:8932', `127.0.0.1:${p2}`);
		assert.match(recipe, /hash \$http_mcp_session_id consistent;/);
		fs.writeFileSync(path.join(dir, 'nginx.conf'), `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
    access_log ${dir}/access.log;
    client_body_temp_path ${dir}/body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
${recipe}
}
`);
		const ng = await H.startProxy(NGINX, ['-p', dir, '-e', `${dir}/error.log`, '-c', path.join(dir, 'nginx.conf')], front);
		const url = `http://127.0.0.1:${front}/mcp`;
		try {
			const old = await H.client1(url);
			const modern = await H.client2(url, 'pin');
			try {
				for (let i = 0; i < 4; i++) {
					const r = await old.useTool('fx', 'f', 'wait', { ms: i });
					assert.equal(r.isError ?? false, false, L.resultText(r));
					const m = await modern.useTool('fx', 'f', 'wait', { ms: 10 + i });
					assert.equal(m.isError ?? false, false, L.resultText(m));
				}
				assert.match(old.sessionId, /^[0-9a-f]{32}$/);
				// Both served: each started its fixture server on a call.
				assert.ok(a.starts() >= 1 && b.starts() >= 1,
				    `both backends served calls (starts ${a.starts()}, ${b.starts()})\n${fs.readFileSync(path.join(dir, 'access.log'), 'utf8')}`);
			} finally {
				await old.close();
				await modern.close();
			}
		} finally {
			ng.stop();
			await a.stop();
			await b.stop();
		}
	});
});
