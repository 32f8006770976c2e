// Every JS/TS example in the READMEs and docs/javascript.md is a file that
// the consumer test (scripts/npm-consumer-test.sh) type-checks and runs:
// a fenced block names it after the language (```ts file=examples/engine.ts)
// and its text must be the file's, so the docs cannot drift from what is
// tested. And the docs tell users to install the package by its npm name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const WASM = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const REPO = path.dirname(WASM);
const DOCS = [path.join(REPO, 'README.md'), path.join(WASM, 'README.md'), path.join(REPO, 'docs', 'javascript.md')];
const CODE = new Set(['js', 'mjs', 'cjs', 'ts', 'mts', 'jsx', 'tsx', 'javascript', 'typescript']);
const { name } = JSON.parse(fs.readFileSync(path.join(WASM, 'package.json'), 'utf8'));

/** Fenced blocks: `{info, body, line}`. */
function blocks(text) {
  const out = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    out.push({ lang: open[1], info: open[2].trim(), body: body.join('\n') + '\n', line: start + 1 });
  }
  return out;
}

test('every JS/TS block in the READMEs and docs/javascript.md is an example file, verbatim', () => {
  let checked = 0;
  for (const doc of DOCS) {
    for (const b of blocks(fs.readFileSync(doc, 'utf8'))) {
      const file = /(?:^|\s)file=(\S+)/.exec(b.info)?.[1];
      const where = `${path.relative(REPO, doc)}:${b.line}`;
      if (!file) {
        assert.ok(!CODE.has(b.lang), `${where}: a ${b.lang} block without file=…: make it an example file`);
        continue;
      }
      const target = path.resolve(path.dirname(doc), file);
      assert.ok(target.startsWith(path.join(WASM, 'examples') + path.sep), `${where}: ${file} is not in wasm/examples/ (the consumer test checks only those)`);
      assert.ok(fs.existsSync(target), `${where}: ${file} does not exist`);
      assert.equal(b.body, fs.readFileSync(target, 'utf8'), `${where}: the block differs from ${file}`);
      checked++;
    }
  }
  assert.ok(checked >= 8, `only ${checked} example blocks`);
});

test(`the READMEs say how to install the package by its npm name (npm install ${name})`, () => {
  assert.equal(name, 'chime-scheduler');
  for (const doc of DOCS.slice(0, 2)) {
    const text = fs.readFileSync(doc, 'utf8');
    assert.match(text, new RegExp(`\\bnpm install ${name}\\b`), doc);
    assert.doesNotMatch(text, /from 'chime'|npm install chime\b(?!-)/, `${doc} names the package 'chime'`);
  }
});
