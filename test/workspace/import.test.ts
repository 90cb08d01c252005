/**
 * Issue #4 `workspace import` / `workspace export`: a whole org chart loads in one step, references by
 * client-side keys; an invalid file is refused whole with every problem listed and nothing written.
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { ImportRefusedError, importWorkspace } from '../../src/workspace/workspace-import.js';
import { exportWorkspace } from '../../src/workspace/workspace-export.js';
import { createOrganization } from '../../src/workspace/organizations.js';
import { createMember } from '../../src/workspace/members.js';
import { RecordingChanges, rejection } from '../derived/fixtures.js';

/** A complete org chart in the import format. */
function orgChart(gameId: string) {
  return {
    version: 1,
    workspace: { timeZone: 'Europe/Berlin', weekStartsOn: 1 },
    organizations: [{ key: 'navy', name: 'Navy' }, { key: 'army', name: 'Army' }],
    units: [
      { key: 'ship', name: 'Ship A', parent: 'fleet', organization: 'navy' }, // child listed before its parent
      { key: 'fleet', name: 'Fleet', organization: 'navy' },
      { key: 'hq', name: 'HQ', parent: null, organization: 'army' },
    ],
    positions: [
      { key: 'captain', unit: 'ship', name: 'Captain', autoClockIn: true, clockInGameIds: [gameId], clockInScopeIds: ['bridge'], payoutRateMinor: 2500, payoutUnit: 'USD', quotaMinutesPerWeek: 600 },
      { key: 'sailor', unit: 'ship', name: 'Sailor', autoClockIn: true, payoutRateMinor: 10, payoutUnit: 'points' },
      { key: 'general', unit: 'hq', name: 'General' },
    ],
    members: [
      { externalId: '1001', displayName: 'Alice', joinedAt: '2025-01-01T00:00:00Z', positions: ['captain', 'sailor'] },
      { externalId: '1002', joinedAt: '2025-06-01T00:00:00Z', positions: ['general'] },
      { externalId: '1003' },
    ],
    operations: [{ type: 'raid', title: 'Raid night', startsAt: '2026-06-01T18:00:00Z', endsAt: '2026-06-01T20:00:00Z', unit: 'fleet' }],
    records: [
      { member: '1002', type: 'warning', reason: 'late', issuedAt: '2026-01-01T00:00:00Z', expiresAt: '2026-02-01T00:00:00Z' },
      { member: '1001', type: 'strike', issuedAt: '2026-01-02T00:00:00Z', revoked: true },
    ],
  };
}

/** Every row of the workspace model, for "nothing was written". */
async function modelCounts(h: Harness, workspaceId: string) {
  const where = { workspaceId };
  return {
    organizations: await h.db.organization.count({ where }),
    units: await h.db.unit.count({ where }),
    positions: await h.db.position.count({ where }),
    members: await h.db.member.count({ where }),
    assignments: await h.db.assignment.count({ where: { member: where } }),
    operations: await h.db.operation.count({ where }),
    records: await h.db.memberRecord.count({ where }),
    settings: await h.db.workspace.findUniqueOrThrow({ where: { id: workspaceId }, select: { timeZone: true, weekStartsOn: true } }),
  };
}

