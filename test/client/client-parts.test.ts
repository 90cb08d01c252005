import { expect } from 'chai';
import { backoffDelayMs, parseRetryAfterMs, CommandTracker, entryOf, EventQueue, percentile, Roster, type EventEntry, type QueuedEvent } from '@gis/client';

const ev = (n: number): EventEntry => ({ eventId: `e${n}`, type: 'spawn', occurredAt: new Date(0).toISOString() });

describe('client: parts', () => {
  describe('backoff', () => {
    it('doubles the ceiling per attempt, jitters between half and all of it, and caps', () => {
      const opts = { baseMs: 1000, maxMs: 8000 };
      expect([1, 2, 3, 4, 5].map((a) => backoffDelayMs(a, opts, () => 0))).to.deep.equal([500, 1000, 2000, 4000, 4000]);
      expect([1, 2, 3, 4, 5].map((a) => backoffDelayMs(a, opts, () => 0.999999))).to.deep.equal([1000, 2000, 4000, 8000, 8000]);
    });

    it('reads Retry-After as seconds (or an HTTP date), null when absent or unusable', () => {
      expect(parseRetryAfterMs('7', 0)).to.equal(7000);
      expect(parseRetryAfterMs(' 1.5 ', 0)).to.equal(1500);
      expect(parseRetryAfterMs(null, 0)).to.equal(null);
      expect(parseRetryAfterMs('soon', 0)).to.equal(null);
      const now = Date.parse('2030-01-01T00:00:00Z');
      expect(parseRetryAfterMs('Tue, 01 Jan 2030 00:00:10 GMT', now)).to.equal(10_000);
    });
  });

  describe('EventQueue', () => {
    const json = (n: number): QueuedEvent => JSON.stringify(ev(n));
    const ids = (events: QueuedEvent[]) => events.map((e) => entryOf(e).eventId);

    it('peeks without removing and drops only what a 200 confirmed', () => {
      const q = new EventQueue();
      for (let i = 1; i <= 5; i++) q.push(json(i));
      const batch = q.peek(3);
      expect(ids(batch)).to.deep.equal(['e1', 'e2', 'e3']);
      expect(q.size).to.equal(5);
      q.push(json(6)); // tracked while the heartbeat was in flight
      expect(q.confirm(batch)).to.equal(3);
      expect(ids(q.peek(10))).to.deep.equal(['e4', 'e5', 'e6']);
    });

    it('drops the oldest beyond its bound and reports how many', () => {
      const q = new EventQueue(3);
      expect([1, 2, 3, 4].map((n) => q.push(json(n)))).to.deep.equal([0, 0, 0, 1]);
      expect(ids(q.peek(10))).to.deep.equal(['e2', 'e3', 'e4']);
      expect(q.remove(json(3))).to.equal(true);
      expect(q.remove(json(3))).to.equal(false);
      expect(q.size).to.equal(2);
      expect(entryOf(q.peek(1)[0]!)).to.deep.equal(ev(2));
    });
  });

  describe('CommandTracker', () => {
    it('claims an id once, while running, while its ack is unsent, and for the retention after', () => {
      const t = new CommandTracker();
      expect(t.claim('c1')).to.equal(true);
      expect(t.claim('c1')).to.equal(false); // handler running
      t.complete('c1', true);
      t.prune(Number.MAX_SAFE_INTEGER);
      expect(t.claim('c1')).to.equal(false); // ack not yet confirmed: never forgotten
      const sent = t.outgoing(10);
      expect(sent).to.deep.equal({ acks: ['c1'], failures: [] });
      expect(t.confirm(sent, 1000, 600_000)).to.deep.equal({ acked: 1, failed: 0 });
      expect(t.pendingResults).to.equal(0);
      t.prune(600_000);
      expect(t.claim('c1')).to.equal(false);
      t.prune(601_001);
      expect(t.rememberedCount).to.equal(0);
      expect(t.claim('c1')).to.equal(true);
    });

    it('remembers a dropped (expired) command without any result', () => {
      const t = new CommandTracker();
      expect(t.claim('old')).to.equal(true);
      t.drop('old', 5000);
      expect(t.pendingResults).to.equal(0);
      t.prune(4000);
      expect(t.claim('old')).to.equal(false);
      t.prune(5001);
      expect(t.claim('old')).to.equal(true);
    });

    it('keeps results that were not carried by the confirmed heartbeat', () => {
      const t = new CommandTracker();
      for (const id of ['a', 'b']) t.claim(id);
      t.complete('a', true);
      const sent = t.outgoing(10);
      t.complete('b', false, 'x'.repeat(600));
      t.confirm(sent, 0, 1);
      expect(t.outgoing(10).acks).to.deep.equal([]);
      expect(t.outgoing(10).failures).to.have.length(1);
      expect(t.outgoing(10).failures[0]!.reason).to.have.length(500);
    });
  });

  describe('Roster and percentile', () => {
    it('keeps the full roster in join order with copies', () => {
      const r = new Roster();
      r.add({ externalId: 'a', username: 'A' });
      r.add({ externalId: 'b', username: 'B' });
      r.update('a', { team: 'red' });
      const list = r.list();
      list[0]!.username = 'changed';
      expect(r.list()).to.deep.equal([
        { externalId: 'a', username: 'A', team: 'red' },
        { externalId: 'b', username: 'B' },
      ]);
      expect(r.remove('a')).to.equal(true);
      expect(r.size).to.equal(1);
    });

    it('gives its JSON as JSON.stringify(list()) would, after every kind of change', () => {
      const r = new Roster();
      const same = () => expect(r.toJSONText()).to.equal(JSON.stringify(r.list()));
      same();
      r.add({ externalId: 'a', username: 'Zoë 🎮', team: 'red', joinedAt: new Date(0).toISOString() });
      r.add({ externalId: 'b', username: 'B', team: undefined });
      same();
      r.update('a', { team: 'blue' });
      same();
      r.add({ externalId: 'b', username: 'B2', team: null });
      same();
      r.remove('a');
      same();
      r.set([{ externalId: 'c', username: 'C' }, { externalId: 'd', username: 'D' }, { externalId: 'c', username: 'C2' }]);
      same();
      expect(JSON.parse(r.toJSONText())).to.deep.equal([{ externalId: 'c', username: 'C2' }, { externalId: 'd', username: 'D' }]);
    });

    it('computes nearest-rank percentiles', () => {
      const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
      expect(percentile(xs, 50)).to.equal(50);
      expect(percentile(xs, 99)).to.equal(99);
      expect(percentile(xs, 100)).to.equal(100);
      expect(Number.isNaN(percentile([], 50))).to.equal(true);
    });
  });
});
