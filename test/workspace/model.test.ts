/**
 * Issue #4 workspace model: the unit tree with descendants, tenure, active records, the schedule, rules
 * validation, assignments, deletion rules, and the door cache being told about changes.
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { NotFoundError, ValidationError } from '../../src/errors.js';
import { createOrganization, deleteOrganization, listOrganizations } from '../../src/workspace/organizations.js';
import { createUnit, deleteUnit, listUnits, subtreeOf, unitAncestors, unitDescendants, unitSubtree } from '../../src/workspace/units.js';
import { createPosition, deletePosition } from '../../src/workspace/positions.js';
import { createMember, memberPositions, tenureDays } from '../../src/workspace/members.js';
import { assignPosition, listAssignments, unassignPosition } from '../../src/workspace/assignments.js';
import { createOperation, operationActive, operationApplies } from '../../src/workspace/operations.js';
import { createRecord, hasActiveRecord, isRecordActive, listRecords, revokeRecord } from '../../src/workspace/records.js';
import { DoorSubjectInvalidator, WORKSPACE_FIELD, memberField } from '../../src/doors/subject-invalidation.js';
import { RecordingChanges, rejection } from '../derived/fixtures.js';

describe('workspace model', () => {
  const h = new Harness();
  after(() => h.close());

  it('builds a unit tree and answers descendants, subtrees and ancestors', async () => {
    const { workspaceId } = await h.game();
    const navy = await createOrganization(h.db, { workspaceId, name: 'Navy' });
    const fleet = await createUnit(h.db, { workspaceId, name: 'Fleet', organizationId: navy.id });
    const north = await createUnit(h.db, { workspaceId, name: 'North squadron', parentId: fleet.id });
    const south = await createUnit(h.db, { workspaceId, name: 'South squadron', parentId: fleet.id });
    const ship = await createUnit(h.db, { workspaceId, name: 'Ship A', parentId: north.id });
    const other = await createUnit(h.db, { workspaceId, name: 'Academy' });

    expect([...(await unitDescendants(h.db, fleet.id))].sort()).to.deep.equal([north.id, south.id, ship.id].sort());
    expect([...(await unitDescendants(h.db, north.id))]).to.deep.equal([ship.id]);
    expect([...(await unitDescendants(h.db, ship.id))]).to.deep.equal([]);
    expect([...(await unitSubtree(h.db, [north.id, other.id]))].sort()).to.deep.equal([north.id, ship.id, other.id].sort());
    expect(await unitAncestors(h.db, ship.id)).to.deep.equal([north.id, fleet.id]);
    const tree = await listUnits(h.db, workspaceId);
    expect(tree.map((u) => [u.name, u.depth])).to.deep.equal([['Academy', 0], ['Fleet', 0], ['North squadron', 1], ['Ship A', 2], ['South squadron', 1]]);
    expect([...subtreeOf(tree, [fleet.id])].sort()).to.deep.equal([fleet.id, north.id, south.id, ship.id].sort());
    // a cycle in hand-made data stops the pure walk
    expect([...subtreeOf([{ id: 'a', parentId: 'b' }, { id: 'b', parentId: 'a' }], ['a'])].sort()).to.deep.equal(['a', 'b']);
  });

  it('keeps references inside one workspace and refuses duplicates', async () => {
    const a = await h.game();
    const b = await h.game();
    const unitA = await createUnit(h.db, { workspaceId: a.workspaceId, name: 'A' });
    await rejection(createUnit(h.db, { workspaceId: b.workspaceId, name: 'B', parentId: unitA.id }), NotFoundError);
    await createOrganization(h.db, { workspaceId: a.workspaceId, name: 'Same' });
    await rejection(createOrganization(h.db, { workspaceId: a.workspaceId, name: ' Same ' }), ValidationError, /already exists/);
    await createOrganization(h.db, { workspaceId: b.workspaceId, name: 'Same' });
    const changes = new RecordingChanges();
    const m = await createMember(h.db, { workspaceId: b.workspaceId, externalId: 'x1' }, changes);
    await rejection(createMember(h.db, { workspaceId: b.workspaceId, externalId: 'x1' }, changes), ValidationError, /already exists/);
    const posA = await createPosition(h.db, { workspaceId: a.workspaceId, unitId: unitA.id, name: 'P' });
    await rejection(assignPosition(h.db, m.id, posA.id, changes), ValidationError, /different workspaces/);
  });

  it('validates position rules and lists every problem', async () => {
    const { workspaceId } = await h.game();
    const unit = await createUnit(h.db, { workspaceId, name: 'U' });
    const err = await rejection(
      createPosition(h.db, { workspaceId, unitId: unit.id, name: 'Bad', payoutRateMinor: 100n, quotaMinutesPerWeek: 0, clockInGameIds: ['00000000-0000-4000-8000-000000000001'] }),
      ValidationError,
    );
    expect(err.code).to.equal('invalid_rules');
    for (const part of [/payoutRateMinor and payoutUnit/, /quotaMinutesPerWeek/, /not a game of this workspace/]) expect(err.message).to.match(part);
    await rejection(createPosition(h.db, { workspaceId, unitId: unit.id, name: 'Bad unit', payoutRateMinor: 1n, payoutUnit: 'usd' }), ValidationError, /ISO 4217/);
    const ok = await createPosition(h.db, { workspaceId, unitId: unit.id, name: 'Yen', payoutRateMinor: 1000n, payoutUnit: 'JPY', quotaMinutesPerWeek: 10080 });
    expect(ok).to.include({ payoutRateMinor: 1000n, payoutUnit: 'JPY', quotaMinutesPerWeek: 10080, autoClockIn: false });
  });

  it('counts tenure in whole days since joining', async () => {
    const { workspaceId } = await h.game();
    const m = await createMember(h.db, { workspaceId, externalId: 'veteran', joinedAt: new Date('2026-01-01T12:00:00Z') }, new RecordingChanges());
    expect(tenureDays(m, new Date('2026-01-01T11:59:59Z'))).to.equal(0); // before joining
    expect(tenureDays(m, new Date('2026-01-02T11:59:59Z'))).to.equal(0);
    expect(tenureDays(m, new Date('2026-01-02T12:00:00Z'))).to.equal(1);
    expect(tenureDays(m, new Date('2026-12-31T12:00:00Z'))).to.equal(364);
  });

  it('treats a record as active once issued, until it expires or is revoked', async () => {
    const { workspaceId } = await h.game();
    const changes = new RecordingChanges();
    const m = await createMember(h.db, { workspaceId, externalId: 'offender' }, changes);
    const issuedAt = new Date('2026-05-01T00:00:00Z');
    const expiresAt = new Date('2026-05-08T00:00:00Z');
    const strike = await createRecord(h.db, { memberId: m.id, type: 'strike', reason: 'spam', issuedAt, expiresAt }, changes);
    await createRecord(h.db, { memberId: m.id, type: 'warning', issuedAt }, changes);
    const t = (iso: string) => new Date(iso);
    expect(isRecordActive(strike, t('2026-04-30T23:59:59Z'))).to.equal(false); // not issued yet
    expect(isRecordActive(strike, issuedAt)).to.equal(true);
    expect(isRecordActive(strike, t('2026-05-07T23:59:59Z'))).to.equal(true);
    expect(isRecordActive(strike, expiresAt)).to.equal(false); // expired
    expect(await hasActiveRecord(h.db, m.id, 'strike', t('2026-05-03T00:00:00Z'))).to.equal(true);
    expect(await hasActiveRecord(h.db, m.id, 'Strike', t('2026-05-03T00:00:00Z'))).to.equal(false); // types are exact
    expect(await hasActiveRecord(h.db, m.id, 'strike', expiresAt)).to.equal(false);
    expect(await hasActiveRecord(h.db, m.id, 'warning', t('2030-01-01T00:00:00Z'))).to.equal(true); // never expires
    expect((await listRecords(h.db, workspaceId, { activeAt: t('2026-06-01T00:00:00Z') })).map((r) => r.type)).to.deep.equal(['warning']);
    const revoked = await revokeRecord(h.db, strike.id, changes);
    expect(revoked.revoked).to.equal(true);
    expect(await hasActiveRecord(h.db, m.id, 'strike', t('2026-05-03T00:00:00Z'))).to.equal(false);
    expect(await listRecords(h.db, workspaceId, { memberId: m.id })).to.have.length(2); // revoked stays as history
    await rejection(createRecord(h.db, { memberId: m.id, type: 'ban', issuedAt, expiresAt: issuedAt }, changes), ValidationError, /expiresAt/);
    expect(changes.members.filter((x) => x.endsWith(':offender'))).to.have.length(4); // created, 2 records, revoked
  });

  it('answers whether an operation of a type runs, for whom', async () => {
    const { workspaceId } = await h.game();
    const changes = new RecordingChanges();
    const org = await createOrganization(h.db, { workspaceId, name: 'Org' });
    const parent = await createUnit(h.db, { workspaceId, name: 'Parent', organizationId: org.id });
    const child = await createUnit(h.db, { workspaceId, name: 'Child', parentId: parent.id });
    const startsAt = new Date('2026-06-01T18:00:00Z');
    const endsAt = new Date('2026-06-01T20:00:00Z');
    const op = await createOperation(h.db, { workspaceId, type: 'raid', title: 'Raid night', startsAt, endsAt, unitId: parent.id }, changes);
    await rejection(createOperation(h.db, { workspaceId, type: 'raid', title: 'x', startsAt: endsAt, endsAt: startsAt }, changes), ValidationError, /endsAt/);
    const during = new Date('2026-06-01T19:00:00Z');
    // someone in the child unit is in the parent's subtree: their units include the ancestors
    const inside = { unitIds: [child.id, ...(await unitAncestors(h.db, child.id))], organizationIds: [org.id] };
    const outside = { unitIds: ['00000000-0000-4000-8000-000000000009'], organizationIds: [] };
    expect(await operationActive(h.db, workspaceId, 'raid', during, inside)).to.equal(true);
    expect(await operationActive(h.db, workspaceId, 'raid', during, outside)).to.equal(false);
    expect(await operationActive(h.db, workspaceId, 'raid', during)).to.equal(true);
    expect(await operationActive(h.db, workspaceId, 'raid', endsAt)).to.equal(false); // [start, end)
    expect(await operationActive(h.db, workspaceId, 'training', during)).to.equal(false);
    expect(operationApplies({ ...op, unitId: null, organizationId: org.id }, during, { unitIds: [], organizationIds: [org.id] })).to.equal(true);
    expect(operationApplies({ ...op, unitId: parent.id, organizationId: org.id }, during, { unitIds: [parent.id], organizationIds: [] })).to.equal(false);
    expect(changes.workspaces).to.deep.equal([workspaceId]);
  });

  it('assigns positions, lists them and refuses to drop a unit that still holds positions', async () => {
    const { workspaceId } = await h.game();
    const changes = new RecordingChanges();
    const org = await createOrganization(h.db, { workspaceId, name: 'O' });
    const top = await createUnit(h.db, { workspaceId, name: 'Top', organizationId: org.id });
    const sub = await createUnit(h.db, { workspaceId, name: 'Sub', parentId: top.id });
    const captain = await createPosition(h.db, { workspaceId, unitId: sub.id, name: 'Captain', autoClockIn: true });
    const cook = await createPosition(h.db, { workspaceId, unitId: top.id, name: 'Cook' });
    const m = await createMember(h.db, { workspaceId, externalId: 'sailor' }, changes);
    await assignPosition(h.db, m.id, captain.id, changes);
    await assignPosition(h.db, m.id, cook.id, changes);
    await rejection(assignPosition(h.db, m.id, cook.id, changes), ValidationError, /already holds/);
    expect((await memberPositions(h.db, m.id)).map((p) => [p.name, p.unitName, p.organizationId])).to.deep.equal([['Captain', 'Sub', null], ['Cook', 'Top', org.id]]);
    expect((await listAssignments(h.db, workspaceId)).map((a) => [a.externalId, a.positionName])).to.deep.equal([['sailor', 'Captain'], ['sailor', 'Cook']]);
    await unassignPosition(h.db, m.id, cook.id, changes);
    await rejection(unassignPosition(h.db, m.id, cook.id, changes), NotFoundError);

    await rejection(deleteUnit(h.db, top.id, changes), ValidationError, /child unit/);
    await deletePosition(h.db, cook.id, changes);
    const r = await deleteUnit(h.db, top.id, changes, { recursive: true });
    expect(r.deletedUnits).to.equal(2);
    expect(await h.db.position.count({ where: { workspaceId } })).to.equal(0);
    expect(await h.db.assignment.count({ where: { memberId: m.id } })).to.equal(0);
    await deleteOrganization(h.db, org.id, changes);
    expect(await listOrganizations(h.db, workspaceId)).to.deep.equal([]);
    expect(changes.workspaces).to.deep.equal([workspaceId, workspaceId, workspaceId]);
  });

  it('retires cached door decisions through the door side when the model changes', async () => {
    const g = await h.game();
    const doors = new DoorSubjectInvalidator(h.db, h.redis, h.keySpace);
    const key = h.keySpace.game(g.gameId).doorSubjects();
    const m = await createMember(h.db, { workspaceId: g.workspaceId, externalId: 'door-user' }, doors);
    await createRecord(h.db, { memberId: m.id, type: 'warning' }, doors);
    await createOperation(h.db, { workspaceId: g.workspaceId, type: 'op', title: 'Op', startsAt: new Date(), endsAt: new Date(Date.now() + 3_600_000) }, doors);
    expect(await h.redis.hget(key, memberField('door-user'))).to.equal('2');
    expect(await h.redis.hget(key, WORKSPACE_FIELD)).to.equal('1');
  });
});
