/**
 * Structured JSON logging (winston). Every line carries the request id or job id of the work it belongs
 * to, taken from AsyncLocalStorage, and passes a redaction step so secrets and the Authorization header
 * never reach a log.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import winston from 'winston';

/** Correlation data of the work being done: `requestId` in the API, `jobId` in workers. */
export interface LogContext {
  requestId?: string;
  jobId?: string;
}

export const logContext = new AsyncLocalStorage<LogContext>();

const SECRET_FIELD = /^(authorization|secret|key|apikey|api_key|password|token|x-service-signature)$/i;
const KEY_PATTERN = /svc_live_([A-Za-z0-9]+)\.[A-Za-z0-9_-]+/g;

/** Replaces secret-looking fields and any full server key (keeps its public prefix) in a log entry. */
function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(KEY_PATTERN, 'svc_live_$1.[redacted]');
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_FIELD.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}

const redactFormat = winston.format((info) => {
  const ctx = logContext.getStore();
  if (ctx?.requestId && info.requestId === undefined) info.requestId = ctx.requestId;
  if (ctx?.jobId && info.jobId === undefined) info.jobId = ctx.jobId;
  for (const k of Object.keys(info)) {
    info[k] = SECRET_FIELD.test(k) ? '[redacted]' : redact(info[k]);
  }
  return info;
});

/** The process-wide logger; `level` comes from config (`LOG_LEVEL`). */
export const log = winston.createLogger({
  level: 'info',
  format: winston.format.combine(winston.format.timestamp(), redactFormat(), winston.format.json()),
  transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'http', 'debug'] })],
});

/** Sets the log level once config is loaded. */
export function setLogLevel(level: string): void {
  log.level = level;
}
