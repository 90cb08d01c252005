/**
 * Gives every request an id (`X-Request-Id` response header, `error.requestId`, every log line) and
 * runs the rest of the request inside the logging context.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { logContext } from '../../log.js';

export const requestId: RequestHandler = (_req, res, next) => {
  const id = randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  logContext.run({ requestId: id }, next);
};
