/**
 * The OpenAPI 3.1 document (issue #7 "API document and versioning"): generated from the same JSON Schemas
 * ajv validates with, committed as openapi.json, served by the console, and carrying every "not shown"
 * decision of the spec.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { buildOpenApiDocument, toOpenApiSchema } from '../../src/adapters/openapi/openapi-document.js';
import { heartbeatRequestSchema, heartbeatResponseSchema } from '../../src/schemas/heartbeat.js';
import { doorCheckRequestSchema } from '../../src/schemas/doors.js';
import { bansCheckRequestSchema } from '../../src/schemas/bans-check.js';
import { COMMAND_TYPES } from '../../src/schemas/commands.js';
import { ROOT } from '../support/stack.js';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, { headers?: Record<string, unknown> }> };
  'x-not-shown-decisions': { topic: string; spec: string; decision: string }[];
};

/** The spec's "not shown" places, one topic each (spec sections in api-decisions.ts). */
const NOT_SHOWN_TOPICS = [
  'entry-field-types',
  'command-entry',
  'config-contents',
  'door-fields',
  'dispatch-trigger',
  'failure-report-and-expiry',
  'doors-check-fields',
  'doors-bulk-fields',
  'doors-manifest-fields',
  'bans-check-fields',
  'records-read-and-chat-endpoints',
  'key-management',
  'signature-encoding',
  'request-nonce',
  'overload',
  'outbound-notifications',
  'error-codes',
  'max-envelope-size',
  'rate-quotas',
  'door-cache-ttl',
  'dependency-unavailable',
  'body-encoding-and-signature',
  'timestamps',
  'json-limits',
];

describe('OpenAPI document', () => {
  const generated = buildOpenApiDocument() as unknown as Doc;

  it('the committed openapi.json is exactly what the schemas generate (regenerate with `npm run openapi`)', () => {
    const committed: unknown = JSON.parse(readFileSync(path.join(ROOT, 'openapi.json'), 'utf8'));
    expect(committed).to.deep.equal(JSON.parse(JSON.stringify(generated)));
  });

  it('is OpenAPI 3.1 with exactly the five game endpoints', () => {
    expect(generated.openapi).to.equal('3.1.0');
    const ops = Object.entries(generated.paths).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
    expect(ops.sort()).to.deep.equal(['GET /game/doors/manifest', 'POST /game/bans/check', 'POST /game/doors/bulk', 'POST /game/doors/check', 'POST /game/heartbeat']);
  });

  it('embeds the ajv schemas unchanged (minus $id), so the document cannot drift from validation', () => {
    const s = generated.components.schemas;
    expect(s.HeartbeatRequest).to.deep.equal(toOpenApiSchema(heartbeatRequestSchema));
    expect(s.HeartbeatResponse).to.deep.equal(toOpenApiSchema(heartbeatResponseSchema));
    expect(s.DoorCheckRequest).to.deep.equal(toOpenApiSchema(doorCheckRequestSchema));
    expect(s.BansCheckRequest).to.deep.equal(toOpenApiSchema(bansCheckRequestSchema));
    for (const t of COMMAND_TYPES) expect(s).to.have.property(`CommandPayload_${t}`);
    expect(JSON.stringify(s)).to.not.include('"$id"');
  });

  it('states every "not shown" decision of the spec', () => {
    const topics = generated['x-not-shown-decisions'].map((d) => d.topic);
    expect(topics).to.have.members(NOT_SHOWN_TOPICS);
    for (const d of generated['x-not-shown-decisions']) {
      expect(d.spec, d.topic).to.include('not shown');
      expect(d.decision.length, d.topic).to.be.greaterThan(20);
    }
    const text = JSON.stringify(generated['x-not-shown-decisions']);
    expect(text).to.include('512 KiB').and.include('hexadecimal').and.include('rate_limited');
  });

  it('documents 429 with a required Retry-After header on every endpoint', () => {
    expect(generated.components.responses.Error429!.headers).to.have.property('Retry-After');
    for (const methods of Object.values(generated.paths)) for (const op of Object.values(methods)) expect(op.responses).to.have.property('429');
  });

  it('documents 503 unavailable with Retry-After (README "Dependency outages")', () => {
    expect(generated.components.responses.Error503!.headers).to.have.property('Retry-After');
    for (const methods of Object.values(generated.paths)) for (const op of Object.values(methods)) expect(op.responses).to.have.property('503');
  });

  it('documents 415 on every endpoint and the decisions on codings, timestamps and JSON limits (issue #16)', () => {
    for (const methods of Object.values(generated.paths)) for (const op of Object.values(methods)) expect(op.responses).to.have.property('415');
    const text = JSON.stringify(generated['x-not-shown-decisions']);
    expect(text).to.include('unsupported_encoding').and.include('compressed bytes').and.include('leap second').and.include('0001-01-01T00:00:00Z').and.include('dead-letter');
  });
});
