/**
 * Admission middleware of the game endpoints (issue #15 item 2; src/limits/admission.ts decides). Mounted
 * per route before the raw-body parser, so a refused request costs no body read, no HMAC, no Redis: the
 * refusal goes to the one error handler as {@link OverloadedError} (503 `overloaded`, `Retry-After`).
 * An admitted request counts as in flight until its response is finished or its connection closed.
 *
 * Heartbeats have one exception ({@link admitHeartbeat}): a server's last heartbeats as it shuts down
 * (an empty roster) get through past the heartbeat ceilings (issue #32 item 5: when a whole fleet
 * restarted for a game update, its final heartbeats arrived together and 71 were refused).
 */
import type { Request, RequestHandler, Response } from 'express';
import { FINAL_HEARTBEAT_SHARE, type AdmissionController, type RequestClass, type ShedReason } from '../../limits/admission.js';
import { OverloadedError } from '../../errors.js';
import { receivedBody } from './raw-body.js';

/** Counts `res`'s heartbeat in flight until the response is done (as {@link admit} does). */
function enterHeartbeat(controller: AdmissionController, res: Response): void {
  controller.enter('heartbeat');
  res.once('close', () => controller.release('heartbeat'));
}

/** Admits a request of class `cls` or passes 503 `overloaded` to the error handler. */
export function admit(controller: AdmissionController, cls: RequestClass): RequestHandler {
  return (_req, res, next) => {
    const refusal = controller.tryAdmit(cls);
    if (refusal) {
      next(new OverloadedError(refusal.retryAfterSeconds, refusal.reason));
      return;
    }
    // 'close' follows 'finish' and also fires when the client goes away first: released exactly once.
    res.once('close', () => controller.release(cls));
    next();
  };
}

/**
 * An empty `players` array in an identity-coded JSON body (a compressed body is not looked into: it is
 * admitted or refused as any heartbeat). A byte scan, not a parse: a false positive (the text inside an
 * event's payload) only admits a heartbeat, which the route then handles as any other.
 */
function rosterIsEmpty(req: Request): boolean {
  const { bytes, encoding } = receivedBody(req);
  return encoding === 'identity' && EMPTY_ROSTER.test(bytes.toString('latin1'));
}
const EMPTY_ROSTER = /"players"\s*:\s*\[\s*\]/;

/** Heartbeats over the ceilings, waiting for their body to be read: the signal (see {@link admitHeartbeat}). */
const deferred = new WeakMap<Request, ShedReason>();

/**
 * Admission of heartbeats, as two middlewares around the raw-body parser: `before` admits what is under
 * the heartbeat ceilings at once (no body read, as {@link admit}); a heartbeat over them is decided by
 * `after`, once its body is read: an empty roster (a shutdown's final heartbeat, or an empty server) is
 * admitted up to {@link FINAL_HEARTBEAT_SHARE} times the ceilings, anything else is refused 503
 * `overloaded` as before. A refused heartbeat thus costs a body read and a byte scan, only while the
 * heartbeat ceilings (the last to be reached) are.
 */
export function admitHeartbeat(controller: AdmissionController): { before: RequestHandler; after: RequestHandler } {
  return {
    before: (req, res, next) => {
      const reason = controller.overCeiling(1);
      if (reason) deferred.set(req, reason);
      else enterHeartbeat(controller, res);
      next();
    },
    after: (req, res, next) => {
      const reason = deferred.get(req);
      if (!reason) return next();
      if (rosterIsEmpty(req) && !controller.overCeiling(FINAL_HEARTBEAT_SHARE)) {
        enterHeartbeat(controller, res);
        return next();
      }
      const refusal = controller.refuse('heartbeat', reason);
      next(new OverloadedError(refusal.retryAfterSeconds, refusal.reason));
    },
  };
}
