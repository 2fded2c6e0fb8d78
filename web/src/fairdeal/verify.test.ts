// A hand folded from its events and checked: the honest one verifies, and
// each lie a table could tell fails the check that catches it.

import { expect, test } from 'vitest';
import vectors from '../../../pkg/fairdeal/testdata/vectors.json';
import type { EventBody, TableEvent } from '../protocol/types';
import { applyFair, emptyFair, seedsToSend, type FairContext, type FairState } from './hands';
import { classicPositions } from './fairdeal';
import { verifyHand } from './verify';

function must<T>(x: T | undefined): T {
  if (x === undefined) throw new Error('missing');
  return x;
}

const v = must((vectors as { table_id: string; game_id: string; hand: number; server_seed: string; client_seeds: string[]; commitment: string; deck: number[] }[])[0]);

function ev(body: EventBody): TableEvent {
  return { id: '', seq: 0, tableId: v.table_id, gameId: v.game_id, causedBy: '', occurredAt: null, body, timer: null };
}

const ctx: FairContext = {
  tableId: v.table_id,
  yourSeat: 0,
  japanese: false,
  handIndex: v.hand,
  newSeed: () => must(v.client_seeds[0]),
  newKey: () => 'k1',
};

// Seat 0 in a nine-card hand dealt by seat 3: seat 0 is served first.
function play(over: Partial<{ dealt: number[]; server: string; seeds: string[]; commitment: string }> = {}): FairState {
  const mine = classicPositions(9, 3, 0).map((p) => must(v.deck[p]));
  let fs = emptyFair();
  fs = applyFair(fs, ev({ kind: 'hand_committed', handIndex: v.hand, commitment: v.commitment, seedDeadline: null, awaitedSeats: [0, 2] }), ctx);
  expect(seedsToSend(fs, false).map((h) => [h.handIndex, h.seed, h.seedSeat])).toEqual([[v.hand, v.client_seeds[0], 0]]);
  fs = applyFair(fs, ev({ kind: 'client_seed_accepted', handIndex: v.hand, seat: 0 }), ctx);
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
  expect(seedsToSend(play(), true)).toEqual([]);
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
  let fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: 0, commitment: v.commitment, seedDeadline: null, awaitedSeats: [1] }), ctx);
  expect(seedsToSend(fs, true)).toEqual([]);
  fs = applyFair(emptyFair(), ev({ kind: 'hand_committed', handIndex: 0, commitment: v.commitment, seedDeadline: null, awaitedSeats: [0] }), ctx);
  fs = applyFair(fs, ev({ kind: 'hand_started', handIndex: 0, pulkaIndex: 0, cardsPerSeat: 1, dealerSeat: 0 }), ctx);
  expect(seedsToSend(fs, true)).toEqual([]);
});
