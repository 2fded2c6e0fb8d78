// The seeding half of the fold (docs/fair-play.md, "What a client does"): a
// hand waiting for its deal gets a seed frame at once; a hand committed a
// hand ahead gets its seed on the player's next move, again on the move
// after a refused one, and in a seed frame if the hand before it ends first.

import { describe, expect, it } from 'vitest';
import type { EventBody, TableEvent, TableView } from '../protocol/types';
import { applyFair, emptyFair, markAttached, markSent, rejoined, seedsToSend, seedToAttach, type FairContext, type FairState, type SeedMaker } from './hands';

function ev(body: EventBody, causedBy = ''): TableEvent {
  return { id: '', seq: 0, tableId: 't1', gameId: 'g1', causedBy, occurredAt: null, body, timer: null };
}

const ctx: FairContext = { tableId: 't1', yourSeat: 0, japanese: false, handIndex: 0 };

/** Seeds s1, s2, … and keys k1, k2, …, counted. */
function maker(): SeedMaker & { seeds: number; keys: number } {
  const m = {
    seeds: 0,
    keys: 0,
    newSeed: () => `${++m.seeds}`.padStart(64, 's'),
    newKey: () => `k${++m.keys}`,
  };
  return m;
}

const hex = (n: number) => n.toString(16).padStart(2, '0').repeat(32);
const deadline = Date.UTC(2026, 0, 1);

function committed(hand: number, ahead: boolean, awaitedSeats = [0, 1]): TableEvent {
  return ev({ kind: 'hand_committed', handIndex: hand, commitment: hex(hand + 1), seedDeadline: ahead ? null : deadline, awaitedSeats });
}

const started = (hand: number) => ev({ kind: 'hand_started', handIndex: hand, pulkaIndex: 0, cardsPerSeat: 1, dealerSeat: 3 });
const revealed = (hand: number) => ev({ kind: 'hand_revealed', handIndex: hand, serverSeed: hex(9), clientSeeds: [hex(0), hex(0), hex(0), hex(0)], commitment: hex(hand + 1) });
const accepted = (hand: number, causedBy: string) => ev({ kind: 'client_seed_accepted', handIndex: hand, seat: 0 }, causedBy);
const refused = (causedBy: string) => ev({ kind: 'move_rejected', reason: 'NOT_YOUR_TURN', message: 'not your turn' }, causedBy);

function fold(fs: FairState, ...evs: TableEvent[]): FairState {
  return evs.reduce((s, e) => applyFair(s, e, ctx), fs);
}

/** Hand 0 dealt, hand 1 committed ahead. */
function aheadOfHand0(): FairState {
  return fold(emptyFair(), committed(0, false, []), started(0), committed(1, true));
}

function must<T>(x: T | undefined): T {
  if (x === undefined) throw new Error('missing');
  return x;
}

