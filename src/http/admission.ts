/**
 * Admission middleware of the game endpoints (issue #15 item 2; src/limits/admission.ts decides). Mounted
 * per route before the raw-body parser, so a refused request costs no body read, no HMAC, no Redis: the
 * refusal goes to the one error handler as {@link OverloadedError} (503 `overloaded`, `Retry-After`).
 * An admitted request counts as in flight until its response is finished or its connection closed.
 */
import type { RequestHandler } from 'express';
import type { AdmissionController, RequestClass } from '../limits/admission.js';
import { OverloadedError } from '../errors.js';

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
