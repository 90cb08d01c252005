/**
 * Where a benchmark step's PostgreSQL time goes (issue #32: Postgres was a quarter of the service's CPU,
 * unprofiled): statements by execution time (`pg_stat_statements`, when the server preloads it), rows
 * written per table (`pg_stat_user_tables`, HOT updates apart), WAL written (`pg_stat_wal`) and the
 * checkpoints begun, as differences over the step. Not part of the service.
 */
import pg from 'pg';

/** One statement's share of a step: calls, rows, total execution time (ms), text cut to 100 characters. */
export interface StatementTime {
  query: string;
  calls: number;
  rows: number;
  totalMs: number;
}

/** Rows inserted, updated and deleted in one table over a step; autovacuum and autoanalyze runs. */
export interface TableWrites {
  table: string;
  inserted: number;
  updated: number;
  /** Updates that stayed on their page with no index entry (heap-only tuples). */
  hotUpdated: number;
  deleted: number;
  autovacuums: number;
  autoanalyzes: number;
}

/** What {@link PgProfile.end} reports. */
export interface PgStepProfile {
  /** Top statements by total execution time; empty when pg_stat_statements is not loaded. */
  statements: StatementTime[];
  tables: TableWrites[];
  walBytes: number;
  walRecords: number;
  /** Full-page images in the WAL (the first change of a page after a checkpoint writes the whole page). */
  walFullPages: number;
  /** Checkpoints begun in the step: on schedule (`checkpoint_timeout`) and requested (WAL over `max_wal_size`). */
  checkpoints: { timed: number; requested: number };
}

type TableCounters = Map<string, Omit<TableWrites, 'table'>>;

/** Snapshots at a step's start, differences at its end, over one connection to the benchmark's database. */
export class PgProfile {
  private statementsOn = false;
  private tablesBefore: TableCounters = new Map();
  private walBefore = { bytes: 0, records: 0, fpi: 0, timed: 0, requested: 0 };

  private constructor(
    private readonly client: pg.Client,
    /** Where the server keeps its checkpoint counters: PostgreSQL 17 moved them to pg_stat_checkpointer. */
    private readonly checkpointsQuery: string,
  ) {}

  /** Connects to `databaseUrl` and enables pg_stat_statements there if the server preloads it. */
  static async open(databaseUrl: string): Promise<PgProfile> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const version = (await client.query<{ n: number }>(`select current_setting('server_version_num')::int as n`)).rows[0]!.n;
    const profile = new PgProfile(
      client,
      version >= 170000 ? 'select num_timed as t, num_requested as q from pg_stat_checkpointer' : 'select checkpoints_timed as t, checkpoints_req as q from pg_stat_bgwriter',
    );
    const preloaded = await client.query<{ v: string }>(`select current_setting('shared_preload_libraries') as v`);
    if (preloaded.rows[0]!.v.split(',').map((s) => s.trim()).includes('pg_stat_statements')) {
      await client.query('create extension if not exists pg_stat_statements');
      profile.statementsOn = true;
    }
    return profile;
  }

  /** Whether statements are profiled (pg_stat_statements preloaded). */
  get statementsProfiled(): boolean {
    return this.statementsOn;
  }

  /** Marks the start of a step. */
  async start(): Promise<void> {
    if (this.statementsOn) await this.client.query('select pg_stat_statements_reset()');
    this.tablesBefore = await this.tables();
    this.walBefore = await this.wal();
  }

  /** The step's figures since {@link start}: the `top` statements by time, tables with any writes. */
  async end(top = 8): Promise<PgStepProfile> {
    const statements = this.statementsOn
      ? (
          await this.client.query<{ query: string; calls: string; rows: string; ms: number }>(
            `select query, calls, rows, total_exec_time as ms from pg_stat_statements
             where dbid = (select oid from pg_database where datname = current_database())
             order by total_exec_time desc limit $1`,
            [top],
          )
        ).rows.map((r) => ({ query: r.query.replace(/\s+/g, ' ').trim().slice(0, 100), calls: Number(r.calls), rows: Number(r.rows), totalMs: Math.round(r.ms) }))
      : [];
    const tables: TableWrites[] = [];
    for (const [table, a] of await this.tables()) {
      const b = this.tablesBefore.get(table) ?? { inserted: 0, updated: 0, hotUpdated: 0, deleted: 0, autovacuums: 0, autoanalyzes: 0 };
      const d = { table, inserted: a.inserted - b.inserted, updated: a.updated - b.updated, hotUpdated: a.hotUpdated - b.hotUpdated, deleted: a.deleted - b.deleted, autovacuums: a.autovacuums - b.autovacuums, autoanalyzes: a.autoanalyzes - b.autoanalyzes };
      if (d.inserted || d.updated || d.deleted || d.autovacuums) tables.push(d);
    }
    tables.sort((x, y) => y.inserted + y.updated + y.deleted - (x.inserted + x.updated + x.deleted));
    const wal = await this.wal();
    return { statements, tables, walBytes: wal.bytes - this.walBefore.bytes, walRecords: wal.records - this.walBefore.records, walFullPages: wal.fpi - this.walBefore.fpi,
      checkpoints: { timed: wal.timed - this.walBefore.timed, requested: wal.requested - this.walBefore.requested } };
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.client.end();
  }

  private async tables(): Promise<TableCounters> {
    const r = await this.client.query<{ relname: string; ins: string; upd: string; hot: string; del: string; av: string; aa: string }>(
      'select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del, autovacuum_count as av, autoanalyze_count as aa from pg_stat_user_tables',
    );
    return new Map(r.rows.map((x) => [x.relname, { inserted: Number(x.ins), updated: Number(x.upd), hotUpdated: Number(x.hot), deleted: Number(x.del), autovacuums: Number(x.av), autoanalyzes: Number(x.aa) }]));
  }

  private async wal(): Promise<{ bytes: number; records: number; fpi: number; timed: number; requested: number }> {
    const w = (await this.client.query<{ b: string; r: string; f: string }>('select wal_bytes as b, wal_records as r, wal_fpi as f from pg_stat_wal')).rows[0]!;
    const c = (await this.client.query<{ t: string; q: string }>(this.checkpointsQuery)).rows[0]!;
    return { bytes: Number(w.b), records: Number(w.r), fpi: Number(w.f), timed: Number(c.t), requested: Number(c.q) };
  }
}

/** Lines for the step log: statements by time (when profiled), rows written per table, WAL written. */
export function describePgStep(p: PgStepProfile, windowSeconds: number): string[] {
  const lines: string[] = [];
  if (p.statements.length) {
    lines.push(`Postgres time by statement: ${p.statements.map((s) => `${(s.totalMs / 1000).toFixed(2)} s / ${s.calls} calls / ${s.rows} rows: ${s.query}`).join(' || ')}`);
  }
  lines.push(`Postgres rows written: ${p.tables.map((t) => `${t.table} +${t.inserted}/~${t.updated}${t.updated ? ` (HOT ${t.hotUpdated})` : ''}/-${t.deleted}${t.autovacuums ? ` (autovacuum ×${t.autovacuums})` : ''}`).join(', ') || 'none'}`);
  lines.push(`Postgres WAL: ${(p.walBytes / 1e6).toFixed(1)} MB (${(p.walBytes / 1e3 / windowSeconds).toFixed(0)} kB/s), ${p.walRecords} records, ${p.walFullPages} full-page images; checkpoints ${p.checkpoints.timed} timed, ${p.checkpoints.requested} requested`);
  return lines;
}