describe('the seed of a hand', () => {
  it('waiting for its deal goes at once in a seed frame', () => {
    const mk = maker();
    const fs = fold(emptyFair(), committed(0, false));
    expect(seedToAttach(fs, mk)).toBeUndefined();
    const due = seedsToSend(fs, false, mk);
    expect(due.map((h) => [h.handIndex, h.seedKey])).toEqual([[0, 'k1']]);
    expect(must(markSent(fs, due).hands[0])).toMatchObject({ seedVia: 'frame', seedDue: false, seedKey: 'k1' });
  });

  it('committed ahead rides on the next move, is no seed frame, and is accepted as the move’s', () => {
    const mk = maker();
    let fs = aheadOfHand0();
    expect(seedsToSend(fs, true, mk)).toEqual([]);
    expect(fs.hands[1]).toMatchObject({ seed: null, attachDue: true, seedDue: false });

    const h = must(seedToAttach(fs, mk));
    expect([h.handIndex, h.seed, h.seedKey]).toEqual([1, '1'.padStart(64, 's'), 'k1']);
    // Made as it is attached: not kept until the move went.
    expect(fs.hands[1]?.seed).toBeNull();
    fs = markAttached(fs, h);
    expect(fs.hands[1]).toMatchObject({ seed: h.seed, seedKey: 'k1', seedVia: 'move', attachDue: false });
    // Neither attached again nor sent in a frame, even after a rejoin's resend.
    expect(seedToAttach(fs, mk)).toBeUndefined();
    expect(seedsToSend(fs, true, mk)).toEqual([]);

    fs = fold(fs, accepted(1, 'p0/k1'));
    expect(fs.hands[1]).toMatchObject({ seedAccepted: true, seedElsewhere: null });
    // The hand before it ends: nothing more to send.
    fs = fold(fs, revealed(0));
    expect(seedsToSend(fs, true, mk)).toEqual([]);
    expect(seedToAttach(fs, mk)).toBeUndefined();
  });

  it('riding on a refused move is carried again by the next move, same seed, the new move’s key', () => {
    const mk = maker();
    let fs = aheadOfHand0();
    const first = must(seedToAttach(fs, mk));
    fs = markAttached(fs, first);
    // Another move's refusal changes nothing.
    fs = fold(fs, refused('p0/another-move'));
    expect(seedToAttach(fs, mk)).toBeUndefined();
    fs = fold(fs, refused('p0/k1'));
    expect(fs.hands[1]).toMatchObject({ seedVia: null, seedKey: '', attachDue: true, seedElsewhere: null });
    expect(seedsToSend(fs, true, mk)).toEqual([]);
    const again = must(seedToAttach(fs, mk));
    expect([again.seed, again.seedKey]).toEqual([first.seed, 'k2']);
    expect(mk.seeds).toBe(1);
    fs = fold(markAttached(fs, again), accepted(1, 'p0/k2'));
    expect(fs.hands[1]).toMatchObject({ seedAccepted: true, seed: first.seed });
  });

  it('not yet on a move when the hand before it ends goes in a seed frame then', () => {
    const mk = maker();
    let fs = fold(aheadOfHand0(), revealed(0));
    expect(seedToAttach(fs, mk)).toBeUndefined();
    const due = seedsToSend(fs, false, mk);
    expect(due.map((h) => [h.handIndex, h.seedKey])).toEqual([[1, 'k1']]);
    fs = fold(markSent(fs, due), accepted(1, 'p0/k1'));
    expect(fs.hands[1]).toMatchObject({ seedAccepted: true, seedVia: 'frame' });
  });

  it('on a move still unanswered when the hand before it ends is not sent again; refused then, it goes in a seed frame', () => {
    const mk = maker();
    let fs = aheadOfHand0();
    const h = must(seedToAttach(fs, mk));
    fs = fold(markAttached(fs, h), revealed(0));
    expect(seedsToSend(fs, true, mk)).toEqual([]);
    fs = fold(fs, refused('p0/k1'));
    const due = seedsToSend(fs, false, mk);
    expect(due.map((x) => [x.handIndex, x.seed, x.seedKey])).toEqual([[1, h.seed, 'k2']]);
  });

  it('on a move unanswered at a reconnect rides on the next move again, never a seed frame under the move’s key', () => {
    const mk = maker();
    let fs = aheadOfHand0();
    const h = must(seedToAttach(fs, mk));
    fs = rejoined(markAttached(fs, h));
    expect(seedsToSend(fs, true, mk)).toEqual([]);
    const again = must(seedToAttach(fs, mk));
    expect([again.seed, again.seedKey]).toEqual([h.seed, 'k2']);
    fs = markAttached(fs, again);
    // The first move's acceptance, late, is still this page's seed.
    fs = fold(fs, accepted(1, 'p0/k1'));
    expect(fs.hands[1]).toMatchObject({ seedAccepted: true, seedElsewhere: null });
  });

  it('on a move unanswered at a reconnect after the hand before it ended goes in a seed frame of its own key', () => {
    const mk = maker();
    let fs = aheadOfHand0();
    const h = must(seedToAttach(fs, mk));
    fs = rejoined(fold(markAttached(fs, h), revealed(0)));
    expect(seedToAttach(fs, mk)).toBeUndefined();
    const due = seedsToSend(fs, true, mk);
    expect(due.map((x) => [x.handIndex, x.seed, x.seedKey])).toEqual([[1, h.seed, 'k2']]);
  });

  it('of a watcher, or a seat not awaited, is never made', () => {
    const mk = maker();
    const fs = fold(emptyFair(), committed(0, false, []), started(0), committed(1, true, [1, 2]));
    expect(seedToAttach(fs, mk)).toBeUndefined();
    expect(seedsToSend(fold(fs, revealed(0)), true, mk)).toEqual([]);
    expect(mk.seeds).toBe(0);
  });

  it('of a replayed hand committed ahead and seeded by another page is not made', () => {
    const mk = maker();
    const fs = fold(aheadOfHand0(), accepted(1, 'p0/the-page-before'));
    expect(seedToAttach(fs, mk)).toBeUndefined();
    expect(seedsToSend(fold(fs, revealed(0)), true, mk)).toEqual([]);
    expect(fs.hands[1]).toMatchObject({ seed: null, seedElsewhere: 'elsewhere' });
  });
});