describe('workspace import and export', () => {
  const h = new Harness();
  after(() => h.close());

  it('loads a whole org chart in one step, resolving keys', async () => {
    const g = await h.game();
    const changes = new RecordingChanges();
    const summary = await importWorkspace(h.db, g.workspaceId, orgChart(g.gameId), changes, new Date('2026-03-01T00:00:00Z'));
    expect(summary).to.deep.equal({ workspaceId: g.workspaceId, organizations: 2, units: 3, positions: 3, members: 3, assignments: 3, operations: 1, records: 2, settingsUpdated: true });
    expect(changes.workspaces).to.deep.equal([g.workspaceId]);

    const units = await h.db.unit.findMany({ where: { workspaceId: g.workspaceId }, include: { parent: true, organization: true } });
    const unit = (name: string) => units.find((u) => u.name === name)!;
    expect(unit('Ship A').parent?.name).to.equal('Fleet');
    expect(unit('Ship A').organization?.name).to.equal('Navy');
    expect(unit('HQ').parentId).to.equal(null);
    const captain = await h.db.position.findFirstOrThrow({ where: { workspaceId: g.workspaceId, name: 'Captain' } });
    expect(captain).to.include({ unitId: unit('Ship A').id, autoClockIn: true, payoutRateMinor: 2500n, payoutUnit: 'USD', quotaMinutesPerWeek: 600 });
    expect(captain.clockInGameIds).to.deep.equal([g.gameId]);
    const alice = await h.db.member.findFirstOrThrow({ where: { workspaceId: g.workspaceId, externalId: '1001' }, include: { assignments: { include: { position: true } }, records: true } });
    expect(alice.assignments.map((a) => a.position.name).sort()).to.deep.equal(['Captain', 'Sailor']);
    expect(alice.records.map((r) => [r.type, r.revoked])).to.deep.equal([['strike', true]]);
    const noDate = await h.db.member.findFirstOrThrow({ where: { workspaceId: g.workspaceId, externalId: '1003' } });
    expect(noDate.joinedAt.toISOString()).to.equal('2026-03-01T00:00:00.000Z');
    const op = await h.db.operation.findFirstOrThrow({ where: { workspaceId: g.workspaceId } });
    expect(op.unitId).to.equal(unit('Fleet').id);
    expect((await modelCounts(h, g.workspaceId)).settings).to.deep.equal({ timeZone: 'Europe/Berlin', weekStartsOn: 1 });
  });

  it('refuses a bad file whole, listing every problem, and writes nothing', async () => {
    const g = await h.game();
    const before = await modelCounts(h, g.workspaceId);
    const file = orgChart(g.gameId) as Record<string, unknown> & ReturnType<typeof orgChart>;
    const bad = {
      ...file,
      workspace: { timeZone: 'Mars/Olympus', weekStartsOn: 1 },
      postions: [], // typo: unknown field
      organizations: [...file.organizations, { key: 'navy', name: 'Navy again' }],
      units: [...file.units, { key: 'loop-a', name: 'Loop A', parent: 'loop-b' }, { key: 'loop-b', name: 'Loop B', parent: 'loop-a' }, { key: 'lost', name: 'Lost', parent: 'nowhere' }],
      positions: [...file.positions, { key: 'bad-pay', unit: 'hq', name: 'Bad pay', payoutRateMinor: 5, payoutUnit: 'DOUBLOONS' }, { key: 'orphan', unit: 'no-such-unit', name: 'Orphan', quotaMinutesPerWeek: 'lots' }],
      members: [...file.members, { externalId: '1001' }, { externalId: '2000', positions: ['admiral'], joinedAt: 'yesterday' }],
      operations: [{ type: 'raid', title: 'Backwards', startsAt: '2026-06-01T20:00:00Z', endsAt: '2026-06-01T18:00:00Z' }],
      records: [{ member: 'ghost', type: 'warning', issuedAt: '2026-01-01T00:00:00Z' }],
    };
    const err = await rejection(importWorkspace(h.db, g.workspaceId, bad, new RecordingChanges()), ImportRefusedError);
    expect(err.kind).to.equal('invalid');
    expect(err.code).to.equal('invalid_import');
    const expected = [
      '/: unknown field "postions"',
      '/positions/4/quotaMinutesPerWeek: must be integer,null',
      '/members/4/joinedAt: must match format "date-time"',
      '/workspace/timeZone: unknown time zone "Mars/Olympus"',
      '/organizations/2/key: duplicate key "navy"',
      '/units/5/parent: unknown unit key "nowhere"',
      '/units/3/parent: unit "loop-a" is its own ancestor (cycle)',
      '/units/4/parent: unit "loop-b" is its own ancestor (cycle)',
      '/positions/3: payoutUnit "DOUBLOONS" is neither "points" nor an ISO 4217 currency code',
      '/positions/4/unit: unknown unit key "no-such-unit"',
      '/members/3/externalId: duplicate externalId "1001"',
      '/members/4/positions/0: unknown position key "admiral"',
      '/operations/0: endsAt must be after startsAt',
      '/records/0/member: no member with externalId "ghost" in the file or the workspace',
    ];
    expect(err.problems).to.have.members(expected);
    expect(err.problems).to.have.length(expected.length);
    expect(await modelCounts(h, g.workspaceId)).to.deep.equal(before);
  });

  it('refuses names and members that already exist in the workspace, and keeps what was there', async () => {
    const g = await h.game();
    await createOrganization(h.db, { workspaceId: g.workspaceId, name: 'Navy' });
    await createMember(h.db, { workspaceId: g.workspaceId, externalId: '1002' }, new RecordingChanges());
    const before = await modelCounts(h, g.workspaceId);
    const err = await rejection(importWorkspace(h.db, g.workspaceId, orgChart(g.gameId), new RecordingChanges()), ImportRefusedError);
    expect(err.problems).to.deep.equal(['/organizations/0/name: the workspace already has an organization "Navy"', '/members/1/externalId: the workspace already has a member "1002"']);
    expect(await modelCounts(h, g.workspaceId)).to.deep.equal(before);
    // records may point at members that already exist
    const ok = await importWorkspace(h.db, g.workspaceId, { version: 1, records: [{ member: '1002', type: 'warning', issuedAt: '2026-01-01T00:00:00Z' }] }, new RecordingChanges());
    expect(ok.records).to.equal(1);
  });

  it('refuses what is not a workspace file at all', async () => {
    const g = await h.game();
    for (const [data, problem] of [
      [[], '/: must be object'],
      [{ version: 2 }, '/version: must be 1'],
      [{ units: 'many' }, "/: must have required property 'version'"],
    ] as const) {
      const err = await rejection(importWorkspace(h.db, g.workspaceId, data, new RecordingChanges()), ImportRefusedError);
      expect(err.problems).to.include(problem);
    }
  });

  it('exports in the import format, and the export imports into another workspace unchanged', async () => {
    const a = await h.game();
    const chart = orgChart(a.gameId);
    chart.positions[0]!.clockInGameIds = []; // game ids belong to one workspace
    await importWorkspace(h.db, a.workspaceId, chart, new RecordingChanges());
    const exported = await exportWorkspace(h.db, a.workspaceId);
    expect(exported.units!.map((u) => [u.key, u.parent, u.organization])).to.deep.equal([
      ['fleet', null, 'navy'],
      ['ship-a', 'fleet', 'navy'],
      ['hq', null, 'army'],
    ]);
    expect(exported.members!.find((m) => m.externalId === '1001')!.positions).to.deep.equal(['captain', 'sailor']);

    const b = await h.game();
    await importWorkspace(h.db, b.workspaceId, JSON.parse(JSON.stringify(exported)), new RecordingChanges());
    expect(await exportWorkspace(h.db, b.workspaceId)).to.deep.equal(exported);
  });
});
