// Issue 40: the README, the manual pages and --help stay honest.  Every
// option --help lists is described in mcp-workbench(1); the table of the
// configuration's keys (config_keys.c, printed by `tests/unit
// config-keys`) and the key lists of mcp-workbench-config(5) name the
// same keys, with the same types, limits, defaults and lines (issue 39);
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

// The configuration's table of keys, a row a key, as tests/unit prints
// it: its fields split by tabs, "-" where a field says nothing.
function configTable() {
	const unit = path.join(L.TESTS_DIR, 'unit');
	assert.ok(fs.existsSync(unit), `${unit} is not built: make tests/unit`);
	const r = spawnSync(unit, ['config-keys'], { encoding: 'utf8' });
	assert.equal(r.status, 0, `tests/unit config-keys: ${r.stderr}`);
	const list = (f) => (f === '-' ? [] : f.split(','));
	const rows = r.stdout.trim().split('\n').map((line) => {
		const [name, objects, type, flags, min, max, dflt, names, doc] = line.split('\t');
		return { name, in: list(objects), type, flags: list(flags), min, max, dflt, names: list(names), doc };
	});
	assert.ok(rows.length >= 30 && rows.every((k) => k.doc !== undefined), `the table: ${r.stdout}`);
	return rows;
}

// mdoc lines as mandoc renders them, near enough to find a phrase: the
// macros dropped, their arguments kept, punctuation closed up.
const MACROS = new Set(['Ql', 'Va', 'Ic', 'Dq', 'Pq', 'Po', 'Pc', 'Xr', 'Nm', 'Pf', 'No', 'Fl', 'Ev', 'Pa', 'Sx',
	'Li', 'Ar', 'Cm', 'Ns', 'Em', 'Sy', 'Pp', 'Bd', 'Ed']);
function plain(lines) {
	const words = [];
	let glue = false;
	const put = (w) => {
		if (glue && words.length > 0) words[words.length - 1] += w;
		else words.push(w);
		glue = /^[([]$/.test(w);
	};
	for (const raw of lines) {
		const line = raw.replace(/\\\(dq/g, '"').replace(/\\-/g, '-').replace(/\\&/g, '');
		if (!line.startsWith('.')) {
			line.split(/\s+/).filter(Boolean).forEach(put);
			continue;
		}
		let flag = false;
		for (const t of line.slice(1).split(/\s+/).filter(Boolean)) {
			if (MACROS.has(t)) {
				flag = t === 'Fl';
				continue;
			}
			if (/^[.,:;)\]]$/.test(t) && words.length > 0) words[words.length - 1] += t;
			else put(flag ? `-${t}` : t);
			flag = false;
		}
	}
	return words.join(' ');
}

// The key lists of mcp-workbench-config(5), by object ("Top level",
// "Toolbox", "Server"): each key with its entry, rendered.
function manualKeys() {
	const objects = { 'Top level': 'top', Toolbox: 'toolbox', Server: 'server' };
	const out = { top: new Map(), toolbox: new Map(), server: new Map() };
	let where = null, depth = 0, keys = null, body = [];
	const flush = () => {
		for (const k of keys ?? []) out[where].set(k, plain(body));
		keys = null;
		body = [];
	};
	for (const line of read('man', 'mcp-workbench-config.5').split('\n')) {
		if (line.startsWith('.Ss ') || line.startsWith('.Sh ')) {
			flush();
			where = objects[line.slice(4)] ?? null;
			depth = 0;
		} else if (where === null) {
			continue;
		} else if (line.startsWith('.Bl')) {
			if (++depth > 1) body.push(line);
		} else if (line.startsWith('.El')) {
			if (--depth === 0) flush();
			else body.push(line);
		} else if (depth === 1 && line.startsWith('.It ')) {
			flush();
			keys = [...line.matchAll(/Va (\w+)/g)].map((m) => m[1]);
		} else if (keys !== null) {
			body.push(line);
		}
	}
	return out;
}

// What the manual's entry must say of a row of the table in an object:
// the problems found, in words.
function disagreements(k, where, text) {
	const said = [];
	const fail = (what) => said.push(`${k.name} (${where}): ${what}; the manual says: ${text.slice(0, 120)}`);
	const leftToTop = where === 'server' && k.in.includes('top');
	if (k.type === 'integer') {
		const m = text.match(/^Integers? from (\d+) to (\d+)[;,] default (\d+|the top-level values?)\b/);
		if (m === null) fail('no "Integer from MIN to MAX; default D"');
		else if (m[1] !== k.min || m[2] !== k.max) fail(`the table's limits are ${k.min} to ${k.max}`);
		else if (leftToTop ? !m[3].startsWith('the top-level') : m[3] !== k.dflt)
			fail(`the table's default is ${leftToTop ? 'the top level\'s' : k.dflt}`);
	} else if (k.type === 'bool') {
		const m = text.match(/^Boolean, default (true|false)\b/);
		if (m === null || m[1] !== k.dflt) fail(`no "Boolean, default ${k.dflt}"`);
	} else if (k.type === 'enum') {
		for (const v of k.names)
			if (!new RegExp(`(^|[\\s"])${v}["\\s,:;.]`).test(text)) fail(`no value ${v}`);
		if (!new RegExp(`^"?${k.dflt}"? \\((the )?default\\)|\\s"?${k.dflt}"? \\((the )?default\\)`).test(text))
			fail(`no "${k.dflt} (the default)"`);
	} else if (k.type === 'string' && !text.startsWith('String')) {
		fail('no "String"');
	} else if (k.type === 'list' && !text.startsWith('Array')) {
		fail('no "Array"');
	}
	if (k.flags.includes('required') && !/^[^.]*\brequired\b/.test(text)) fail('not "required"');
	if (where !== k.in[0])
		return said;	// The line is the first object's (the top level's).
	let at = 0;
	for (const part of k.doc.split(' ... ')) {
		const i = text.indexOf(part, at);
		if (i < 0) {
			fail(`no "${k.doc}"`);
			break;
		}
		at = i + part.length;
	}
	return said;
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

	test('the table of keys (config_keys.c) and mcp-workbench-config(5) agree', T, () => {
		const table = configTable();
		const manual = manualKeys();
		const said = [];
		for (const k of table)
			for (const where of k.in) {
				const text = manual[where].get(k.name);
				if (text === undefined) said.push(`${k.name} (${where}): in the table, not in the manual's list`);
				else said.push(...disagreements(k, where, text));
			}
		for (const [where, keys] of Object.entries(manual))
			for (const name of keys.keys())
				if (!table.some((k) => k.name === name && k.in.includes(where)))
					said.push(`${name} (${where}): in the manual's list, not in the table`);
		// The keys only --listen reads: the table's, and the manual's list.
		const token = manual.top.get('httpToken') ?? '';
		const m = token.match(/This key and the others that only serving HTTP reads \(([^)]*)\)/);
		const listed = m === null ? [] : ['httpToken', ...m[1].split(/,\s*/)];
		const flagged = table.filter((k) => k.flags.includes('listening')).map((k) => k.name);
		if (listed.sort().join() !== flagged.sort().join())
			said.push(`keys only --listen reads: the table's ${flagged.join(', ')}; the manual's ${listed.join(', ')}`);
		assert.deepEqual(said, [], said.join('\n'));
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
