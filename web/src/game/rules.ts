// Client-side hints of the rules: which cards may be played now and which
// bid the dealer may not make. The server decides (pkg/classic, pkg/japanese);
// these only grey out what it would refuse, so they mirror its rules exactly
// and are tested against the same cases.

import { isJoker, rankOf, suitOf, type Card, type Suit } from '../protocol/cards';
import type { PlayedCard, Trump } from '../protocol/types';
import type { TableState } from './state';

function highest(cs: readonly Card[]): Card | undefined {
  let best: Card | undefined;
  for (const c of cs) if (best === undefined || rankOf(c) > rankOf(best)) best = c;
  return best;
}

function ofSuit(cs: readonly Card[], s: Suit | 'none' | null): Card[] {
  if (s === null || s === 'none') return [];
  return cs.filter((c) => suitOf(c) === s);
}

/**
 * Classic follow rule: the led suit if you have it (only its highest card
 * under a led "highest" joker), else a trump if you have one, else anything;
 * a joker always.
 */
export function classicPlayable(hand: readonly Card[], trick: readonly PlayedCard[], trump: Trump | null): Card[] {
  const lead = trick[0];
  if (!lead) return [...hand];
  const jokers = hand.filter(isJoker);
  const ledSuit: Suit | null = isJoker(lead.card) ? (lead.joker?.suit ?? null) : suitOf(lead.card);
  const of = ofSuit(hand, ledSuit);
  if (of.length > 0) {
    if (isJoker(lead.card) && lead.joker?.action === 'highest') {
      const h = highest(of);
      return h === undefined ? jokers : [...jokers, h];
    }
    return [...jokers, ...of];
  }
  const tr = ofSuit(hand, trump);
  if (tr.length > 0) return [...jokers, ...tr];
  return [...hand];
}

/**
 * Japanese follow rule over what the player can reach (hand, plus face-up
 * column cards after their first card of the hand).
 */
export function japanesePlayable(avail: readonly Card[], trick: readonly PlayedCard[], trump: Trump | null): Card[] {
  const lead = trick[0];
  if (!lead) return [...avail];
  const jokers = avail.filter(isJoker);
  if (isJoker(lead.card)) {
    const named = lead.joker?.suit ?? null;
    const of = ofSuit(avail, named);
    if (of.length > 0) {
      const h = highest(of);
      return h === undefined ? jokers : [h, ...jokers];
    }
    if (named !== trump) {
      const t = ofSuit(avail, trump);
      if (t.length > 0) return [...t, ...jokers];
    }
    return [...avail];
  }
  const of = ofSuit(avail, suitOf(lead.card));
  if (of.length > 0) return [...of, ...jokers];
  const t = ofSuit(avail, trump);
  if (t.length > 0) return [...t, ...jokers];
  return [...avail];
}

/** The cards a Japanese player can reach now: hand, plus face-up columns after the first card. */
export function japaneseAvailable(s: TableState, seat: number): Card[] {
  const hand = seat === s.yourSeat ? s.hand : [];
  const first = s.tricksPlayed === 0 && s.playedThisHand[seat] !== true;
  if (first) return [...hand];
  const up = (s.seats[seat]?.columnsUp ?? []).filter((c): c is Card => c !== null);
  return [...hand, ...up];
}

/** The cards you may play now; empty when it is not your turn to play. */
export function playableNow(s: TableState): Card[] {
  const me = s.yourSeat;
  if (me === null || s.phase !== 'play' || s.turnSeat !== me) return [];
  if (s.settings?.game === 'japanese') return japanesePlayable(japaneseAvailable(s, me), s.trick, s.trump);
  return classicPlayable(s.hand, s.trick, s.trump);
}

/**
 * The bid the dealer may not make (the one that makes the bids total the
 * cards dealt), or null for anyone else or when the others overbid.
 */
export function forbiddenBid(s: TableState, seat: number): number | null {
  if (seat !== s.dealerSeat) return null;
  let rest = 0;
  s.seats.forEach((x, i) => {
    if (i !== seat) rest += x.bid ?? 0;
  });
  const f = s.cardsPerSeat - rest;
  return f >= 0 ? f : null;
}

/** Whether the card you play now leads the trick (a joker then names a suit). */
export function leading(s: TableState): boolean {
  return s.trick.length === 0;
}
