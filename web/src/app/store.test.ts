import { describe, expect, it } from 'vitest';
import { Api } from '../protocol/api';
import { wireCardName } from '../protocol/cards';
import { Connection } from '../protocol/connection';
import { cardsInHand } from '../sheet/schedule';
import { classicPositions, classicTurnedPosition, commitment, fromHex, shuffle, shuffleKey } from '../fairdeal/fairdeal';
import { verifyHand } from '../fairdeal/verify';
import { classicSettings, seatsOf } from '../testing/events';
import { counterIds, FakeClock, FakeSocket } from '../testing/fakes';
import { Store } from './store';
import { navigate, route } from './router';

function setup() {
  const sockets: FakeSocket[] = [];
  const clock = new FakeClock();
  const conn = new Connection({
    url: 'ws://x/ws',
    socket: (u) => {
      const s = new FakeSocket(u);
      sockets.push(s);
      return s;
    },
    clock,
    newId: counterIds(),
    backoff: [100],
  });
  const store = new Store(new Api(() => Promise.reject(new Error('no HTTP in this test'))), conn);
  store.signedIn({ player: { id: 'p0', name: 'Nino', guest: true }, token: '' });
  const last = () => sockets[sockets.length - 1] as FakeSocket;
  last().open();
  last().receive({ type: 'welcome', player: { id: 'p0', name: 'Nino', guest: true }, server_time: new Date(clock.now()).toISOString() });
  return { store, sockets, clock, last };
}

const ev = (id: string, body: Record<string, unknown>) => ({ type: 'event', table: 't1', id, event: { table_id: 't1', ...body } });

/** Bytes as protojson writes them (base64). */
const b64bytes = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const b64 = (n: number) => b64bytes(new Uint8Array(32).fill(n));
const seedDeadline = '2026-01-01T00:00:03Z';

/**
 * A table t1 followed and joined at seat 0 (live from here), its game g1
 * started; send() gives it the next event of g1.
 */
function seated() {
  const x = setup();
  const t = x.store.follow('t1');
  x.last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 0, replayed: 0 });
  let n = 0;
  const send = (body: Record<string, unknown>, causedBy = '') =>
    x.last().receive(ev(`1-${++n}`, { game_id: 'g1', ...(causedBy ? { caused_by: causedBy } : {}), ...body }));
  send({ game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } });
  /** hand_committed: waiting for its deal (seed_deadline) or committed a hand ahead (none). */
  const commit = (hand: number, ahead: boolean, seats = [0, 1]) =>
    send({ hand_committed: { hand_index: hand, commitment: b64(hand + 1), ...(ahead ? {} : { seed_deadline: seedDeadline }), awaited_seats: seats } });
  return { ...x, t, send, commit };
}

