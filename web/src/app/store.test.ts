import { describe, expect, it } from 'vitest';
import { Api } from '../protocol/api';
import { Connection } from '../protocol/connection';
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
  store.signedIn({ player: { id: 'p0', name: 'Nino', guest: true }, token: '', balance: null });
  const last = () => sockets[sockets.length - 1] as FakeSocket;
  last().open();
  last().receive({ type: 'welcome', player: { id: 'p0', name: 'Nino', guest: true }, server_time: new Date(clock.now()).toISOString() });
  return { store, sockets, clock, last };
}

const ev = (id: string, body: Record<string, unknown>) => ({ type: 'event', table: 't1', id, event: { table_id: 't1', ...body } });

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
    const commit = (id: string, hand: number, seats: number[]) =>
      ev(id, { game_id: 'g1', hand_committed: { hand_index: hand, commitment: b64(hand + 1), awaited_seats: seats } });
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
    const commit = (id: string, hand: number) => ev(id, { game_id: 'g1', hand_committed: { hand_index: hand, commitment: b64(hand + 1), awaited_seats: [0] } });
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
  });
});
