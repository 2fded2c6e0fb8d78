// Cards as the client handles them: a number 0..35 exactly like pkg/cards
// (suit·9 + rank, rank 0 = six … 8 = ace), the two jokers in the slots of
// the six of spades (0) and the six of clubs (27). The wire carries the
// generated pulka.common.v1.Card (pkg/cards + 1; CARD_ACE_OF_SPADES in its
// JSON); people write short codes ("AS", "10H", "JK1").

import { Card as WireCard, Suit as WireSuit } from '../gen/pulka/common/v1/cards_pb';

export type Suit = 'S' | 'H' | 'D' | 'C';
export const SUITS: readonly Suit[] = ['S', 'H', 'D', 'C'];

/** A card, 0..35. */
export type Card = number;

export const JOKER1: Card = 0;
export const JOKER2: Card = 27;
export const DECK_SIZE = 36;

const RANK_CODES = ['6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'] as const;

export function isJoker(c: Card): boolean {
  return c === JOKER1 || c === JOKER2;
}

export function isCard(c: number): boolean {
  return Number.isInteger(c) && c >= 0 && c < DECK_SIZE;
}

/** The suit of an ordinary card; null for a joker (jokers have no suit). */
export function suitOf(c: Card): Suit | null {
  if (isJoker(c)) return null;
  return SUITS[Math.floor(c / 9)] ?? null;
}

/** 0 = six … 8 = ace; higher wins within a suit. */
export function rankOf(c: Card): number {
  return c % 9;
}

export function rankCode(c: Card): string {
  return isJoker(c) ? 'JK' : (RANK_CODES[rankOf(c)] ?? '?');
}

/** The short code the gateway accepts in a play frame: "AS", "10H", "JK1". */
export function cardCode(c: Card): string {
  if (c === JOKER1) return 'JK1';
  if (c === JOKER2) return 'JK2';
  return rankCode(c) + (suitOf(c) ?? '');
}

export function suitIndex(s: Suit): number {
  return SUITS.indexOf(s);
}

export function cardOf(s: Suit, rank: number): Card {
  return suitIndex(s) * 9 + rank;
}

/** The generated enum's values by name (protoc-gen-es drops the prefix). */
function valueOf(names: object, prefix: string, v: string): number | undefined {
  return v.startsWith(prefix) ? (names as Record<string, number | undefined>)[v.slice(prefix.length)] : undefined;
}

/**
 * Reads a card as the wire carries it: pulka.common.v1.Card's number
 * (pkg/cards + 1), or its name in the protocol's JSON (CARD_ACE_OF_SPADES).
 * CARD_UNSPECIFIED, an unknown name or a missing value is null.
 */
export function parseWireCard(v: unknown): Card | null {
  const n = typeof v === 'string' ? valueOf(WireCard, 'CARD_', v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= DECK_SIZE ? n - 1 : null;
}

/** A card's enum name in the protocol's JSON (CARD_ACE_OF_SPADES). */
export function wireCardName(c: Card): string {
  return `CARD_${(WireCard as unknown as Record<number, string | undefined>)[c + 1] ?? 'UNSPECIFIED'}`;
}

const TRUMPS: readonly (Suit | 'none' | null)[] = [null, 'S', 'H', 'D', 'C', 'none']; // by pulka.common.v1.Suit

/** Reads a wire suit (its number, or its JSON name): a suit, 'none' (no trump / bezi) or null (unspecified). */
export function parseWireSuit(v: unknown): Suit | 'none' | null {
  const n = typeof v === 'string' ? valueOf(WireSuit, 'SUIT_', v) : v;
  return typeof n === 'number' ? (TRUMPS[n] ?? null) : null;
}

export function isRed(s: Suit): boolean {
  return s === 'H' || s === 'D';
}

/**
 * Sorts a hand the way players hold it: jokers first, then the trump, then
 * the other suits alternating colour where possible; high cards first
 * within a suit.
 */
export function sortHand(hand: readonly Card[], trump: Suit | 'none' | null): Card[] {
  const order = suitOrder(hand, trump);
  const key = (c: Card): number => {
    const s = suitOf(c);
    if (s === null) return -100 + c; // jokers first, JK1 before JK2
    return order.indexOf(s) * 10 + (8 - rankOf(c));
  };
  return [...hand].sort((a, b) => key(a) - key(b));
}

function suitOrder(hand: readonly Card[], trump: Suit | 'none' | null): Suit[] {
  const present = SUITS.filter((s) => hand.some((c) => suitOf(c) === s));
  const out: Suit[] = [];
  if (trump !== null && trump !== 'none' && present.includes(trump)) out.push(trump);
  const rest = present.filter((s) => !out.includes(s));
  while (rest.length > 0) {
    const last = out[out.length - 1];
    let i = last === undefined ? 0 : rest.findIndex((s) => isRed(s) !== isRed(last));
    if (i < 0) i = 0;
    out.push(...rest.splice(i, 1));
  }
  return out;
}

/** Reads a short code ("AS", "10H", "JK1"); null when it is not a card. */
export function parseCode(code: string): Card | null {
  const u = code.trim().toUpperCase();
  if (u === 'JK1') return JOKER1;
  if (u === 'JK2') return JOKER2;
  const s = u.slice(-1) as Suit;
  const r = RANK_CODES.indexOf(u.slice(0, -1) as (typeof RANK_CODES)[number]);
  if (!SUITS.includes(s) || r < 0) return null;
  const c = cardOf(s, r);
  return isJoker(c) ? null : c;
}
