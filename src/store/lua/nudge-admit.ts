/**
 * The typed builder of a `nudge-admit.lua` call (one publish taken from a game's nudge budget): KEYS =
 * the nudge log zset, the game's live servers.
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';

/** What one nudge admission needs, by name (the script's header says what each holds). */
export interface NudgeAdmitCall {
  nowMs: number;
  windowMs: number;
  /** Budget per window: `budgetBase` plus `budgetPerServer` per live server, times `safety` (0..1). */
  budgetBase: number;
  budgetPerServer: number;
  safety: number;
  /** This publish's id (unique). */
  id: string;
}

/** KEYS and named arguments of `nudge-admit.lua` for `call` in `keys`' game. */
export function nudgeAdmitCall(keys: GameKeys, call: NudgeAdmitCall): ScriptCall {
  return {
    keys: [keys.nudgeLog(), keys.servers()],
    args: { now: call.nowMs, w: call.windowMs, bb: call.budgetBase, bs: call.budgetPerServer, sf: call.safety, id: call.id },
  };
}
