// A hand folded from its events and checked: the honest one verifies, and
// each lie a table could tell fails the check that catches it.

import { expect, test } from 'vitest';
import vectors from '../../../pkg/fairdeal/testdata/vectors.json';
import type { EventBody, TableEvent } from '../protocol/types';
import { applyFair, emptyFair, markAttached, markSent, seedsToSend, seedToAttach, type FairContext, type FairState, type SeedMaker } from './hands';
import { classicPositions, fromHex, shuffle, shuffleKey } from './fairdeal';
import { verifyHand } from './verify';

function must<T>(x: T | undefined): T {
  if (x === undefined) throw new Error('missing');
  return x;
}

const v = must((vectors as { table_id: string; game_id: string; hand: number; server_seed: string; client_seeds: string[]; commitment: string; deck: number[] }[])[0]);

function ev(body: EventBody, causedBy = ''): TableEvent {
  return { id: '', seq: 0, tableId: v.table_id, gameId: v.game_id, causedBy, occurredAt: null, body, timer: null };
}

const ctx: FairContext = {
  tableId: v.table_id,
  yourSeat: 0,
  japanese: false,
  handIndex: v.hand,
};

// The hand waits for its deal (hand 0, or the view's committed hand while
// it waits): its seed goes at once in a seed frame.
const deadline = Date.UTC(2026, 0, 1);

const mk: SeedMaker = {
  newSeed: () => must(v.client_seeds[0]),
  newKey: () => 'k1',
};

// Seat 0 in a nine-card hand dealt by seat 3: seat 0 is served first.
function play(over: Partial<{ dealt: number[]; server: string; seeds: string[]; commitment: string }> = {}): FairState {
  const mine = classicPositions(9, 3, 0).map((p) => must(v.deck[p]));
  let fs = emptyFair();
  fs = applyFair(fs, ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [0, 2] }), ctx);
  const due = seedsToSend(fs, false, mk);
  expect(due.map((h) => [h.handIndex, h.seed, h.seedSeat])).toEqual([[v.hand, v.client_seeds[0], 0]]);
  fs = markSent(fs, due);
  fs = applyFair(fs, ev({ kind: 'client_seed_accepted', handIndex: v.hand, seat: 0 }, 'p0/k1'), ctx);
  fs = applyFair(fs, ev({ kind: 'hand_started', handIndex: v.hand, pulkaIndex: 0, cardsPerSeat: 9, dealerSeat: 3 }), ctx);
  const dealt = over.dealt ?? mine;
  fs = applyFair(fs, ev({ kind: 'dealt', seat: 0, cards: dealt.slice(0, 3) }), ctx);
  fs = applyFair(fs, ev({ kind: 'dealt', seat: 1, cards: [] }), ctx);
  fs = applyFair(fs, ev({ kind: 'dealt', seat: 0, cards: dealt.slice(3) }), ctx);
  fs = applyFair(
    fs,
    ev({ kind: 'hand_revealed', handIndex: v.hand, serverSeed: over.server ?? v.server_seed, clientSeeds: over.seeds ?? v.client_seeds, commitment: over.commitment ?? v.commitment }),
    ctx,
  );
  return fs;
}

test('an honest hand verifies: commitment, own seed, deal', async () => {
  const h = must(play().hands[v.hand]);
  expect(seedsToSend(play(), true, mk)).toEqual([]);
  const r = await verifyHand(h);
  expect(r).toMatchObject({ commitmentOk: true, sameCommitment: true, seedIncluded: true, dealOk: true, ok: true });
  expect(r.deck).toEqual(v.deck);
});

test('another server seed fails the commitment', async () => {
  const other = (v.server_seed.startsWith('00') ? 'ff' : '00') + v.server_seed.slice(2);
  const r = await verifyHand(must(play({ server: other }).hands[v.hand]));
  expect(r.commitmentOk).toBe(false);
  expect(r.ok).toBe(false);
});

test('a reveal without this browser’s seed fails', async () => {
  const seeds = [...v.client_seeds];
  seeds[0] = '00'.repeat(32);
  const r = await verifyHand(must(play({ seeds }).hands[v.hand]));
  expect(r.seedIncluded).toBe(false);
  expect(r.ok).toBe(false);
});

