/**
 * The pure rules behind bans/check and the platform writes: scope coverage, expiry at the exact
 * millisecond, which ban decides, the restriction a game should carry, and the platform request shape.
 */
import { expect } from 'chai';
import { decideBan } from '../../src/bans/ban-decision.js';
import type { BlocklistEntry } from '../../src/bans/ban-types.js';
import { desiredFromBans, matchesPlatform, writeStateFor } from '../../src/bans/restriction-state.js';
import { parseRetryAfter, PlatformRestrictionClient, PlatformWriteError } from '../../src/bans/platform-restriction-client.js';

const entry = (over: Partial<BlocklistEntry>): BlocklistEntry => ({ id: 'b', scope: 'workspace', gameId: null, externalServerId: null, expiresAt: null, reason: 'r', ...over });
const target = { gameId: 'G', externalServerId: 'S' };

describe('ban rules', () => {
  it('a ban applies while now < expiresAt, to the millisecond', () => {
    const e = [entry({ expiresAt: 10_000 })];
    expect(decideBan(e, target, 9_999).banned).to.equal(true);
    expect(decideBan(e, target, 10_000).banned).to.equal(false);
  });

  it('scope coverage: server needs game and server, game needs the game, workspace covers all', () => {
    expect(decideBan([entry({ scope: 'server', gameId: 'G', externalServerId: 'S' })], target, 0).banned).to.equal(true);
    expect(decideBan([entry({ scope: 'server', gameId: 'G', externalServerId: 'T' })], target, 0).banned).to.equal(false);
    expect(decideBan([entry({ scope: 'server', gameId: 'H', externalServerId: 'S' })], target, 0).banned).to.equal(false);
    expect(decideBan([entry({ scope: 'game', gameId: 'G' })], target, 0).banned).to.equal(true);
    expect(decideBan([entry({ scope: 'game', gameId: 'H' })], target, 0).banned).to.equal(false);
    expect(decideBan([entry({ scope: 'workspace' })], target, 0).banned).to.equal(true);
  });

  it('the longest-lasting applicable ban decides; on a tie the wider scope', () => {
    const d = decideBan([entry({ id: 'a', scope: 'game', gameId: 'G', expiresAt: 50 }), entry({ id: 'b', scope: 'workspace', expiresAt: 90 }), entry({ id: 'c', scope: 'server', gameId: 'G', externalServerId: 'S', expiresAt: 5 })], target, 0);
    expect(d).to.include({ banId: 'b', expiresAt: 90, scope: 'workspace' });
    expect(decideBan([entry({ id: 'p', scope: 'server', gameId: 'G', externalServerId: 'S' }), entry({ id: 't', expiresAt: 99 })], target, 0)).to.include({ banId: 'p', expiresAt: null });
    expect(decideBan([entry({ id: 's', scope: 'server', gameId: 'G', externalServerId: 'S' }), entry({ id: 'w' })], target, 0).banId).to.equal('w');
  });

  it('the platform restriction follows the longest ban; durations round up to whole seconds', () => {
    const now = 1_000_000;
    const bans = [
      { id: 'a', externalId: 'u', expiresAt: new Date(now + 1500), reason: 'short', issuedBy: 'm' },
      { id: 'b', externalId: 'u', expiresAt: new Date(now + 60_000), reason: 'long', issuedBy: 'm' },
      { id: 'x', externalId: 'u', expiresAt: new Date(now - 1), reason: 'expired', issuedBy: 'm' },
    ];
    const d = desiredFromBans(bans, now);
    expect(d).to.include({ active: true, banId: 'b', expiresAt: now + 60_000, displayReason: 'long' });
    expect(writeStateFor(d, now + 500)).to.deep.equal({ active: true, durationSeconds: 60 });
    expect(writeStateFor(desiredFromBans([bans[0]!], now), now + 1)).to.deep.equal({ active: true, durationSeconds: 2 });
    expect(writeStateFor(desiredFromBans([{ ...bans[0]!, expiresAt: null }], now), now)).to.deep.equal({ active: true, durationSeconds: null });
    expect(desiredFromBans([bans[2]!], now).active).to.equal(false);
  });

  it('compares a desired restriction with the last write as the platform enforces it now', () => {
    const now = 1_000_000;
    const active = { active: true, expiresAt: now + 60_000, banId: 'b', privateReason: '', displayReason: '' };
    const inactive = { ...active, active: false, expiresAt: null };
    const written = (durationSeconds: number | null, at = now, on = true) => ({ active: on, durationSeconds, writtenAt: new Date(at) });
    expect(matchesPlatform(inactive, null, now)).to.equal(true);
    expect(matchesPlatform(active, null, now)).to.equal(false);
    expect(matchesPlatform(active, written(60), now)).to.equal(true);
    expect(matchesPlatform(active, written(600), now)).to.equal(false);
    expect(matchesPlatform({ ...active, expiresAt: null }, written(null), now)).to.equal(true);
    expect(matchesPlatform(inactive, written(60, now - 120_000), now), 'a lapsed timed restriction is inactive').to.equal(true);
    expect(matchesPlatform(inactive, written(null), now)).to.equal(false);
  });

  it('builds the platform request without the API key in the URL, and classifies failures', async () => {
    const calls: { url: string; init: RequestInit }[] = [];
    const answers = [new Response('{}', { status: 200 }), new Response('slow down', { status: 429, headers: { 'retry-after': '7' } }), new Response('bad', { status: 400 })];
    const fake = (async (url: string, init: RequestInit) => {
      calls.push({ url, init });
      return answers.shift()!;
    }) as unknown as typeof fetch;
    const client = new PlatformRestrictionClient({ universeId: 'U 1', cloudApiBaseUrl: 'https://api.example/', cloudApiKey: 'k-secret' }, { fetch: fake });
    const write = { userId: '77', active: true, durationSeconds: 30, privateReason: 'p', displayReason: 'd', idempotencyKey: 'idem-1', firstSentAt: new Date(0) };
    await client.write(write);
    expect(calls[0]!.url).to.equal('https://api.example/cloud/v2/universes/U%201/user-restrictions/77?updateMask=gameJoinRestriction&idempotencyKey.key=idem-1&idempotencyKey.firstSent=1970-01-01T00%3A00%3A00.000Z');
    expect(calls[0]!.init.method).to.equal('PATCH');
    expect((calls[0]!.init.headers as Record<string, string>)['x-api-key']).to.equal('k-secret');
    expect(JSON.parse(calls[0]!.init.body as string)).to.deep.equal({ gameJoinRestriction: { active: true, duration: '30s', privateReason: 'p', displayReason: 'd', excludeAltAccounts: false } });
    const limited = (await client.write(write).catch((e: unknown) => e)) as PlatformWriteError;
    expect(limited).to.be.instanceOf(PlatformWriteError);
    expect(limited).to.include({ status: 429, retryable: true, retryAfterMs: 7000 });
    const refused = (await client.write(write).catch((e: unknown) => e)) as PlatformWriteError;
    expect(refused).to.include({ status: 400, retryable: false });
    expect(refused.message).not.to.contain('k-secret');
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).to.equal(60_000);
    expect(parseRetryAfter('soon', 0)).to.equal(null);
  });
});
