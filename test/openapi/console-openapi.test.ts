/**
 * Issue #21 item 4: the console's JSON API is described in its own OpenAPI 3.1 document
 * (console-openapi.json, served at /console/openapi.json) with the auth it needs, and the document
 * lists exactly the routes the console app registers.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { Registry } from 'prom-client';
import { Harness } from '../support/harness.js';
import { ROOT } from '../support/stack.js';
import { buildConsoleOpenApiDocument } from '../../src/adapters/openapi/console-openapi-document.js';
import { buildOpenApiDocument } from '../../src/adapters/openapi/openapi-document.js';
import { createConsoleApp } from '../../src/adapters/console/console-app.js';
import { createConsoleServices } from '../../src/adapters/console/console-services.js';
import { LiveHub } from '../../src/adapters/console/live/live-hub.js';
import { SESSION_COOKIE } from '../../src/adapters/console/console-auth.js';
import { CONSOLE_ROUTES } from '../../src/auth/moderators/console-permissions.js';

type Op = { 'x-permission'?: string; security?: unknown; parameters?: ({ $ref?: string; name?: string; in?: string })[]; responses: Record<string, unknown> };
type Doc = {
  openapi: string;
  security: Record<string, string[]>[];
  paths: Record<string, Record<string, Op>>;
  components: { securitySchemes: Record<string, { type: string; scheme?: string }>; parameters?: unknown };
};

/** `METHOD /path/{param}` of every route the app registers, found by walking its routers. */
function registeredRoutes(app: unknown): string[] {
  const out: string[] = [];
  const walk = (stack: unknown[], prefix: string) => {
    for (const layer of stack as { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: unknown[] }; rawPath?: string }[]) {
      if (layer.route) {
        for (const m of Object.keys(layer.route.methods)) out.push(`${m.toUpperCase()} ${(prefix + layer.route.path).replace(/:(\w+)/g, '{$1}')}`);
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack, prefix + (typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : ''));
      }
    }
  };
  walk((app as { router: { stack: unknown[] } }).router.stack, '');
  return out;
}

describe('console API document', () => {
  const generated = JSON.parse(JSON.stringify(buildConsoleOpenApiDocument())) as Doc;

  it('the committed console-openapi.json is exactly what the code generates (regenerate with `npm run openapi`)', () => {
    expect(JSON.parse(readFileSync(path.join(ROOT, 'console-openapi.json'), 'utf8'))).to.deep.equal(generated);
  });

  it('documents exactly the console API routes the app registers, and /metrics', async () => {
    const h = new Harness();
    const services = createConsoleServices({ db: h.db, redis: h.redis, keySpace: h.keySpace });
    const live = new LiveHub({ db: h.db, redis: h.redis, keySpace: h.keySpace, createReader: () => h.redis.duplicate() });
    try {
      const app = createConsoleApp({ services, token: 'x'.repeat(32), metrics: new Registry(), openapi: buildOpenApiDocument(), consoleOpenapi: generated, live });
      const routes = registeredRoutes(app).filter((r) => r.includes(' /console/api/') || r === 'GET /metrics');
      const documented = Object.entries(generated.paths).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
      expect(routes.length).to.be.greaterThan(10);
      expect(documented).to.have.members(routes);

      const served = await request(app).get('/console/openapi.json');
      expect(served.status).to.equal(200);
      expect(served.body).to.deep.equal(generated);
    } finally {
      await live.close();
      await services.close();
      await h.close();
    }
  });

  it('states the auth and, for every operation, the permission of the one permission table (issue #31)', () => {
    expect(generated.openapi).to.equal('3.1.0');
    expect(generated.components.securitySchemes.operatorToken).to.deep.include({ type: 'http', scheme: 'bearer' });
    expect(generated.components.securitySchemes.moderatorToken).to.deep.include({ type: 'http', scheme: 'bearer' });
    expect(generated.components.securitySchemes.sessionCookie).to.deep.include({ type: 'apiKey', in: 'cookie', name: SESSION_COOKIE });
    expect(generated.security).to.deep.equal([{ sessionCookie: [] }, { moderatorToken: [] }, { operatorToken: [] }]);
    expect(generated.components.parameters, 'no X-Moderator parameter any more').to.equal(undefined);
    const documented = new Map<string, Op>();
    for (const [p, methods] of Object.entries(generated.paths)) {
      for (const [m, op] of Object.entries(methods)) {
        documented.set(`${m} ${p.startsWith('/console/api') ? p.slice('/console/api'.length).replace(/\{(\w+)\}/g, ':$1') : `/${p}`}`, op);
        const signIn = m === 'post' && p === '/console/api/session';
        // Only sign-in needs no credential; every other operation keeps the document's security.
        if (signIn) expect(op.security, `${m} ${p}`).to.deep.equal([]);
        else expect(op.security, `${m} ${p}`).to.equal(undefined);
        if (!signIn) expect(op.responses, `${m} ${p}`).to.include.keys('401', '403');
      }
    }
    for (const route of CONSOLE_ROUTES) {
      const op = documented.get(`${route.method} ${route.path}`);
      expect(op, `${route.method} ${route.path} documented`).to.not.equal(undefined);
      expect(op!['x-permission'], `${route.method} ${route.path}`).to.equal(route.permission);
    }
    const withPermission = [...documented.values()].filter((op) => op['x-permission'] !== undefined);
    expect(withPermission).to.have.length(CONSOLE_ROUTES.length);
  });
});
