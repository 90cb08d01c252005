/**
 * Issue #32 item 4: door decisions are cached per subject context (src/doors/context-key.ts). Two users
 * may share a key only when every evaluation input but their id is equal, and their id too when a policy
 * names them.
 */
import { expect } from 'chai';
import { contextKey } from '../../src/doors/context-key.js';
import type { SubjectContext } from '../../src/doors/subject-context.js';

function ctx(overrides: Partial<SubjectContext> = {}): SubjectContext {
  return {
    externalId: 'u1',
    isMember: true,
    joinedAtMs: 1_700_000_000_000,
    positionIds: new Set(['p1', 'p2']),
    directUnitIds: new Set(['d1']),
    unitIds: new Set(['d1', 'root']),
    organizationIds: new Set(['o1']),
    clockedIn: false,
    records: [{ type: 'cert', issuedAtMs: 1, expiresAtMs: null }, { type: 'ban', issuedAtMs: 2, expiresAtMs: 3 }],
    operations: [{ type: 'raid', startsAtMs: 10, endsAtMs: 20, unitId: null, organizationId: null }],
    ...overrides,
  };
}
const none = new Set<string>();

describe('door context keys', () => {
  it('is equal for equal inputs, whatever the user and the order of sets and lists', () => {
    const reordered = ctx({
      externalId: 'u2',
      positionIds: new Set(['p2', 'p1']),
      unitIds: new Set(['root', 'd1']),
      records: [{ type: 'ban', issuedAtMs: 2, expiresAtMs: 3 }, { type: 'cert', issuedAtMs: 1, expiresAtMs: null }],
    });
    expect(contextKey(reordered, none)).to.equal(contextKey(ctx(), none));
    expect(contextKey(ctx(), none)).to.match(/^[A-Za-z0-9_-]{22}$/);
  });

  it('differs when any evaluation input differs', () => {
    const base = contextKey(ctx(), none);
    const variants: Partial<SubjectContext>[] = [
      { isMember: false },
      { joinedAtMs: 1_700_000_000_001 },
      { positionIds: new Set(['p1']) },
      { directUnitIds: new Set(['d2']) },
      { unitIds: new Set(['d1']) },
      { organizationIds: new Set() },
      { clockedIn: true },
      { records: [{ type: 'cert', issuedAtMs: 1, expiresAtMs: 5 }] },
      { operations: [{ type: 'raid', startsAtMs: 10, endsAtMs: 21, unitId: null, organizationId: null }] },
      { operations: [{ type: 'raid', startsAtMs: 10, endsAtMs: 20, unitId: 'd1', organizationId: null }] },
    ];
    for (const v of variants) expect(contextKey(ctx(v), none), JSON.stringify(Object.keys(v))).to.not.equal(base);
  });

  it('covers the user id only for a user a policy names', () => {
    const named = new Set(['u1']);
    expect(contextKey(ctx(), named)).to.not.equal(contextKey(ctx({ externalId: 'u2' }), named));
    expect(contextKey(ctx({ externalId: 'u2' }), named)).to.equal(contextKey(ctx({ externalId: 'u3' }), named));
  });
});
