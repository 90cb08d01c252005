/**
 * Writes the OpenAPI 3.1 document of the game endpoints (src/openapi/openapi-document.ts) to
 * `openapi.json` at the repository root: `npm run openapi`. With `--check` it writes nothing and exits 1
 * when the committed file differs from what the schemas generate (CI; test/openapi/ does the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../src/openapi/openapi-document.js';

const target = new URL('../openapi.json', import.meta.url);
const text = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing file: reported as drift below
  }
  if (current !== text) {
    console.error('openapi.json is out of date with src/schemas; run `npm run openapi` and commit the result');
    process.exit(1);
  }
  console.log('openapi.json matches the schemas');
} else {
  writeFileSync(target, text);
  console.log(`wrote ${target.pathname}`);
}
