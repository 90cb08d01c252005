/**
 * Issue #21 item 3: every field of the heartbeat response's `config` is documented with its unit and what
 * a client does with it, identically in the docs/api.md table ("Heartbeat config"), the schema
 * (`HEARTBEAT_CONFIG_FIELDS` / `heartbeatConfigSchema`) and the OpenAPI document (generated and
 * committed); and a real heartbeat sends no field that is not documented. Any disagreement fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { buildOpenApiDocument } from '../../src/adapters/openapi/openapi-document.js';
import { HEARTBEAT_CONFIG_FIELDS, heartbeatConfigSchema } from '../../src/schemas/heartbeat.js';
import { Harness, heartbeatBody } from '../support/harness.js';
import { manifest } from '../doors/door-fixtures.js';
import { ROOT } from '../support/stack.js';

type Row = { name: string; type: string; unit: string; presence: string; meaning: string; clientAction: string };
type ConfigSchema = { required: string[]; properties: Record<string, { type: string; description: string; 'x-unit': string; minimum?: number; maximum?: number }> };

/** The rows of the docs/api.md table under "## Heartbeat config". */
function readmeRows(): Row[] {
  const text = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
  const start = text.indexOf('## Heartbeat config');
  expect(start, 'docs/api.md has a "## Heartbeat config" section').to.be.greaterThan(-1);
  const section = text.slice(start, text.indexOf('\n## ', start));
  const lines = section.split('\n').filter((l) => l.startsWith('| '));
  expect(lines[0]).to.match(/^\| field \| type \| unit \| present \| meaning \| what a client does with it \|$/);
  return lines.slice(2).map((line) => {
    const cells = line.slice(2, -2).split(' | ');
    expect(cells, line).to.have.length(6);
    const [name, type, unit, presence, meaning, clientAction] = cells as [string, string, string, string, string, string];
    return { name: name.replace(/`/g, ''), type, unit, presence, meaning, clientAction };
  });
}

describe('heartbeat config: docs/api.md, schema and OpenAPI agree', function () {
  this.timeout(30_000);
  const documented: Row[] = HEARTBEAT_CONFIG_FIELDS.map(({ name, type, unit, presence, meaning, clientAction }) => ({ name, type, unit, presence, meaning, clientAction }));

  it('the docs/api.md table lists exactly the documented fields, each with the same type, unit, presence, meaning and client action', () => {
    expect(readmeRows()).to.deep.equal(documented);
  });

  it('the schema and the OpenAPI document (generated and committed) describe every field with its unit and client action', () => {
    const committed = JSON.parse(readFileSync(path.join(ROOT, 'openapi.json'), 'utf8')) as { components: { schemas: { HeartbeatConfig: ConfigSchema } } };
    const generated = buildOpenApiDocument() as unknown as { components: { schemas: { HeartbeatConfig: ConfigSchema } } };
    for (const schema of [heartbeatConfigSchema as unknown as ConfigSchema, generated.components.schemas.HeartbeatConfig, committed.components.schemas.HeartbeatConfig]) {
      expect(Object.keys(schema.properties)).to.have.members(documented.map((f) => f.name));
      expect(schema.required).to.have.members(documented.filter((f) => f.presence === 'always').map((f) => f.name));
      for (const f of documented) {
        const p = schema.properties[f.name]!;
        expect(p.type, f.name).to.equal(f.type);
        expect(p['x-unit'], f.name).to.equal(f.unit);
        expect(p.description, f.name).to.include(`Unit: ${f.unit}.`).and.include(f.clientAction).and.include(f.meaning.slice(1));
      }
    }
  });

  it('a real heartbeat sends only documented fields, every "always" one, as integers; doorsVersion is the manifest version', async () => {
    const h = new Harness();
    try {
      const g = await h.game();
      const res = await h.heartbeat(g, heartbeatBody([]));
      expect(res.status).to.equal(200);
      const config = res.body.config as Record<string, unknown>;
      const names = documented.map((f) => f.name);
      expect(Object.keys(config).filter((k) => !names.includes(k)), 'undocumented config fields').to.deep.equal([]);
      for (const f of documented.filter((d) => d.presence === 'always')) expect(config, f.name).to.have.property(f.name);
      for (const [k, v] of Object.entries(config)) expect(Number.isInteger(v), k).to.equal(true);
      expect(config.heartbeatIntervalSeconds).to.equal(20);
      expect(config.doorCacheTtlSeconds).to.equal(h.config.doorCacheTtlSeconds);
      const m = await manifest(h, g);
      expect(config.doorsVersion).to.equal(m.body.version);
    } finally {
      await h.close();
    }
  });
});
