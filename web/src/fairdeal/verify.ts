// The check of one finished hand, in the browser: the revealed server seed
// gives the commitment received before the deal; this browser's seed is the
// one of its seat; the shuffle key and the deck recomputed as pkg/fairdeal
// does; and the cards dealt to this player are the ones at its positions of
// that deck (docs/fair-play.md's layout).

import type { Card } from '../protocol/cards';
import type { FairHand } from './hands';
import {
  classicPositions,
  classicTurnedPosition,
  commitment,
  equalBytes,
  fromHex,
  japanesePositions,
  SEED_SIZE,
  shuffle,
  shuffleKey,
  toHex,
} from './fairdeal';

export interface Verification {
  /** The commitment recomputed from the revealed seed equals the one received before the deal. */
  commitmentOk: boolean;
  /** The reveal repeats the commitment received before the deal. */
  sameCommitment: boolean;
  /**
   * This browser's seed is at its seat; checked only when the table took it
   * from this browser, null otherwise (seedUnknown says why).
   */
  seedIncluded: boolean | null;
  /**
   * Why the own seed was not checked: 'elsewhere' (sent from another tab or
   * device, or before a reload), 'late' (it reached the table after the deal),
   * 'none' (this page had no seed in the hand); null when it was checked.
   */
  seedUnknown: 'elsewhere' | 'late' | 'none' | null;
  /** The cards dealt to the player are the deck's at their positions; null when none were dealt to them. */
  dealOk: boolean | null;
  recomputed: string;
  deck: Card[];
  /** Every check that could be made passed. */
  ok: boolean;
}

function need(hex: string, what: string): Uint8Array {
  const b = fromHex(hex);
  if (!b || b.length !== SEED_SIZE) throw new Error(`${what} is not ${SEED_SIZE} bytes`);
  return b;
}

function sameSet(a: readonly Card[], b: readonly Card[]): boolean {
  return a.length === b.length && a.every((c) => b.includes(c));
}

export async function verifyHand(h: FairHand): Promise<Verification> {
  const r = h.revealed;
  if (!r) throw new Error('the hand is not revealed yet');
  const id = { tableId: h.tableId, gameId: h.gameId, index: h.handIndex };
  const server = need(r.serverSeed, 'the server seed');
  const before = need(h.commitment, 'the commitment');
  const recomputed = await commitment(id, server);
  const commitmentOk = equalBytes(recomputed, before);
  const sameCommitment = r.commitment === h.commitment;
  let seedIncluded: boolean | null = null;
  let seedUnknown: Verification['seedUnknown'] = h.seedElsewhere ?? 'none';
  if (h.seedAccepted && h.seed !== null && h.seedSeat !== null) {
    seedIncluded = r.clientSeeds[h.seedSeat] === h.seed;
    seedUnknown = null;
  }
  const key = await shuffleKey(
    id,
    server,
    r.clientSeeds.map((s, i) => need(s, `seat ${i + 1}'s client seed`)),
  );
  const { deck } = await shuffle(key);
  let dealOk: boolean | null = null;
  if (h.yourSeat !== null && h.dealtToYou.length > 0) {
    const positions = h.japanese ? japanesePositions(h.dealerSeat, h.yourSeat) : classicPositions(h.cardsPerSeat, h.dealerSeat, h.yourSeat);
    const expected = positions.map((p) => deck[p]).filter((c): c is Card => c !== undefined);
    // A nine-card hand or a Japanese hand may end before all of it is
    // dealt (a resignation): what was dealt must be among the expected.
    dealOk = h.dealtToYou.every((c) => expected.includes(c)) && (h.dealtToYou.length < expected.length || sameSet(h.dealtToYou, expected));
    if (!h.japanese) {
      const tp = classicTurnedPosition(h.cardsPerSeat);
      if (h.turned !== null && tp !== null) dealOk = dealOk && deck[tp] === h.turned;
    } else {
      const first = h.yourSeat === h.dealerSeat ? 16 : 26;
      for (const cc of h.columnCards) dealOk = dealOk && deck[first + cc.column] === cc.card;
    }
  }
  return {
    commitmentOk,
    sameCommitment,
    seedIncluded,
    seedUnknown,
    dealOk,
    recomputed: toHex(recomputed),
    deck,
    ok: commitmentOk && sameCommitment && seedIncluded !== false && dealOk !== false,
  };
}
