/**
 * autocannon ships CommonJS without type definitions: the small typed part of its API the benchmark
 * scripts use, loaded once here. Latencies are in ms, `duration` in s.
 */
import { createRequire } from 'node:module';

export interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  setupRequest?: (req: AcRequest, context: Record<string, unknown>) => AcRequest;
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}

export interface AcOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Total requests to send, then stop (instead of running for `duration`). */
  amount?: number;
  /** Requests per second over all connections (fixed-rate mode). */
  overallRate?: number;
  ignoreCoordinatedOmission?: boolean;
  /** Seconds. */
  timeout?: number;
  requests: AcRequest[];
}

export interface AcStats { average: number; p50: number; p90: number; p99: number; max: number; total: number }

export interface AcResult {
  duration: number;
  latency: AcStats;
  requests: AcStats;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}

export interface AcInstance extends PromiseLike<AcResult> {
  stop(): void;
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, responseTimeMs: number) => void): void;
}

export const autocannon = createRequire(import.meta.url)('autocannon') as (opts: AcOptions) => AcInstance;
