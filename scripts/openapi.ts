/**
 * Writes the OpenAPI 3.1 documents: the game endpoints (src/adapters/openapi/openapi-document.ts) to `openapi.json`
 * and the moderator console API (src/adapters/openapi/console-openapi-document.ts) to `console-openapi.json`, at the
 * repository root: `npm run openapi`. With `--check` it writes nothing and exits 1 when a committed file
 * differs from what the code generates (CI; test/openapi/ does the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../src/adapters/openapi/openapi-document.js';
import { buildConsoleOpenApiDocument } from '../src/adapters/openapi/console-openapi-document.js';
import { parseCli } from './support/cli-args.js';

const { check } = parseCli('usage: tsx scripts/openapi.ts [--check]', { options: { check: { type: 'boolean', default: false } } }).values;

const documents = [
  { target: new URL('../openapi.json', import.meta.url), build: buildOpenApiDocument, from: 'src/schemas' },
  { target: new URL('../console-openapi.json', import.meta.url), build: buildConsoleOpenApiDocument, from: 'src/adapters/openapi/console-openapi-document.ts' },
];

let stale = false;
for (const { target, build, from } of documents) {
  const text = `${JSON.stringify(build(), null, 2)}\n`;
  const name = target.pathname.split('/').pop();
  if (check) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // missing file: reported as drift below
    }
    if (current !== text) {
      console.error(`${name} is out of date with ${from}; run \`npm run openapi\` and commit the result`);
      stale = true;
    } else {
      console.log(`${name} matches ${from}`);
    }
  } else {
    writeFileSync(target, text);
    console.log(`wrote ${target.pathname}`);
  }
}
if (stale) process.exit(1);
