// Plans a classic hand when all four hands are known, so that the bids can
// be chosen before the play: who takes how many tricks if every seat plays
// by a fixed policy. Only the rules that policy needs are written here
// (rules.md "Play"): follow suit, else trump, else anything; jokers are kept
// to the end, then led as "highest of the trump suit" (which always wins) or
// thrown away with "discard" (which always loses). The server checks every
// move, and the test compares every trick's winner with the plan.

import { isJoker, rankOf, suitOf, type Card, type Suit } from '../src/protocol/cards';

export type Trump = Suit | 'none';

export interface PlannedPlay {
  seat: number;
  card: Card;
  joker: { action: 'highest' | 'discard'; suit?: Suit } | null;
}

export interface HandPlan {
  plays: PlannedPlay[];
  /** The seat that takes each trick. */
  winners: number[];
  tricks: number[];
}

/** 'high' seats follow with their highest legal card, 'low' seats with their lowest. */
export type Style = 'high' | 'low';

function byRank(a: Card, b: Card): number {
  return rankOf(a) - rankOf(b) || a - b;
}

function legalOrdinary(hand: Card[], lead: PlannedPlay, trump: Trump): Card[] {
  const ordinary = hand.filter((c) => !isJoker(c));
  const trumps = trump === 'none' ? [] : ordinary.filter((c) => suitOf(c) === trump);
  if (lead.joker?.action === 'highest' && lead.joker.suit) {
    const s = lead.joker.suit;
    const ofSuit = ordinary.filter((c) => suitOf(c) === s).sort(byRank);
    const top = ofSuit[ofSuit.length - 1];
    if (top !== undefined) return [top];
    return trumps.length > 0 ? trumps : ordinary;
  }
  const led = suitOf(lead.card);
  const follow = ordinary.filter((c) => suitOf(c) === led);
  if (follow.length > 0) return follow;
  return trumps.length > 0 ? trumps : ordinary;
}

function winnerOf(trick: PlannedPlay[], trump: Trump): number {
  const lead = trick[0];
  if (!lead) throw new Error('empty trick');
  // A joker led as "highest of S" with S the trump (or with no trump in
  // play) takes the trick; followers' jokers are all discarded.
  if (lead.joker) return lead.seat;
  const ordinary = trick.filter((p) => !p.joker);
  const trumps = trump === 'none' ? [] : ordinary.filter((p) => suitOf(p.card) === trump);
  const pool = trumps.length > 0 ? trumps : ordinary.filter((p) => suitOf(p.card) === suitOf(lead.card));
  const best = pool.reduce((a, b) => (rankOf(b.card) > rankOf(a.card) ? b : a));
  return best.seat;
}

/** Plays the hand out: leader leads the first trick, each trick's winner the next. */
export function planHand(hands: Card[][], trump: Trump, leader: number, styles: Style[]): HandPlan {
  const left = hands.map((h) => [...h]);
  const n = left[0]?.length ?? 0;
  const plan: HandPlan = { plays: [], winners: [], tricks: hands.map(() => 0) };
  let lead = leader;
  for (let t = 0; t < n; t++) {
    const trick: PlannedPlay[] = [];
    for (let k = 0; k < 4; k++) {
      const seat = (lead + k) % 4;
      const hand = left[seat] ?? [];
      let play: PlannedPlay;
      const ordinary = hand.filter((c) => !isJoker(c));
      const first = trick[0];
      if (first === undefined) {
        if (ordinary.length > 0) {
          play = { seat, card: [...ordinary].sort(byRank)[ordinary.length - 1] as Card, joker: null };
        } else {
          play = { seat, card: hand[0] as Card, joker: { action: 'highest', suit: trump === 'none' ? 'S' : trump } };
        }
      } else {
        const legal = legalOrdinary(hand, first, trump).sort(byRank);
        if (legal.length > 0) {
          play = { seat, card: (styles[seat] === 'high' ? legal[legal.length - 1] : legal[0]) as Card, joker: null };
        } else {
          play = { seat, card: hand[0] as Card, joker: { action: 'discard' } };
        }
      }
      left[seat] = hand.filter((c) => c !== play.card);
      trick.push(play);
    }
    const w = winnerOf(trick, trump);
    plan.plays.push(...trick);
    plan.winners.push(w);
    plan.tricks[w] = (plan.tricks[w] ?? 0) + 1;
    lead = w;
  }
  return plan;
}
