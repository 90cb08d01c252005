/**
 * The project's Lua scripts run by EVALSHA (src/store/redis.ts `runScript`); a Redis whose script cache is
 * empty (fresh, restarted, or after SCRIPT FLUSH) answers NOSCRIPT, and the call is then run by EVAL and
 * answers as usual. The scripts of one event-loop turn are held for one write. On a private
 * redis-server: SCRIPT FLUSH would empty the shared Redis's cache for everyone's tests.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { PrivateRedis } from '../support/private-redis.js';

describe('redis scripts: EVALSHA, EVAL on NOSCRIPT; one write per event-loop turn', () => {
  let server: PrivateRedis;
  let client: AppRedis;
  let admin: Redis;
  const meta = 'scripts-test:{w:1}:meta';
  const list = 'scripts-test:{w:1}:list';

  before(async () => {
    server = await PrivateRedis.create({ appendonly: false });
    client = createRedis(server.url, { name: 'test-scripts' });
    admin = new Redis(server.url);
    await admin.hset(meta, 'built', '1');
    await admin.hset(list, 'u1', '7|[]');
  });
  after(async () => {
    await Promise.allSettled([client?.quit(), admin?.quit()]);
    await server?.destroy();
  });

  const lookup = () => client.runScript('banLookup', [meta, list], { u: 'u1' });

  it('answers on a Redis that never saw the script, and by EVALSHA afterwards', async () => {
    const before = await admin.info('commandstats');
    expect(await lookup()).to.deep.equal([1, '7|[]']);
    expect(await lookup()).to.deep.equal([1, '7|[]']);
    const after = await admin.info('commandstats');
    const calls = (info: string, cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    expect(calls(after, 'eval') - calls(before, 'eval')).to.equal(1);
    expect(calls(after, 'evalsha') - calls(before, 'evalsha')).to.equal(2); // the NOSCRIPT one, then the cached one
  });

  it('answers again after the script cache was flushed', async () => {
    await admin.script('FLUSH');
    expect(await lookup()).to.deep.equal([1, '7|[]']);
    expect(await lookup()).to.deep.equal([1, '7|[]']);
  });

  it('holds the scripts of one event-loop turn for one write, released at the turn\'s end', async () => {
    await lookup(); // EVALSHA cached, so each call below is one command
    const socket = client.stream as typeof client.stream & { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
    const writes: string[] = [];
    const [write, writev] = [socket._write.bind(socket), socket._writev.bind(socket)];
    socket._write = (...a: unknown[]) => {
      writes.push('write');
      write(...a);
    };
    socket._writev = (...a: unknown[]) => {
      writes.push(`writev ${(a[0] as unknown[]).length}`);
      writev(...a);
    };
    try {
      // a command sent after a script in the same turn rides in the same write
      const replies = await Promise.all([lookup(), client.hget(meta, 'built'), lookup(), lookup(), lookup(), lookup()]);
      expect(replies).to.deep.equal([[1, '7|[]'], '1', [1, '7|[]'], [1, '7|[]'], [1, '7|[]'], [1, '7|[]']]);
      expect(writes).to.have.length(1); // one write for six commands (without the hold: six)
      expect(writes[0]).to.match(/^writev \d+$/);
      expect(socket.writableCorked).to.equal(0);
    } finally {
      // the wrappers are own properties over the prototype's methods
      Reflect.deleteProperty(socket, '_write');
      Reflect.deleteProperty(socket, '_writev');
    }
  });
});
