/** The tie rules of src/doors/evaluate.ts that need exact timestamps and ids (pure; no I/O). */
import { expect } from 'chai';
import { comparePolicies, evaluateDoor } from '../../src/doors/evaluate.js';
import type { DoorDef, PolicyDef } from '../../src/doors/door-types.js';
import type { SubjectContext } from '../../src/doors/subject-context.js';

const policy = (id: string, effect: 'allow' | 'deny', priority: number, createdAtMs: number): PolicyDef => ({
  id, effect, priority, createdAtMs, subjectType: 'everyone', subjectIds: new Set(), includeDescendants: false, conditions: {},
});

const nobody: SubjectContext = {
  externalId: 'u', isMember: false, joinedAtMs: null, positionIds: new Set(), directUnitIds: new Set(), unitIds: new Set(),
  organizationIds: new Set(), clockedIn: false, records: [], operations: [],
};

function door(policies: PolicyDef[]): DoorDef {
  return { id: 'd', key: 'd', name: 'd', kind: 'door', defaultEffect: 'deny', failMode: 'closed', forcedState: 'auto', policies: [...policies].sort(comparePolicies) };
}

describe('door evaluation tie rules', () => {
  it('orders by priority (high first), then createdAt (old first), then id (string order)', () => {
    const sorted = [policy('c', 'allow', 1, 5), policy('b', 'allow', 1, 5), policy('a', 'allow', 1, 9), policy('z', 'allow', 2, 9)].sort(comparePolicies);
    expect(sorted.map((p) => p.id)).to.deep.equal(['z', 'b', 'c', 'a']);
  });

  it('same priority and same createdAt: the smaller id is named, for allows and for denies', () => {
    expect(evaluateDoor(door([policy('b', 'allow', 0, 1), policy('a', 'allow', 0, 1)]), nobody, 0, 60_000).reason).to.equal('policy_allow:a');
    expect(evaluateDoor(door([policy('b', 'deny', 0, 1), policy('a', 'deny', 0, 1), policy('0', 'allow', 9, 0)]), nobody, 0, 60_000).reason).to.equal('policy_deny:a');
  });

  it('a decision lives the TTL unless a condition boundary comes first', () => {
    const now = 1_000_000;
    expect(evaluateDoor(door([policy('a', 'allow', 0, 1)]), nobody, now, 60_000).expiresAtMs).to.equal(now + 60_000);
    const ending = { ...nobody, operations: [{ type: 'op', startsAtMs: 0, endsAtMs: now + 5_000, unitId: null, organizationId: null }] };
    const p = { ...policy('a', 'allow', 0, 1), conditions: { operationType: 'op' } };
    expect(evaluateDoor(door([p]), ending, now, 60_000)).to.include({ decision: 'allow', expiresAtMs: now + 5_000 });
  });
});
