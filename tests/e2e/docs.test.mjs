// Issue 40: the README, the manual pages and --help stay honest.  Every
// option --help lists is described in mcp-workbench(1); every key the
// configuration reader accepts (config.c's `strcmp(key, "X")`, so a new
// key without docs fails here) has its entry in mcp-workbench-config(5);
// every shell block of the README says whether it can run here, and those
// that can run, as written.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as L from './lib.mjs';

after(L.cleanup);

const T = { timeout: 120000 };
const read = (...p) => fs.readFileSync(path.join(L.REPO_DIR, ...p), 'utf8');
const PAGES = ['mcp-workbench.1', 'mcp-workbench-config.5', 'mcp-workbench.7'];

// The keys config.c accepts, by name.
function configKeys() {
	const src = read('config.c');
	const keys = new Set([...src.matchAll(/strcmp\(key, "([A-Za-z]+)"\)/g)].map((m) => m[1]));
	assert.ok(keys.size >= 30, `config.c's keys: ${[...keys]}`);
	return keys;
}

// The options of --help: -c, --config, --mode, ...
function helpOptions() {
	const help = L.runCli(['--help']).stdout;
	const list = help.slice(help.indexOf('\n\n'), help.indexOf('Exit status:'));
	const opts = new Set([...list.matchAll(/(?:^|[\s,])(--?[a-zA-Z][a-z-]*)/gm)].map((m) => m[1]));
	assert.ok(opts.has('--check') && opts.has('-c'), `--help's options: ${[...opts]}`);
	return opts;
}

describe('docs: README, manual pages and --help agree', () => {
	test('every option of --help has its entry in OPTIONS of mcp-workbench(1)', T, () => {
		const page = read('man', 'mcp-workbench.1');
		const options = page.slice(page.indexOf('.Sh OPTIONS'), page.indexOf('\n.Sh ', page.indexOf('.Sh OPTIONS') + 1));
		const items = options.split('\n').filter((l) => l.startsWith('.It ')).join('\n');
		for (const opt of helpOptions()) {
			const mdoc = opt.startsWith('--') ? `Fl \\-${opt.slice(2)}` : `Fl ${opt.slice(1)}`;
			assert.match(items, new RegExp(`${L.escapeRe(mdoc)}\\b`), `mcp-workbench(1) OPTIONS has no .It for ${opt}`);
		}
	});

	test('every configuration key config.c accepts has its entry in mcp-workbench-config(5)', T, () => {
		const page = read('man', 'mcp-workbench-config.5');
		const items = page.split('\n').filter((l) => l.startsWith('.It Va ')).join('\n');
		const missing = [...configKeys()].filter((k) => !new RegExp(`\\bVa ${k}\\b`).test(items));
		assert.deepEqual(missing, [], `keys without an .It Va entry in mcp-workbench-config(5): ${missing.join(', ')}`);
	});

	test('each page names the version, its name and section, and the other two', T, () => {
		const version = L.makefileVersion() ?? L.runCli(['--version']).stdout.trim().split(' ')[1];
		for (const file of PAGES) {
			const page = read('man', file);
			const [name, section] = [file.slice(0, file.lastIndexOf('.')), file.slice(file.lastIndexOf('.') + 1)];
			assert.ok(!page.includes('@VERSION@'), `${file}: a placeholder`);
			assert.match(page, new RegExp(`^version ${L.escapeRe(version)}\\.$`, 'm'), `${file} names version ${version}`);
			assert.match(page, new RegExp(`^\\.Dt ${L.escapeRe(name.toUpperCase())} ${section}$`, 'm'), `${file}: .Dt`);
			assert.match(page, new RegExp(`^\\.Nm ${L.escapeRe(name)}$`, 'm'), `${file}: .Nm in NAME`);
			for (const other of PAGES.filter((f) => f !== file)) {
				const [n, s] = [other.slice(0, other.lastIndexOf('.')), other.slice(other.lastIndexOf('.') + 1)];
				assert.match(page, new RegExp(`^\\.Xr ${L.escapeRe(n)} ${s}\\b`, 'm'), `${file} refers to ${n}(${s})`);
			}
		}
	});

	test('the README: at most 300 lines, links every page and document, no copy of the file table', T, () => {
		const readme = read('README.md');
		assert.ok(readme.split('\n').length - 1 <= 300, `README.md has ${readme.split('\n').length - 1} lines`);
		for (const link of ['man/mcp-workbench.1', 'man/mcp-workbench-config.5', 'man/mcp-workbench.7',
			'ARCHITECTURE.md', 'bench/README.md', 'CHANGELOG.md'])
			assert.ok(readme.includes(`(${link})`), `README links ${link}`);
		assert.ok(!/^\|[^|\n]*\|\s*`workbench\.c`/m.test(readme), 'the file table lives in ARCHITECTURE.md alone');
	});

	// Each ```sh block follows a marker: "docs-test: runs", "docs-test: not
	// here (why)", or the curl session's (run by http-serve.test.mjs).  A
	// block that runs is run line by line in the source tree, each line
	// expected to exit 0, or N where it says "# exit N".
	test('the README\'s shell blocks: each says whether it runs here, and those that can run do', T, () => {
		const readme = read('README.md');
		const blocks = [...readme.matchAll(/(?:<!-- ([^\n]*?) -->\n)?```sh\n([\s\S]*?)```/g)];
		assert.ok(blocks.length >= 4, 'README has its shell blocks');
		let ran = 0;
		for (const [, marker, body] of blocks) {
			assert.ok(marker && /^(docs-test: runs|docs-test: not here \(.+\)|curl-session: )/.test(marker),
				`a README shell block without a docs-test marker:\n${body}`);
			if (marker !== 'docs-test: runs')
				continue;
			for (const line of body.split('\n').filter((l) => l.trim() !== '')) {
				const want = Number(line.match(/# exit (\d+)/)?.[1] ?? 0);
				// Under another build (WORKBENCH set: ASan, valgrind) the
				// tree's own binary is not the one under test.
				if (/^make\b/.test(line) && process.env.WORKBENCH)
					continue;
				const cmd = line.replaceAll('./mcp-workbench', `'${L.WORKBENCH}'`);
				const r = spawnSync('sh', ['-c', cmd], { cwd: L.REPO_DIR, encoding: 'utf8', timeout: 110000 * L.SLOW,
					env: { ...process.env, WORKBENCH_CONFIG: '' } });
				assert.equal(r.status, want, `README: ${line}\n${r.stdout}${r.stderr}`);
				ran++;
			}
		}
		assert.ok(ran >= 3, `ran ${ran} lines`);
	});
});