test('cards that are not at this seat’s positions fail the deal', async () => {
  const mine = classicPositions(9, 3, 0).map((p) => must(v.deck[p]));
  const theirs = classicPositions(9, 3, 1).map((p) => must(v.deck[p]));
  const r = await verifyHand(must(play({ dealt: [...mine.slice(0, 8), must(theirs[0])] }).hands[v.hand]));
  expect(r.dealOk).toBe(false);
  expect(r.ok).toBe(false);
});

test('a watcher sends no seed; a replayed, dealt hand asks for none', () => {
  let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: 0, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [1] }), ctx);
  expect(seedsToSend(fs, true, mk)).toEqual([]);
  fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: 0, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [0] }), ctx);
  fs = applyFair(fs, ev({ kind: 'hand_started', handIndex: 0, pulkaIndex: 0, cardsPerSeat: 1, dealerSeat: 0 }), ctx);
  expect(seedsToSend(fs, true, mk)).toEqual([]);
});

// Seat 0's hand as another page of the player (or this one before a reload)
// seeded it: the table took that page's seed, which this page never knew.
const otherPageSeed = 'ab'.repeat(32);
const otherSeeds = [otherPageSeed, ...v.client_seeds.slice(1)];

/** The deal and reveal of the nine-card hand of play(), from hand_started on. */
async function dealAndReveal(fs: FairState, seeds: string[]): Promise<FairState> {
  // The cards seat 0 is dealt come from the deck the seeds give.
  const key = await shuffleKey(
    { tableId: v.table_id, gameId: v.game_id, index: v.hand },
    must(fromHex(v.server_seed) ?? undefined),
    seeds.map((s) => must(fromHex(s) ?? undefined)),
  );
  const { deck } = await shuffle(key);
  const mine = classicPositions(9, 3, 0).map((p) => must(deck[p]));
  let out = applyFair(fs, ev({ kind: 'hand_started', handIndex: v.hand, pulkaIndex: 0, cardsPerSeat: 9, dealerSeat: 3 }), ctx);
  out = applyFair(out, ev({ kind: 'dealt', seat: 0, cards: mine }), ctx);
  return applyFair(out, ev({ kind: 'hand_revealed', handIndex: v.hand, serverSeed: v.server_seed, clientSeeds: seeds, commitment: v.commitment }), ctx);
}

test('after a reload, a replayed hand seeded before it verifies: the seed is "sent before a reload", not checked', async () => {
  // The whole hand is replayed at the join: no seed is made for it, none sent.
  let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [0, 2] }), ctx);
  fs = applyFair(fs, ev({ kind: 'client_seed_accepted', handIndex: v.hand, seat: 0 }, 'p0/before-the-reload'), ctx);
  expect(seedsToSend(fs, true, mk)).toEqual([]);
  expect(fs.hands[v.hand]?.seed).toBeNull();
  fs = await dealAndReveal(fs, otherSeeds);
  const r = await verifyHand(must(fs.hands[v.hand]));
  expect(r).toMatchObject({ commitmentOk: true, sameCommitment: true, seedIncluded: null, seedUnknown: 'elsewhere', dealOk: true, ok: true });
});

test('after a reload, a replayed hand dealt without any seed of this player verifies', async () => {
  let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [0, 2] }), ctx);
  const seeds = ['00'.repeat(32), ...v.client_seeds.slice(1)];
  fs = await dealAndReveal(fs, seeds);
  expect(seedsToSend(fs, true, mk)).toEqual([]);
  const r = await verifyHand(must(fs.hands[v.hand]));
  expect(r).toMatchObject({ seedIncluded: null, seedUnknown: 'none', dealOk: true, ok: true });
});

