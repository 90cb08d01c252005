/**
 * Spec: Command types. Every type has a payload schema; a bad payload, an unknown type, the wrong kind of
 * target or an expiry out of range is refused at issue time with 400 and a message naming the problem,
 * and nothing is stored.
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { DomainError } from '../../src/errors.js';
import { DEFAULT_EXPIRY_SECONDS } from '../../src/commands/command-service.js';
import { COMMAND_TYPES, validateCommandPayload } from '../../src/schemas/commands.js';
import type { CommandTarget } from '../../src/commands/command-service.js';
import { beat, deleteCommands, issue } from './command-fixtures.js';

const user: CommandTarget = { externalId: 'u1' };
const server: CommandTarget = { externalServerId: 'srv-1' };

/** A valid example of every type, as a moderator would issue it. */
const VALID: [string, CommandTarget, unknown][] = [
  ['kick', user, { reason: 'exploiting' }],
  ['mute', user, { durationSeconds: 600, reason: 'spam' }],
  ['mute', user, { durationSeconds: 1 }],
  ['unmute', user, undefined],
  ['freeze', user, { reason: 'investigation' }],
  ['teleport', user, { position: { x: 1.5, y: 0, z: -20 } }],
  ['teleport', user, { place: 'jail' }],
  ['message', user, { text: 'please stop' }],
  ['message', server, { text: 'restart in 5 minutes' }],
  ['door_set_state', server, { doorKey: 'armory', state: 'locked' }],
  ['door_set_state', server, { doorKey: 'armory', state: 'auto' }],
  ['refresh_permissions', server, {}],
  ['shutdown', server, { reason: 'update' }],
  ['custom', server, { anything: [1, { deep: true }] }],
  ['custom', user, {}],
];

/** Bad payloads and the words the error message must contain. */
const INVALID: [string, unknown, string][] = [
  ['kick', {}, "must have required property 'reason'"],
  ['kick', { reason: '' }, 'payload.reason'],
  ['kick', { reason: 'x', reasn: 'typo' }, 'unknown field "reasn"'],
  ['mute', { reason: 'no duration' }, "'durationSeconds'"],
  ['mute', { durationSeconds: 1.5 }, 'payload.durationSeconds must be integer'],
  ['mute', { durationSeconds: 0 }, 'payload.durationSeconds must be >= 1'],
  ['teleport', {}, 'exactly one of: position, place'],
  ['teleport', { place: 'a', position: { x: 0, y: 0, z: 0 } }, 'exactly one of: position, place'],
  ['teleport', { position: { x: 0, y: 0 } }, "payload.position must have required property 'z'"],
  ['message', { text: 'x'.repeat(1001) }, 'payload.text'],
  ['door_set_state', { doorKey: 'a', state: 'open' }, 'payload.state must be one of: locked, unlocked, auto'],
  ['door_set_state', { state: 'locked' }, "'doorKey'"],
  ['refresh_permissions', { x: 1 }, 'unknown field "x"'],
  ['custom', [1, 2], 'payload must be object'],
  ['custom', 'text', 'payload must be object'],
  ['custom', { blob: 'x'.repeat(3000) }, 'at most 2048'],
];

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('command types and payloads', () => {
  const h = new Harness();
  let g: TestGame;
  before(async () => {
    g = await h.game();
    await beat(h, g, 'srv-1', ['u1']);
  });
  after(async () => {
    await deleteCommands(h, [g]);
    await h.close();
  });

  it('has a schema for each of the ten command types', () => {
    expect(COMMAND_TYPES).to.have.length(10);
    for (const t of COMMAND_TYPES) expect(VALID.some(([type]) => type === t), t).to.equal(true);
  });

  for (const [type, target, payload] of VALID) {
    it(`accepts ${type} ${JSON.stringify(payload)} for a ${target.externalId ? 'user' : 'server'}`, async () => {
      const c = await issue(h, g, { type, target, payload });
      const [entry] = await beat(h, g, 'srv-1', ['u1'], { acks: [] });
      expect(entry).to.deep.include({ id: c.id, type, payload: payload ?? {} });
      await beat(h, g, 'srv-1', ['u1'], { acks: [c.id] });
    });
  }

  for (const [type, payload, words] of INVALID) {
    it(`refuses ${type} ${JSON.stringify(payload).slice(0, 60)}`, async () => {
      const before = await h.db.command.count({ where: { gameId: g.gameId } });
      const err = await refusal(issue(h, g, { type, target: type === 'door_set_state' || type === 'refresh_permissions' ? server : user, payload }));
      expect([err.kind, err.code]).to.deep.equal(['invalid', 'invalid_payload']);
      expect(err.message).to.contain(words);
      expect(await h.db.command.count({ where: { gameId: g.gameId } })).to.equal(before);
    });
  }

  it('refuses an unknown type, listing the known ones', async () => {
    const err = await refusal(issue(h, g, { type: 'ban', target: user, payload: {} }));
    expect([err.kind, err.code]).to.deep.equal(['invalid', 'invalid_command_type']);
    expect(err.message).to.contain('kick, mute');
  });

  it('refuses the wrong kind of target, or none, or both', async () => {
    for (const [type, target, payload] of [
      ['kick', server, { reason: 'x' }],
      ['shutdown', user, {}],
      ['message', {} as CommandTarget, { text: 'x' }],
      ['message', { externalId: 'u1', externalServerId: 'srv-1' } as unknown as CommandTarget, { text: 'x' }],
    ] as const) {
      const err = await refusal(issue(h, g, { type, target, payload }));
      expect([err.kind, err.code], type).to.deep.equal(['invalid', 'invalid_target']);
    }
  });

  it(`defaults the expiry to ${DEFAULT_EXPIRY_SECONDS} s and refuses one out of range`, async () => {
    const c = await issue(h, g, { type: 'message', target: server, payload: { text: 'x' } });
    expect(c.expiresAt.getTime() - c.issuedAt.getTime()).to.equal(DEFAULT_EXPIRY_SECONDS * 1000);
    for (const expiresInSeconds of [0, 4, 86_401, 1.5]) {
      const err = await refusal(issue(h, g, { type: 'message', target: server, payload: { text: 'x' }, expiresInSeconds }));
      expect([err.kind, err.code]).to.deep.equal(['invalid', 'invalid_expiry']);
    }
  });

  it('validates without touching storage (usable before any write)', () => {
    expect(validateCommandPayload('unmute', undefined)).to.deep.equal({ type: 'unmute', payload: {} });
  });
});
