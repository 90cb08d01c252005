/**
 * Starts the console listener inside an API process (src/server.ts): token, services, scrape-time
 * metrics, the OpenAPI document, and `listen(CONSOLE_PORT, CONSOLE_HOST)`. Logs where it listens; when
 * the token was generated (CONSOLE_TOKEN unset) the log line carries the sign-in address with the token
 * in the URL fragment, once, at info. A configured token is never logged.
 */
import type { AddressInfo } from 'node:net';
import type { Config } from '../../config.js';
import type { Db } from '../../store/prisma.js';
import type { AppRedis } from '../../store/redis.js';
import type { ApiMetrics } from '../metrics/api-metrics.js';
import { registerScrapeMetrics } from '../metrics/scrape-metrics.js';
import { buildOpenApiDocument } from '../openapi/openapi-document.js';
import { ROLES } from '../../queues/worker-roles.js';
import { log } from '../../log.js';
import { resolveConsoleToken } from './console-token.js';
import { createConsoleServices } from './console-services.js';
import { createConsoleApp } from './console-app.js';
import { createConsoleAuth, subscribeConsoleInvalidations } from './console-auth.js';
import { LiveHub } from './live/live-hub.js';
import { registerLiveMetrics } from './live/live-metrics.js';
import { createRedis } from '../../store/redis.js';
import { buildConsoleOpenApiDocument } from '../openapi/console-openapi-document.js';
import type { KeySpace } from '../../store/keyspace/key-space.js';

/** A running console listener. */
export interface ConsoleListener {
  /** The port it listens on (useful with CONSOLE_PORT=0). */
  port: number;
  /** Stops accepting, waits up to `graceMs` for in-flight requests, then closes its queues. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts the console on `config.consoleHost:config.consolePort` over the process's `redis` and `db`
 * (not closed by {@link ConsoleListener.close}).
 * @throws when the port cannot be bound (the API process then fails to start).
 */
export async function startConsole(deps: { config: Readonly<Config>; keySpace: KeySpace; redis: AppRedis; db: Db; metrics: ApiMetrics }): Promise<ConsoleListener> {
  const { config, keySpace } = deps;
  const token = resolveConsoleToken(config.consoleToken);
  const services = createConsoleServices({ db: deps.db, redis: deps.redis, keySpace });
  const closeScrape = registerScrapeMetrics(deps.metrics.registry, {
    db: deps.db,
    redis: deps.redis,
    keySpace,
    queueNames: Object.values(ROLES).map((r) => r.queue),
  });
  const live = new LiveHub({
    db: deps.db,
    redis: deps.redis,
    keySpace,
    createReader: () => createRedis(config.redisUrl, { name: 'console-live', forWorker: true }),
  });
  registerLiveMetrics(deps.metrics.registry, live);
  // Moderator changes (disable, role, token) arrive on the auth invalidation channel; a connection of its
  // own because a subscribed connection can do nothing else.
  const auth = createConsoleAuth(token.value, services);
  const subscriber = createRedis(config.redisUrl, { name: 'console-auth', forWorker: true });
  await subscribeConsoleInvalidations(subscriber, auth, keySpace);
  const app = createConsoleApp({
    services,
    token: token.value,
    metrics: deps.metrics.registry,
    openapi: buildOpenApiDocument(),
    consoleOpenapi: buildConsoleOpenApiDocument(),
    live,
    auth,
    secureCookies: config.consolePublicUrl?.startsWith('https:') ?? false,
    oidc: config.oidc,
    publicUrl: config.consolePublicUrl,
  });
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
    const s = app.listen(config.consolePort, config.consoleHost, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${config.consoleHost.includes(':') ? `[${config.consoleHost}]` : config.consoleHost}:${port}`;
  if (token.generated) {
    log.info(`console listener up; CONSOLE_TOKEN is not set, so this run generated one: sign in at ${origin}/#token=${token.value}`, { port, host: config.consoleHost });
  } else {
    log.info('console listener up', { port, host: config.consoleHost, url: origin });
  }
  return {
    port,
    async close(graceMs = 5_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Live streams never end on their own: end them so the listener can close.
      await live.close();
      server.closeIdleConnections();
      await Promise.race([closed, new Promise((r) => setTimeout(r, graceMs).unref())]);
      server.closeAllConnections();
      await Promise.allSettled([services.close(), closeScrape(), subscriber.quit()]);
    },
  };
}
