/**
 * `admin commands issue|list|show` (issue #3, operator CLI conventions: `--json` prints exactly one JSON
 * object on stdout; errors go to stderr with a non-zero exit). Runs the real dispatcher in-process
 * against the test database and this process's Redis prefix.
 */
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import type { TestGame } from '../support/harness.js';
import { runCli } from '../../src/adapters/admin/cli.js';
import { ADMIN_COMMANDS } from '../../src/adapters/admin/commands/index.js';
import { expireDueCommands } from '../../src/commands/command-expiry.js';
import { beat, deleteCommands, ownPrefixHarness, closeOwnPrefix } from './command-fixtures.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('admin commands issue|list|show', () => {
  const h = ownPrefixHarness('cli');
  const games: TestGame[] = [];
  let g: TestGame;

  async function admin(...argv: string[]): Promise<Run> {
    const collect = () => {
      const stream = new PassThrough();
      let text = '';
      stream.setEncoding('utf8').on('data', (d: string) => (text += d));
      return { stream, text: () => text };
    };
    const out = collect();
    const err = collect();
    const code = await runCli(argv, { commands: ADMIN_COMMANDS, version: '0.0.0-test', loadConfig: () => h.config, stdout: out.stream, stderr: err.stream });
    return { code, stdout: out.text(), stderr: err.text() };
  }

  /** Asserts exit 0 and exactly one JSON object on stdout. */
  function json<T = Record<string, any>>(r: Run): T {
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines).to.have.length(1);
    return JSON.parse(lines[0]!) as T;
  }

  before(async () => {
    g = await h.game();
    games.push(g);
    await beat(h, g, 'srv-1', ['alice', 'bob']);
  });
  after(async () => {
    await deleteCommands(h, games);
    await closeOwnPrefix(h);
  });

  it('issue --json prints one object with the id, and the command is routed and recorded with its issuer', async () => {
    const c = json(await admin('commands', 'issue', '--game', g.gameId, '--type', 'kick', '--user', 'alice', '--payload', '{"reason":"griefing"}', '--expires-in', '60', '--json'));
    expect(c).to.include({ gameId: g.gameId, type: 'kick', status: 'pending', routedTo: 'srv-1' });
    expect(c.id).to.match(/^[0-9a-f-]{36}$/);
    expect(Date.parse(c.expiresAt) - Date.parse(c.issuedAt)).to.equal(60_000);
    const row = await h.db.command.findUniqueOrThrow({ where: { id: c.id } });
    expect(row.issuedBy).to.match(/^cli/);
    expect(row.payload).to.deep.equal({ reason: 'griefing' });
    const [entry] = await beat(h, g, 'srv-1', ['alice', 'bob']);
    expect(entry!.id).to.equal(c.id);
  });

  it('issue without --json prints readable text and tells when the user is offline', async () => {
    const r = await admin('commands', 'issue', '--game', g.gameId, '--type', 'message', '--user', 'carol', '--payload', '{"text":"hi"}');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^id: +[0-9a-f-]{36}$/m).and.contain('(waiting for the user)');
    expect(r.stderr).to.contain('user carol is not online');
  });

  it('refuses bad input: exit 2 for usage, exit 1 with the error code for a bad payload, stdout empty', async () => {
    const both = await admin('commands', 'issue', '--game', g.gameId, '--type', 'kick', '--user', 'a', '--server', 'srv-1', '--json');
    expect([both.code, both.stdout]).to.deep.equal([2, '']);
    expect(both.stderr).to.contain('exactly one of --server or --user');
    const notJson = await admin('commands', 'issue', '--game', g.gameId, '--type', 'kick', '--user', 'a', '--payload', '{reason:', '--json');
    expect([notJson.code, notJson.stdout]).to.deep.equal([2, '']);
    expect(notJson.stderr).to.contain('--payload is not valid JSON');
    const bad = await admin('commands', 'issue', '--game', g.gameId, '--type', 'mute', '--user', 'bob', '--payload', '{"durationSeconds":"ten"}', '--json');
    expect([bad.code, bad.stdout]).to.deep.equal([1, '']);
    expect(bad.stderr.trim()).to.equal('error: payload.durationSeconds must be integer [invalid_payload]');
    const gone = await admin('commands', 'issue', '--game', g.gameId, '--type', 'shutdown', '--server', 'srv-nope', '--json');
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.contain('[server_not_live]');
    const status = await admin('commands', 'list', '--game', g.gameId, '--status', 'done', '--json');
    expect(status.code).to.equal(2);
  });

  it('list shows where each command stands now (live status), filtered by status, user and issuer', async () => {
    const mute = json(await admin('commands', 'issue', '--game', g.gameId, '--type', 'mute', '--user', 'bob', '--payload', '{"durationSeconds":30}', '--json'));
    const freeze = json(await admin('commands', 'issue', '--game', g.gameId, '--type', 'freeze', '--user', 'bob', '--json'));
    await beat(h, g, 'srv-1', ['alice', 'bob']);
    // acked and failed in Redis; not yet flushed to Postgres, but list already shows it
    await beat(h, g, 'srv-1', ['alice', 'bob'], { acks: [mute.id], failures: [{ id: freeze.id, reason: 'player is a moderator' }] });
    const listed = json<{ commands: any[] }>(await admin('commands', 'list', '--game', g.gameId, '--user', 'bob', '--json')).commands;
    const byId = Object.fromEntries(listed.map((c) => [c.id, c]));
    expect(byId[mute.id]).to.include({ status: 'acked', server: 'srv-1', type: 'mute' });
    expect(byId[mute.id].target).to.deep.equal({ externalServerId: null, externalId: 'bob' });
    expect(byId[freeze.id]).to.include({ status: 'failed', failureReason: 'player is a moderator' });
    expect(byId[freeze.id].issuedBy).to.match(/^cli/);
    const failed = json<{ commands: any[] }>(await admin('commands', 'list', '--game', g.gameId, '--status', 'failed,expired', '--json')).commands;
    expect(failed.map((c) => c.id)).to.deep.equal([freeze.id]);
    const byOther = json<{ commands: any[] }>(await admin('commands', 'list', '--game', g.gameId, '--issued-by', 'someone-else', '--json')).commands;
    expect(byOther).to.deep.equal([]);
    const text = await admin('commands', 'list', '--game', g.gameId, '--user', 'bob');
    expect(text.stdout).to.match(/^ID +TYPE +TARGET +STATUS/).and.contain('player is a moderator');
  });

  it('surfaces an expired command to its issuer: list and show after the expiry worker and the flush', async () => {
    const c = json(await admin('commands', 'issue', '--game', g.gameId, '--type', 'teleport', '--user', 'away', '--payload', '{"place":"jail"}', '--expires-in', '5', '--json'));
    await expireDueCommands(h.redis, h.keySpace, Date.parse(c.expiresAt));
    await h.flush(g.gameId);
    const listed = json<{ commands: any[] }>(await admin('commands', 'list', '--game', g.gameId, '--status', 'expired', '--json')).commands;
    expect(listed.map((x) => x.id)).to.deep.equal([c.id]);
    const shown = json(await admin('commands', 'show', '--id', c.id, '--json'));
    expect(shown).to.include({ id: c.id, status: 'expired', type: 'teleport' });
    expect(shown.payload).to.deep.equal({ place: 'jail' });
    expect(shown.issuedBy).to.match(/^cli/);
    expect(shown.transitions.map((t: any) => [t.toStatus, t.at])).to.deep.equal([
      ['pending', c.issuedAt],
      ['expired', c.expiresAt],
    ]);
  });

  it('nudges --enabled needs the platform settings, then turns nudges on (audited, key never printed)', async () => {
    const refused = await admin('commands', 'nudges', '--game', g.gameId, '--enabled', '--json');
    expect([refused.code, refused.stdout]).to.deep.equal([1, '']);
    expect(refused.stderr).to.contain('[push_not_configured]');
    await h.db.game.update({ where: { id: g.gameId }, data: { universeId: '777', cloudApiKey: 'secret-cloud-key' } });
    const on = json(await admin('commands', 'nudges', '--game', g.gameId, '--enabled', '--json'));
    expect(on).to.deep.equal({ gameId: g.gameId, nudgesEnabled: true, universeId: '777', cloudApiBaseUrl: 'https://apis.roblox.com', topic: 'gis-nudge' });
    expect(JSON.stringify(on)).to.not.contain('secret-cloud-key');
    expect((await h.db.game.findUniqueOrThrow({ where: { id: g.gameId } })).nudgesEnabled).to.equal(true);
    const audit = await h.db.auditLog.findFirstOrThrow({ where: { gameId: g.gameId, action: 'game.set-nudges' } });
    expect(audit.detail).to.deep.equal({ from: false, to: true });
    const off = json(await admin('commands', 'nudges', '--game', g.gameId, '--no-enabled', '--json'));
    expect(off.nudgesEnabled).to.equal(false);
    expect((await admin('commands', 'nudges', '--game', g.gameId, '--json')).code).to.equal(2);
    // The old spellings are refused with the new one, and change nothing.
    for (const [old, now] of [['--enable', '--enabled'], ['--disable', '--no-enabled'], ['--enabled=true', '--enabled for yes']] as const) {
      const r = await admin('commands', 'nudges', '--game', g.gameId, old, '--json');
      expect([r.code, r.stdout], old).to.deep.equal([2, '']);
      expect(r.stderr, old).to.contain(now);
    }
    expect((await h.db.game.findUniqueOrThrow({ where: { id: g.gameId } })).nudgesEnabled).to.equal(false);
  });

  it('show prints every transition with its time and server', async () => {
    const c = json(await admin('commands', 'issue', '--game', g.gameId, '--type', 'refresh_permissions', '--server', 'srv-1', '--json'));
    await beat(h, g, 'srv-1', ['alice', 'bob']);
    await beat(h, g, 'srv-1', ['alice', 'bob'], { acks: [c.id] });
    await h.flush(g.gameId);
    const shown = json(await admin('commands', 'show', '--id', c.id, '--json'));
    expect(shown.status).to.equal('acked');
    expect(shown.transitions.map((t: any) => [t.toStatus, t.externalServerId])).to.deep.equal([['pending', null], ['dispatched', 'srv-1'], ['acked', 'srv-1']]);
    for (const t of shown.transitions) expect(Date.parse(t.at)).to.be.at.least(Date.parse(c.issuedAt));
    const text = await admin('commands', 'show', '--id', c.id);
    expect(text.stdout).to.match(/^TRANSITION +AT +SERVER/m).and.match(/^acked +\S+ +srv-1/m);
    const unknown = await admin('commands', 'show', '--id', '00000000-0000-4000-8000-000000000000', '--json');
    expect([unknown.code, unknown.stdout]).to.deep.equal([1, '']);
    expect(unknown.stderr).to.contain('[unknown_command]');
  });
});
