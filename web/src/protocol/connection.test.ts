import { describe, expect, it } from 'vitest';
import { Connection, type Status } from './connection';
import type { TableEvent } from './types';
import { counterIds, FakeClock, FakeSocket } from '../testing/fakes';

function setup(token: string | null = null) {
  const sockets: FakeSocket[] = [];
  const clock = new FakeClock();
  const c = new Connection({
    url: 'ws://test/ws',
    socket: (u) => {
      const s = new FakeSocket(u);
      sockets.push(s);
      return s;
    },
    clock,
    newId: counterIds(),
    token: () => token,
    backoff: [100, 200, 400],
    keepAliveMs: 1000,
    helloDelayMs: 500,
  });
  const statuses: Status[] = [];
  const events: { table: string; ev: TableEvent; live: boolean }[] = [];
  const joined: { table: string; seat: number | null }[] = [];
  c.listen({
    status: (s) => statuses.push(s),
    event: (table, ev, live) => events.push({ table, ev, live }),
    joined: (table, seat) => joined.push({ table, seat }),
  });
  const last = () => {
    const s = sockets[sockets.length - 1];
    if (!s) throw new Error('no socket');
    return s;
  };
  return { c, sockets, clock, statuses, events, joined, last };
}

const welcome = { type: 'welcome', player: { id: 'p1', name: 'Nino', guest: true }, server_time: '2023-11-14T22:13:21Z' };

function ev(id: string, body: Record<string, unknown>) {
  return { type: 'event', table: 't1', id, event: { seq: '1', table_id: 't1', visibility: { audience: 'AUDIENCE_PUBLIC' }, ...body } };
}