describe('the store', () => {
  it('builds a table’s state from its events and keeps it through a reconnect', () => {
    const { store, last, clock } = setup();
    expect(store.status.value).toBe('open');
    const t = store.follow('t1');
    last().receive(ev('1-1', { game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } }));
    last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 0, replayed: 1 });
    last().receive(ev('1-2', { hand_started: { cards_per_seat: 1, dealer_seat: 3 } }));
    last().receive(ev('1-3', { dealt: { cards: ['CARD_ACE_OF_HEARTS'] } }));
    expect(t.state.value.yourSeat).toBe(0);
    expect(t.state.value.hand).toEqual([17]);
    expect(t.joined.value).toBe(true);

    last().drop();
    expect(store.status.value).toBe('down');
    clock.advance(100);
    last().open();
    last().receive({ type: 'welcome', player: { id: 'p0', name: 'Nino', guest: true } });
    expect(last().frames('join')).toEqual([{ type: 'join', table: 't1', ref: 'id2', last_event_id: '1-3' }]);
    last().receive(ev('1-4', { trump_turned: { card: 'CARD_SEVEN_OF_CLUBS', trump: 'SUIT_CLUBS' } }));
    last().receive({ type: 'joined', ref: 'id2', table: 't1', seat: 0, replayed: 1 });
    // Nothing was lost: the hand from before the drop, the trump from the replay.
    expect(t.state.value.hand).toEqual([17]);
    expect(t.state.value.trump).toBe('C');
    expect(store.status.value).toBe('open');
  });

  it('keeps the newest sheet of a game', () => {
    const { store, last } = setup();
    const t = store.follow('t1');
    const sheet = (v: number, total: string) => ({ type: 'sheet', table: 't1', id: `2-${v}`, update: { version: String(v), sheet: { game_id: 'g', totals: [{ total }] } } });
    last().receive(sheet(5, '500'));
    last().receive(sheet(3, '300'));
    expect(t.sheet.value?.version).toBe(5);
    expect(t.sheet.value?.sheet.totals[0]?.total).toBe(500);
  });

  it('applies the lobby view and its updates', () => {
    const { store, last } = setup();
    store.watchLobby(true);
    expect(last().frames('lobby')).toEqual([{ type: 'lobby', watch: true }]);
    last().receive({ type: 'lobby_view', view: { version: '3', tables: [{ table_id: 'a', name: 'A' }, { table_id: 'b', name: 'B' }] } });
    last().receive({ type: 'lobby_update', update: { version: '4', table_upserted: { table_id: 'c', name: 'C' } } });
    last().receive({ type: 'lobby_update', update: { version: '5', table_removed: 'a' } });
    last().receive({ type: 'lobby_update', update: { version: '6', table_upserted: { table_id: 'b', name: 'B2' } } });
    expect(store.lobby.value.map((t) => [t.tableId, t.name])).toEqual([
      ['c', 'C'],
      ['b', 'B2'],
    ]);
    expect(store.lobbyVersion.value).toBe(6);
  });

  it('asks for the whole lobby again when an update was missed', () => {
    const { store, last } = setup();
    store.watchLobby(true);
    last().receive({ type: 'lobby_view', view: { version: '3', tables: [{ table_id: 'a', name: 'A' }] } });
    last().receive({ type: 'lobby_update', update: { version: '3', table_removed: 'a' } }); // old news
    expect(store.lobby.value).toHaveLength(1);
    last().receive({ type: 'lobby_update', update: { version: '5', table_removed: 'a' } }); // 4 is missing
    expect(store.lobby.value).toHaveLength(1);
    expect(last().frames('lobby')).toHaveLength(2);
  });

  it('goes back to the entry when the gateway refuses the session', () => {
    const { store, last } = setup();
    last().drop(4001);
    expect(store.status.value).toBe('unauthorized');
    expect(store.session.value).toBeNull();
  });

  it('answers a hand_committed awaiting its seat with a random seed, once, and not for replayed dealt hands', () => {
    const { store, last, clock } = setup();
    const t = store.follow('t1');
    const b64 = (n: number) => btoa(String.fromCharCode(...new Array<number>(32).fill(n)));
    // Each waits for its deal (seed_deadline): answered at once by a seed frame.
    const commit = (id: string, hand: number, seats: number[]) =>
      ev(id, { game_id: 'g1', hand_committed: { hand_index: hand, commitment: b64(hand + 1), seed_deadline: '2026-01-01T00:00:03Z', awaited_seats: seats } });
    // Replayed: hand 0 long dealt, hand 1 still seeding.
    last().receive(ev('1-1', { game_id: 'g1', game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } }));
    last().receive(commit('1-2', 0, [0, 1]));
    last().receive(ev('1-3', { game_id: 'g1', hand_started: { cards_per_seat: 1, dealer_seat: 3 } }));
    last().receive(commit('1-4', 1, [0, 1]));
    expect(last().frames('seed')).toEqual([]);
    last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 0, replayed: 4 });
    const seeds = last().frames('seed');
    expect(seeds).toHaveLength(1);
    expect(seeds[0]).toMatchObject({ type: 'seed', table: 't1', hand: 1 });
    expect(String(seeds[0]?.seed)).toMatch(/^[0-9a-f]{64}$/);
    expect(t.fair.value.hands[1]?.seed).toBe(seeds[0]?.seed);
    expect(t.fair.value.hands[1]?.commitment).toBe('02'.repeat(32));

    // A live one for a seat that is not this player's: nothing.
    last().receive(commit('1-5', 2, [1]));
    expect(last().frames('seed')).toHaveLength(1);

    // A reconnect before the table took it: sent again, same key.
    last().drop();
    clock.advance(100);
    last().open();
    last().receive({ type: 'welcome', player: { id: 'p0', name: 'Nino', guest: true } });
    last().receive({ type: 'joined', ref: 'id9', table: 't1', seat: 0, replayed: 0 });
    expect(last().frames('seed')).toEqual([seeds[0]].map((f) => ({ ...f, ref: expect.any(String) as unknown })));
    last().receive(ev('1-6', { game_id: 'g1', client_seed_accepted: { hand_index: 1 } }));
    last().drop();
    clock.advance(100);
    last().open();
    last().receive({ type: 'welcome', player: { id: 'p0', name: 'Nino', guest: true } });
    last().receive({ type: 'joined', ref: 'id10', table: 't1', seat: 0, replayed: 0 });
    expect(last().frames('seed')).toEqual([]);
  });

  it('makes no seed for a replayed hand another page seeded, and keeps quiet about a refused seed (two tabs)', () => {
    const { store, last } = setup();
    const t = store.follow('t1');
    const b64 = (n: number) => btoa(String.fromCharCode(...new Array<number>(32).fill(n)));
    const commit = (id: string, hand: number) =>
      ev(id, { game_id: 'g1', hand_committed: { hand_index: hand, commitment: b64(hand + 1), seed_deadline: '2026-01-01T00:00:03Z', awaited_seats: [0] } });
    // Replayed after a reload: hand 0 seeded by the page before it, not dealt yet.
    last().receive(ev('1-1', { game_id: 'g1', game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } }));
    last().receive(commit('1-2', 0));
    last().receive(ev('1-3', { game_id: 'g1', caused_by: 'p0/the-page-before', client_seed_accepted: { hand_index: 0, seat: 0 } }));
    last().receive({ type: 'joined', ref: 'id1', table: 't1', seat: 0, replayed: 3 });
    expect(last().frames('seed')).toEqual([]);
    expect(t.fair.value.hands[0]).toMatchObject({ seed: null, seedElsewhere: 'elsewhere' });

    // Live, hand 1: this tab sends its seed; the other tab's was first.
    last().receive(commit('1-4', 1));
    const sent = last().frames('seed');
    expect(sent).toHaveLength(1);
    expect(t.fair.value.hands[1]?.seed).toBe(sent[0]?.seed);
    last().receive(ev('1-5', { game_id: 'g1', caused_by: 'p0/other-tab', client_seed_accepted: { hand_index: 1, seat: 0 } }));
    last().receive({ type: 'event', table: 't1', id: '', event: { table_id: 't1', game_id: 'g1', caused_by: `p0/${String(sent[0]?.cmd)}`, move_rejected: { reason: 'REJECT_REASON_NOT_ALLOWED', message: 'seat 1 has sent its seed' } } });
    expect(t.fair.value.hands[1]).toMatchObject({ seedAccepted: false, seedElsewhere: 'elsewhere' });
    // Not a refused move to show the player.
    expect(t.state.value.rejection ?? null).toBeNull();
    // A refused move still is.
    last().receive({ type: 'event', table: 't1', id: '', event: { table_id: 't1', game_id: 'g1', caused_by: 'p0/a-bid', move_rejected: { reason: 'REJECT_REASON_NOT_YOUR_TURN', message: 'not your turn' } } });
    expect(t.state.value.rejection?.message).toBe('not your turn');
  });

  it('sends the seed of a hand committed ahead on the next bid or card, again after a refused move, and accepts it as the move’s', () => {
    const { store, t, last, send, commit } = seated();
    commit(0, false);
    const seed0 = last().frames('seed');
    expect(seed0).toHaveLength(1);
    send({ client_seed_accepted: { hand_index: 0 } }, `p0/${String(seed0[0]?.cmd)}`);
    send({ hand_started: { hand_index: 0, cards_per_seat: 1, dealer_seat: 3 } });
    commit(1, true);
    // No seed frame: the seed waits for the player's next move.
    expect(last().frames('seed')).toHaveLength(1);
    expect(t.fair.value.hands[1]).toMatchObject({ seed: null, attachDue: true });

    expect(store.move('t1', { type: 'bid', tricks: 1 })).toBe(true);
    const bid = last().frames('bid');
    expect(bid).toEqual([{ type: 'bid', table: 't1', ref: expect.any(String) as unknown, cmd: expect.any(String) as unknown, tricks: 1, hand: 1, seed: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown }]);
    const seed = String(bid[0]?.seed);
    expect(t.fair.value.hands[1]).toMatchObject({ seed, seedKey: bid[0]?.cmd, seedVia: 'move' });

    // The move is refused: the player hears of it, the seed was not taken.
    send({ move_rejected: { reason: 'REJECT_REASON_NOT_YOUR_TURN', message: 'not your turn' } }, `p0/${String(bid[0]?.cmd)}`);
    expect(t.state.value.rejection?.message).toBe('not your turn');
    expect(last().frames('seed')).toHaveLength(1);
    store.move('t1', { type: 'play', card: 17 });
    const play = last().frames('play');
    expect(play).toEqual([{ type: 'play', table: 't1', ref: expect.any(String) as unknown, cmd: expect.any(String) as unknown, card: 'CARD_ACE_OF_HEARTS', hand: 1, seed }]);
    expect(play[0]?.cmd).not.toBe(bid[0]?.cmd);

    send({ client_seed_accepted: { hand_index: 1 } }, `p0/${String(play[0]?.cmd)}`);
    expect(t.fair.value.hands[1]).toMatchObject({ seed, seedAccepted: true, seedElsewhere: null });
    // Taken: the next move carries none, the end of hand 0 sends none.
    store.move('t1', { type: 'play', card: 18 });
    expect(last().frames('play')[1]).not.toHaveProperty('seed');
    expect(last().frames('play')[1]).not.toHaveProperty('hand');
    send({ hand_revealed: { hand_index: 0, server_seed: b64(7), client_seeds: [b64(0), b64(0), b64(0), b64(0)], commitment: b64(1) } });
    expect(last().frames('seed')).toHaveLength(1);
    // A move that cannot carry a seed never does.
    commit(2, true, [0]);
    store.move('t1', { type: 'leave' });
    expect(last().frames('leave')[0]).not.toHaveProperty('seed');
    expect(t.fair.value.hands[2]).toMatchObject({ seed: null, attachDue: true });
  });

  it('sends the seed of a hand committed ahead in a seed frame when the hand before it ends with the seed not on a move', () => {
    const { t, last, send, commit } = seated();
    commit(0, false, [1]);
    send({ hand_started: { hand_index: 0, cards_per_seat: 1, dealer_seat: 3 } });
    commit(1, true, [0, 1]);
    expect(last().frames('seed')).toEqual([]);
    send({ hand_ended: { hand_index: 0 } });
    expect(last().frames('seed')).toEqual([]);
    send({ hand_revealed: { hand_index: 0, server_seed: b64(7), client_seeds: [b64(0), b64(0), b64(0), b64(0)], commitment: b64(1) } });
    const seeds = last().frames('seed');
    expect(seeds).toEqual([{ type: 'seed', table: 't1', hand: 1, seed: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown, cmd: expect.any(String) as unknown, ref: expect.any(String) as unknown }]);
    send({ client_seed_accepted: { hand_index: 1 } }, `p0/${String(seeds[0]?.cmd)}`);
    expect(t.fair.value.hands[1]).toMatchObject({ seed: seeds[0]?.seed, seedAccepted: true });
  });

  it('after a reconnect, carries an unanswered seed on the next move again, or in a seed frame of its own key once its hand waits', () => {
    const { store, t, last, clock, send, commit } = seated();
    commit(0, false, [1]);
    send({ hand_started: { hand_index: 0, cards_per_seat: 1, dealer_seat: 3 } });
    commit(1, true, [0]);
    store.move('t1', { type: 'bid', tricks: 0 });
    const bid = last().frames('bid')[0];
    const seed = String(bid?.seed);
    last().receive({ type: 'ack', ref: bid?.ref, cmd: `p0/${String(bid?.cmd)}` });
    const rejoin = (replay: () => void) => {
      last().drop();
      clock.advance(100);
      last().open();
      last().receive({ type: 'welcome', player: { id: 'p0', name: 'Nino', guest: true } });
      replay();
      const join = last().frames('join').at(-1);
      last().receive({ type: 'joined', ref: join?.ref, table: 't1', seat: 0, replayed: 0 });
    };
    rejoin(() => undefined);
    // Neither accepted nor refused: not a seed frame under the bid's key…
    expect(last().frames('seed')).toEqual([]);
    expect(last().frames('bid')).toEqual([]);
    // …but on the next move, same seed, that move's key.
    store.move('t1', { type: 'play', card: 17 });
    const play = last().frames('play')[0];
    expect([play?.hand, play?.seed]).toEqual([1, seed]);
    expect(play?.cmd).not.toBe(bid?.cmd);
    last().receive({ type: 'ack', ref: play?.ref, cmd: `p0/${String(play?.cmd)}` });

    // Dropped again; hand 0 ended meanwhile: a seed frame, of a key of its own.
    rejoin(() =>
      last().receive(ev('1-90', { game_id: 'g1', hand_revealed: { hand_index: 0, server_seed: b64(7), client_seeds: [b64(0), b64(0), b64(0), b64(0)], commitment: b64(1) } })),
    );
    const seeds = last().frames('seed');
    expect(seeds.map((f) => [f.hand, f.seed])).toEqual([[1, seed]]);
    expect([bid?.cmd, play?.cmd]).not.toContain(seeds[0]?.cmd);
    expect(t.fair.value.hands[1]).toMatchObject({ seed, seedKey: seeds[0]?.cmd, seedVia: 'frame' });
  });

  it('resyncs the seeding from a view: a seed frame for the hand waiting, the next move for the hand committed ahead, both commitments kept', () => {
    const { store, t, last, send } = seated();
    const view = (v: Record<string, unknown>) => send({ view_synced: { view: { your_seat: 0, hand_index: 3, cards_per_seat: 4, phase: 'PHASE_BID', ...v } } });
    // The hand in play is dealt (no seed_deadline); the next one is committed ahead.
    view({
      committed: { hand_index: 3, commitment: b64(4), awaited_seats: [0, 1] },
      next_committed: { hand_index: 4, commitment: b64(5), awaited_seats: [0, 1] },
      next_seeded_seats: [1],
    });
    expect(last().frames('seed')).toEqual([]);
    expect(t.fair.value.hands[3]).toMatchObject({ commitment: '04'.repeat(32), dealt: true, seed: null });
    expect(t.fair.value.hands[4]).toMatchObject({ commitment: '05'.repeat(32), seed: null, attachDue: true });
    store.move('t1', { type: 'bid', tricks: 2 });
    const bid = last().frames('bid')[0];
    expect(bid).toMatchObject({ tricks: 2, hand: 4, seed: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown });
    send({ client_seed_accepted: { hand_index: 4 } }, `p0/${String(bid?.cmd)}`);
    expect(t.fair.value.hands[4]).toMatchObject({ seed: bid?.seed, seedAccepted: true });
    send({ hand_revealed: { hand_index: 3, server_seed: b64(7), client_seeds: [b64(0), b64(0), b64(0), b64(0)], commitment: b64(4) } });
    expect(t.fair.value.hands[3]?.revealed?.commitment).toBe('04'.repeat(32));
    expect(last().frames('seed')).toEqual([]);

    // Waiting for its deal, the seat not seeded: a seed frame at once.
    view({ hand_index: 5, committed: { hand_index: 5, commitment: b64(6), seed_deadline: seedDeadline, awaited_seats: [0, 1] }, seeded_seats: [1] });
    expect(last().frames('seed').map((f) => f.hand)).toEqual([5]);
    expect(t.fair.value.hands[5]?.commitment).toBe('06'.repeat(32));
  });

  it('plays a whole classic game with hands committed ahead: one seed frame, the other seeds on bids, every hand verifies', async () => {
    const { store, t, last, send } = seated();
    const others = [1, 2, 3].map((s) => '0'.repeat(62) + `1${s}`);
    const mine: string[] = [];
    const hands = 24;
    for (let h = 0; h < hands; h++) {
      const id = { tableId: 't1', gameId: 'g1', index: h };
      const server = new Uint8Array(32).fill(0x40 + h);
      const commitmentOf = await commitment(id, server);
      const committed = { hand_index: h, commitment: b64bytes(commitmentOf), awaited_seats: [0] };
      if (h === 0) {
        // Hand 0 is committed as the game starts, waiting for its deal.
        send({ hand_committed: { ...committed, seed_deadline: seedDeadline } });
        const sf = last().frames('seed');
        expect(sf.map((f) => f.hand)).toEqual([0]);
        mine.push(String(sf[0]?.seed));
        send({ client_seed_accepted: { hand_index: 0 } }, `p0/${String(sf[0]?.cmd)}`);
      }
      const n = cardsInHand('standard', h);
      const dealer = h % 4;
      const seeds = [mine[h] ?? '', ...others];
      const key = await shuffleKey(
        id,
        server,
        seeds.map((s) => fromHex(s) ?? new Uint8Array()),
      );
      const { deck } = await shuffle(key);
      const wire = (p: number) => wireCardName(deck[p] ?? 0);
      send({ hand_started: { hand_index: h, pulka_index: 0, cards_per_seat: n, dealer_seat: dealer } });
      send({ dealt: { cards: classicPositions(n, dealer, 0).map(wire) } });
      const tp = classicTurnedPosition(n);
      if (tp !== null) send({ trump_turned: { card: wire(tp) } });
      // The next hand is committed ahead, after this one's deal; the last one has none.
      if (h + 1 < hands) {
        const next = { tableId: 't1', gameId: 'g1', index: h + 1 };
        const c = await commitment(next, new Uint8Array(32).fill(0x40 + h + 1));
        send({ hand_committed: { hand_index: h + 1, commitment: b64bytes(c), awaited_seats: [0] } });
      }
      store.move('t1', { type: 'bid', tricks: 0 });
      const bid = last().frames('bid')[h];
      if (h + 1 < hands) {
        expect(bid?.hand).toBe(h + 1);
        mine.push(String(bid?.seed));
        // The table takes it with the move: its acceptance rides on the bid's echo.
        send({ bid_made: { seat: 0, tricks: 0 }, seed_accepted: { hand_index: h + 1, seat: 0 } }, `p0/${String(bid?.cmd)}`);
        expect(t.fair.value.hands[h + 1]).toMatchObject({ seedAccepted: true });
      } else {
        expect(bid).not.toHaveProperty('seed');
      }
      send({ hand_ended: { hand_index: h } });
      send({
        hand_revealed: {
          hand_index: committed.hand_index,
          commitment: committed.commitment,
          server_seed: b64bytes(server),
          client_seeds: seeds.map((s) => b64bytes(fromHex(s) ?? new Uint8Array())),
        },
      });
    }
    // One seed frame (hand 0), every other seed on a bid, each seed fresh.
    expect(last().frames('seed')).toHaveLength(1);
    expect(new Set(mine).size).toBe(hands);
    for (let h = 0; h < hands; h++) {
      const fh = t.fair.value.hands[h];
      if (!fh) throw new Error(`hand ${h} missing`);
      expect(fh.seed).toBe(mine[h]);
      const r = await verifyHand(fh);
      expect(r, `hand ${h}`).toMatchObject({ commitmentOk: true, sameCommitment: true, seedIncluded: true, seedUnknown: null, dealOk: true, ok: true });
    }
  });

  it('goes back to the lobby when the table is gone, with the reason', () => {
    const { store, last } = setup();
    navigate('/t/t1');
    store.follow('t1');
    last().receive({ type: 'error', code: 'table_gone', message: 'the table no longer exists', table: 't1' });
    expect(route.value).toEqual({ name: 'home' });
    expect(store.toast.value?.text).toBe('table_gone');
    // The gateway follows it no more (it sends unjoined): nothing to unjoin.
    expect(last().frames('unjoin')).toHaveLength(0);
    last().receive({ type: 'unjoined', table: 't1' });
    expect(store.toast.value?.text).toBe('table_gone');

    navigate('/t/nope');
    store.follow('nope');
    const join = last().frames('join').at(-1);
    last().receive({ type: 'error', code: 'table_not_found', message: 'no such table', ref: join?.ref });
    expect(route.value).toEqual({ name: 'home' });
    expect(store.toast.value?.text).toBe('table_not_found');
 
    // A link whose id the gateway refuses outright (issue 22, rough edge 7).
    navigate('/t/%D0%BD%D0%B5%20table');
    store.follow('не table');
    const bad = last().frames('join').at(-1);
    last().receive({ type: 'error', code: 'invalid_message', message: 'table may only hold printable ASCII', ref: bad?.ref });
    expect(route.value).toEqual({ name: 'home' });
    expect(store.toast.value?.text).toBe('table_not_found');
  });
});

describe('the store and Domino Coin', () => {
  it('follows the balance frames: the newest version wins, entries are kept for the game-end screen', async () => {
    const { store, last } = setup();
    const frame = (version: number, available: number, entry?: Record<string, unknown>) =>
      last().receive({ type: 'balance', balance: { account_id: 'p0', available: String(available), version: String(version) }, ...(entry ? { entry } : {}) });
    frame(1, 1000);
    expect(store.balance.value).toEqual({ available: 1000, held: 0, version: 1 });
    frame(3, 1150, { seq: '3', kind: 'LEDGER_ENTRY_KIND_PAYOUT', available_delta: '250', available_after: '1150', table_id: 't9' });
    // An older frame (it crossed an HTTP read) changes nothing.
    frame(2, 900, { seq: '2', kind: 'LEDGER_ENTRY_KIND_STAKE_SETTLED', held_delta: '-100', table_id: 't9' });
    expect(store.balance.value?.available).toBe(1150);
    expect(store.coinEntries.value.map((e) => e.seq)).toEqual([3, 2]);
    await store.signOut();
    expect(store.balance.value).toBeNull();
    expect(store.coinEntries.value).toEqual([]);
  });
});