test('after a reload, a replayed hand still waiting for this seat gets a seed made as it is sent', () => {
  let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [0] }), ctx);
  expect(fs.hands[v.hand]?.seed).toBeNull();
  const due = seedsToSend(fs, true, mk);
  expect(due.map((h) => h.seed)).toEqual([v.client_seeds[0]]);
  // Not sent (the socket is down): nothing is kept, the seed is made again when it goes.
  expect(fs.hands[v.hand]?.seed).toBeNull();
  fs = markSent(fs, due);
  expect(fs.hands[v.hand]).toMatchObject({ seed: v.client_seeds[0], seedKey: 'k1', seedDue: false });
});

for (const [name, answers, why] of [
  [
    'the other tab’s seed accepted, then this one’s refused',
    [ev({ kind: 'client_seed_accepted', handIndex: v.hand, seat: 0 }, 'p0/other-tab'), ev({ kind: 'move_rejected', reason: 'NOT_ALLOWED', message: 'seat 1 has sent its seed' }, 'p0/k1')],
    'elsewhere',
  ],
  ['only the refusal (the acceptance not seen yet)', [ev({ kind: 'move_rejected', reason: 'NOT_ALLOWED', message: '' }, 'p0/k1')], 'elsewhere'],
  ['only the other tab’s acceptance (the refusal lost)', [ev({ kind: 'client_seed_accepted', handIndex: v.hand, seat: 0 }, 'p0/other-tab')], 'elsewhere'],
] as const) {
  test(`two tabs: ${name}: the hand verifies, this tab's seed not checked`, async () => {
    let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [0, 2] }), ctx);
    fs = markSent(fs, seedsToSend(fs, false, mk));
    for (const a of answers) fs = applyFair(fs, a, ctx);
    expect(seedsToSend(fs, true, mk)).toEqual([]);
    fs = await dealAndReveal(fs, otherSeeds);
    const r = await verifyHand(must(fs.hands[v.hand]));
    expect(r).toMatchObject({ commitmentOk: true, seedIncluded: null, seedUnknown: why, dealOk: true, ok: true });
  });
}

test('a seed refused as late is not checked; the hand verifies', async () => {
  let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [0, 2] }), ctx);
  fs = markSent(fs, seedsToSend(fs, false, mk));
  fs = await dealAndReveal(fs, ['00'.repeat(32), ...v.client_seeds.slice(1)]);
  fs = applyFair(fs, ev({ kind: 'move_rejected', reason: 'WRONG_PHASE', message: '' }, 'p0/k1'), ctx);
  const r = await verifyHand(must(fs.hands[v.hand]));
  expect(r).toMatchObject({ seedIncluded: null, seedUnknown: 'late', dealOk: true, ok: true });
});

test('a refusal of another command leaves the seed checked', async () => {
  let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: deadline, awaitedSeats: [0, 2] }), ctx);
  fs = markSent(fs, seedsToSend(fs, false, mk));
  fs = applyFair(fs, ev({ kind: 'move_rejected', reason: 'NOT_ALLOWED', message: '' }, 'p0/a-bid'), ctx);
  fs = applyFair(fs, ev({ kind: 'client_seed_accepted', handIndex: v.hand, seat: 0 }, 'p0/k1'), ctx);
  // The table took this tab's seed and then revealed another: caught.
  fs = await dealAndReveal(fs, otherSeeds);
  const r = await verifyHand(must(fs.hands[v.hand]));
  expect(r).toMatchObject({ seedIncluded: false, seedUnknown: null, ok: false });
});

test('a hand committed ahead, its seed on a move of the hand before it, verifies', async () => {
  let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: null, awaitedSeats: [0, 2] }), ctx);
  expect(seedsToSend(fs, true, mk)).toEqual([]);
  const h = must(seedToAttach(fs, mk));
  expect([h.seed, h.seedKey]).toEqual([v.client_seeds[0], 'k1']);
  fs = markAttached(fs, h);
  fs = applyFair(fs, ev({ kind: 'client_seed_accepted', handIndex: v.hand, seat: 0 }, 'p0/k1'), ctx);
  fs = await dealAndReveal(fs, v.client_seeds);
  const r = await verifyHand(must(fs.hands[v.hand]));
  expect(r).toMatchObject({ commitmentOk: true, sameCommitment: true, seedIncluded: true, seedUnknown: null, dealOk: true, ok: true });
});