describe('Connection', () => {
  it('sends hello with the token when the cookie brings no welcome, and becomes open on welcome', () => {
    const { c, last, statuses, clock } = setup('tok');
    c.start();
    last().open();
    expect(last().frames('hello')).toEqual([]);
    clock.advance(500);
    expect(last().frames('hello')).toEqual([{ type: 'hello', token: 'tok' }]);
    last().receive(welcome);
    expect(c.status).toBe('open');
    expect(c.player).toEqual({ id: 'p1', name: 'Nino', guest: true });
    expect(statuses).toEqual(['connecting', 'open']);
  });

  it('hands the stake ladder of the welcome to its listener (clients keep no copy of pkg/payout)', () => {
    const { c, last } = setup(null);
    const got: number[][] = [];
    c.listen({ welcome: (_p, stakes) => got.push(stakes) });
    c.start();
    last().open();
    last().receive({ ...welcome, stake_ladder: ['10', '50', '100', '500', '1000'] });
    expect(got).toEqual([[10, 50, 100, 500, 1000]]);
  });

  it('relies on the session cookie when it has no token', () => {
    const { c, last, clock } = setup(null);
    c.start();
    last().open();
    clock.advance(500);
    expect(last().sent).toEqual([]);
  });

  it('sends no hello when the cookie already brought the welcome', () => {
    const { c, last, clock } = setup('tok');
    c.start();
    last().open();
    last().receive(welcome);
    clock.advance(500);
    expect(last().frames('hello')).toEqual([]);
  });

  it('drops the answer to the join of a table given up meanwhile (a link the API already refused: no second toast)', () => {
    const { c, last } = setup();
    const errors: { code: string; join: boolean | undefined; table: string | null }[] = [];
    c.listen({ error: (e, table) => errors.push({ code: e.code, join: e.join, table }) });
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1');
    c.join('t2');
    c.forget('t1');
    last().receive({ type: 'error', code: 'invalid_message', message: 'no such id', ref: 'id1' });
    expect(errors).toEqual([]);
    // A followed table's join error still reaches the listener.
    last().receive({ type: 'error', code: 'invalid_message', message: 'no such id', ref: 'id2' });
    expect(errors).toEqual([{ code: 'invalid_message', join: true, table: 't2' }]);
  });

  it('marks events before joined as replay and after it as live', () => {
    const { c, last, events, joined } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1');
    expect(last().frames('join')).toEqual([{ type: 'join', table: 't1', ref: 'id1' }]);
    last().receive(ev('1-1', { bid_made: { seat: 1, tricks: 2 } }));
    last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 2, replayed: 1 });
    last().receive(ev('1-2', { bid_made: { seat: 2 } }));
    expect(events.map((e) => [e.ev.id, e.live])).toEqual([
      ['1-1', false],
      ['1-2', true],
    ]);
    expect(joined).toEqual([{ table: 't1', seat: 2 }]);
    expect(events[1]?.ev.body).toEqual({ kind: 'bid_made', seat: 2, tricks: 0, byServer: false });
  });

  it('reconnects with back-off and resumes every table from the last event id', () => {
    const { c, sockets, last, clock, statuses } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1');
    last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 0 });
    last().receive(ev('5-0', { player_back: { seat: 1 } }));
    c.watchLobby(true);

    last().drop();
    expect(c.status).toBe('down');
    clock.advance(99);
    expect(sockets).toHaveLength(1);
    clock.advance(1);
    expect(sockets).toHaveLength(2);
    last().drop(); // the second try fails too: the next wait is longer
    clock.advance(199);
    expect(sockets).toHaveLength(2);
    clock.advance(1);
    expect(sockets).toHaveLength(3);
    last().open();
    last().receive(welcome);
    expect(last().frames('join')).toEqual([{ type: 'join', table: 't1', ref: 'id2', last_event_id: '5-0' }]);
    expect(last().frames('lobby')).toEqual([{ type: 'lobby', watch: true }]);
    expect(statuses).toEqual(['connecting', 'open', 'down', 'open']);
  });

  it('hands on the legal moves riding on an event frame as their own event, right after it and with no id', () => {
    const { c, last, events } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1');
    last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 2 });
    last().receive({ ...ev('3-0', { bid_made: { seat: 1, tricks: 2 } }), legal: { seat: 2, phase: 'PHASE_BID', bids: [0, 2] } });
    last().receive(ev('4-0', { bid_made: { seat: 2, tricks: 2 } }));
    expect(events.map((e) => [e.ev.id, e.ev.body.kind, e.live])).toEqual([
      ['3-0', 'bid_made', true],
      ['', 'legal_moves', true],
      ['4-0', 'bid_made', true],
    ]);
    expect(events[1]?.ev.body).toMatchObject({ kind: 'legal_moves', legal: { seat: 2, bids: [0, 2] } });
    // The event the table's history has: the next seq, the host's table and moment.
    expect(events[1]?.ev).toMatchObject({ seq: 2, tableId: 't1', timer: null, seedAccepted: null });
    expect(events[1]?.ev.occurredAt).toBe(events[0]?.ev.occurredAt);
    expect(c.lastEventId('t1')).toBe('4-0');
  });

  it('drops an event it has already seen when a replay overlaps', () => {
    const { c, last, events } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1', '9-0');
    last().receive(ev('8-5', { player_back: { seat: 1 } }));
    last().receive(ev('9-0', { player_back: { seat: 1 } }));
    last().receive(ev('10-0', { player_back: { seat: 1 } }));
    last().receive(ev('10-0', { player_back: { seat: 1 } }));
    expect(events.map((e) => e.ev.id)).toEqual(['10-0']);
  });

  it('sends a move with a ref and an idempotency key, and again with the same key after a drop', () => {
    const { c, last, clock } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1');
    last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 0 });
    const ref = c.move('t1', { type: 'bid', tricks: 3 });
    expect(ref).toBe('id2');
    const sent = last().frames('bid');
    expect(sent).toEqual([{ type: 'bid', table: 't1', ref: 'id2', cmd: 'id3', tricks: 3 }]);

    last().drop();
    expect(c.move('t1', { type: 'bid', tricks: 1 })).toBeNull(); // refused while down
    clock.advance(100);
    last().open();
    last().receive(welcome);
    expect(last().frames('bid')).toEqual([]); // not before the re-join is confirmed
    last().receive({ type: 'joined', ref: 'id4', table: 't1', seat: 0 });
    expect(last().frames('bid')).toEqual(sent);
    last().receive({ type: 'ack', ref: 'id2', cmd: 'p1/id3' });

    last().drop();
    clock.advance(100);
    last().open();
    last().receive(welcome);
    last().receive({ type: 'joined', ref: 'id5', table: 't1', seat: 0 });
    expect(last().frames('bid')).toEqual([]); // acknowledged: never again
  });

  it('sends a move carrying a seed under the seed’s key, and again the same after a drop', () => {
    const { c, last, clock } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1');
    last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 0 });
    const seed = 'ab'.repeat(32);
    expect(c.move('t1', { type: 'play', card: 13 }, { hand: 3, seed, cmd: 'seed-key' })).toBe('id2');
    const sent = last().frames('play');
    expect(sent).toEqual([{ type: 'play', table: 't1', ref: 'id2', cmd: 'seed-key', card: 'CARD_TEN_OF_HEARTS', hand: 3, seed }]);
    last().drop();
    clock.advance(100);
    last().open();
    last().receive(welcome);
    last().receive({ type: 'joined', ref: 'id3', table: 't1', seat: 0 });
    expect(last().frames('play')).toEqual(sent);
    // Only a bid, trump or card carries a seed.
    c.move('t1', { type: 'resign' }, { hand: 3, seed, cmd: 'k2' });
    expect(last().frames('resign')[0]).not.toHaveProperty('seed');
  });

  it('writes joker declarations and cards the way the gateway reads them', () => {
    const { c, last } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1');
    c.move('t1', { type: 'play', card: 0, joker: { action: 'highest', suit: 'H' } });
    c.move('t1', { type: 'play', card: 13 });
    c.move('t1', { type: 'trump', suit: 'none' });
    expect(last().frames('play').map((f) => [f.card, f.declaration])).toEqual([
      ['CARD_JOKER_1', { action: 'JOKER_ACTION_HIGHEST', suit: 'SUIT_HEARTS' }],
      ['CARD_TEN_OF_HEARTS', undefined],
    ]);
    expect(last().frames('trump')[0]?.trump).toBe('SUIT_NONE');
  });

  it('stops reconnecting when the session is refused', () => {
    const { c, sockets, last, clock } = setup();
    c.start();
    last().open();
    last().drop(4001);
    expect(c.status).toBe('unauthorized');
    clock.advance(10_000);
    expect(sockets).toHaveLength(1);
  });

  it('stops reconnecting when the session ended (expired or logged out)', () => {
    const { c, sockets, last, clock } = setup();
    c.start();
    last().open();
    last().drop(4003);
    expect(c.status).toBe('unauthorized');
    clock.advance(10_000);
    expect(sockets).toHaveLength(1);
  });

  it('pings a quiet connection and drops one that stays silent', () => {
    const { c, sockets, last, clock } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    clock.advance(1000);
    expect(last().frames('ping')).toHaveLength(1);
    clock.advance(1000);
    expect(sockets[0]?.closed?.code).toBe(4000);
    expect(c.status).toBe('down');
    clock.advance(100);
    expect(sockets).toHaveLength(2);
  });

  it('joins afresh when the history it asked for was trimmed', () => {
    const { c, last } = setup();
    c.start();
    last().open();
    last().receive(welcome);
    c.join('t1', '3-0');
    last().receive({ type: 'error', code: 'history_trimmed', message: 'gone', ref: 'id1' });
    expect(last().frames('join')).toEqual([
      { type: 'join', table: 't1', ref: 'id1', last_event_id: '3-0' },
      { type: 'join', table: 't1', ref: 'id2' },
    ]);
  });

  it('measures the server clock from welcome', () => {
    const { c, last, clock } = setup();
    c.start();
    last().open();
    last().receive({ ...welcome, server_time: new Date(clock.now() + 1500).toISOString() });
    expect(c.serverNow() - clock.now()).toBe(1500);
  });
});
