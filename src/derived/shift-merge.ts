/**
 * Pure shift rules: which sessions clock a member in, and how sessions become shifts (issue #4 "Auto
 * clock-in"; spec: What the service does, item 2).
 *
 * - A session clocks its member in when one of the member's positions has autoClockIn and its filters
 *   cover the session: `clockInGameIds` empty or containing the session's game, and `clockInScopeIds`
 *   empty or containing the session's externalScopeId (a session without a scope only matches an empty
 *   list).
 * - Shifts are the union of those sessions over time: a shift opens at the heartbeat of its first session
 *   and closes at the latest close of its sessions, i.e. the last heartbeat in which the member appeared
 *   anywhere (sessions closed by a server going away close at that server's last heartbeat, so a crash
 *   closes the shift there too). A member on two servers at once holds one shift.
 * - Sessions that do not overlap still form one shift when the gap between them is no longer than
 *   heartbeat sampling alone explains: the heartbeat interval of the game the member was last seen in plus
 *   that of the game they reappear in (40 s at the default 20 s). A member moving between servers is seen
 *   last on the old server up to one interval before leaving it and first on the new one up to one
 *   interval after arriving, so the move keeps one shift. The gap is counted as clocked-in time.
 * - A shift with an open session is open (no closedAt). Its time so far runs to the latest heartbeat the
 *   durable record has for a server the member is on (GameServer.lastSeenAt, copied by the liveness sweep)
 *   or to the latest close of its closed sessions, whichever is later.
 */

/** One stored session, as the derivation reads it (times in ms since the epoch). */
export interface SessionSpan {
  gameId: string;
  externalServerId: string;
  externalScopeId: string | null;
  openedAtMs: number;
  /** null while the member is still on that server. */
  closedAtMs: number | null;
  /** GameServer.lastSeenAt of the session's server (ms), used for the time so far of an open shift. */
  serverLastSeenMs: number | null;
}

/** The clock-in rule of one position. */
export interface ClockInRule {
  autoClockIn: boolean;
  clockInGameIds: readonly string[];
  clockInScopeIds: readonly string[];
}

/** One derived shift. */
export interface ShiftSpan {
  openedAtMs: number;
  /** null while open. */
  closedAtMs: number | null;
  /** End of the time accrued so far: closedAtMs when closed, else see the module comment. */
  accruedUntilMs: number;
  /** The sessions the shift was made of, by open time. */
  sessions: SessionSpan[];
}

/** True when position rule `rule` clocks in the member for `session`. */
export function ruleCoversSession(rule: ClockInRule, session: Pick<SessionSpan, 'gameId' | 'externalScopeId'>): boolean {
  if (!rule.autoClockIn) return false;
  if (rule.clockInGameIds.length && !rule.clockInGameIds.includes(session.gameId)) return false;
  if (rule.clockInScopeIds.length && (session.externalScopeId === null || !rule.clockInScopeIds.includes(session.externalScopeId))) return false;
  return true;
}

function compareSessions(a: SessionSpan, b: SessionSpan): number {
  return (
    a.openedAtMs - b.openedAtMs ||
    (a.closedAtMs ?? Infinity) - (b.closedAtMs ?? Infinity) ||
    (a.gameId < b.gameId ? -1 : a.gameId > b.gameId ? 1 : 0) ||
    (a.externalServerId < b.externalServerId ? -1 : a.externalServerId > b.externalServerId ? 1 : 0)
  );
}

/**
 * Merges one member's clock-in sessions into shifts (see the module comment). `bridgeMs(earlier, later)`
 * is the longest gap, in ms, after session `earlier` closes within which `later` still continues the same
 * shift. The result does not depend on the order of `sessions`.
 */
export function mergeSessions(sessions: readonly SessionSpan[], bridgeMs: (earlier: SessionSpan, later: SessionSpan) => number): ShiftSpan[] {
  const shifts: ShiftSpan[] = [];
  let current: ShiftSpan | undefined;
  let end = 0;
  let endSession: SessionSpan | undefined;
  const finish = () => {
    if (!current) return;
    current.closedAtMs = end === Infinity ? null : end;
    current.accruedUntilMs = accruedUntil(current);
    shifts.push(current);
  };
  for (const s of [...sessions].sort(compareSessions)) {
    const sEnd = s.closedAtMs ?? Infinity;
    if (current && endSession && (end === Infinity || s.openedAtMs <= end + bridgeMs(endSession, s))) {
      current.sessions.push(s);
      if (sEnd > end) {
        end = sEnd;
        endSession = s;
      }
      continue;
    }
    finish();
    current = { openedAtMs: s.openedAtMs, closedAtMs: null, accruedUntilMs: s.openedAtMs, sessions: [s] };
    end = sEnd;
    endSession = s;
  }
  finish();
  return shifts;
}

function accruedUntil(shift: ShiftSpan): number {
  if (shift.closedAtMs !== null) return shift.closedAtMs;
  let until = shift.openedAtMs;
  for (const s of shift.sessions) {
    until = Math.max(until, s.closedAtMs ?? Math.max(s.openedAtMs, s.serverLastSeenMs ?? s.openedAtMs));
  }
  return until;
}