describe('a view after a resync', () => {
  const base: TableView = {
    settings: {} as TableView['settings'],
    seats: [],
    yourSeat: 0,
    yourHand: [],
    phase: 'bid',
    handIndex: 3,
    pulkaIndex: 0,
    cardsPerSeat: 4,
    dealerSeat: 2,
    trump: null,
    turnedCard: null,
    trick: [],
    turnSeat: 1,
    deadline: null,
    committed: null,
    seededSeats: [],
    nextCommitted: null,
    nextSeededSeats: [],
    legal: null,
  };
  const synced = (v: Partial<TableView>) => ev({ kind: 'view_synced', view: { ...base, ...v } });
  const commitment = (hand: number, waiting: boolean, awaitedSeats = [0, 1]) => ({ handIndex: hand, commitment: hex(hand + 1), seedDeadline: waiting ? deadline : null, awaitedSeats });

  it('keeps both commitments, and the next move carries the seed of the hand committed ahead', () => {
    const mk = maker();
    const fs = fold(emptyFair(), synced({ committed: commitment(3, false), nextCommitted: commitment(4, true) }));
    expect(fs.hands[3]).toMatchObject({ commitment: hex(4), dealt: true });
    expect(fs.hands[4]).toMatchObject({ commitment: hex(5), attachDue: true, seedDue: false });
    expect(seedsToSend(fs, true, mk)).toEqual([]);
    expect(must(seedToAttach(fs, mk)).handIndex).toBe(4);
  });

  it('sends the seed of the hand waiting for its deal, unless its seat is seeded', () => {
    const mk = maker();
    const fs = fold(emptyFair(), synced({ committed: commitment(3, true), seededSeats: [1] }));
    expect(seedsToSend(fs, false, mk).map((h) => h.handIndex)).toEqual([3]);
    const seeded = fold(emptyFair(), synced({ committed: commitment(3, true), seededSeats: [0, 1] }));
    expect(seedsToSend(seeded, true, mk)).toEqual([]);
    expect(seeded.hands[3]).toMatchObject({ seed: null, seedElsewhere: 'elsewhere' });
  });

  it('attaches nothing for a seat seeded ahead, or not awaited', () => {
    const mk = maker();
    expect(seedToAttach(fold(emptyFair(), synced({ nextCommitted: commitment(4, true), nextSeededSeats: [0] })), mk)).toBeUndefined();
    expect(seedToAttach(fold(emptyFair(), synced({ nextCommitted: commitment(4, true, [1]) })), mk)).toBeUndefined();
    expect(mk.seeds).toBe(0);
  });
});
