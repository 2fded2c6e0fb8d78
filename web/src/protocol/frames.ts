// The JSON frames of the gateway's WebSocket (pkg/wire,
// docs/protocol.md): what the client sends, and what it reads back.

import { cardCode, type Card, type Suit } from './cards';
import type { JokerAction, Trump } from './types';
/** A table command the player makes (the frame without table, ref and cmd). */
export type Move =
  | { type: 'bid'; tricks: number }
  | { type: 'trump'; suit: Trump }
  | { type: 'play'; card: Card; joker?: { action: JokerAction; suit?: Suit } }
  | { type: 'resign' }
  | { type: 'leave' }
  | { type: 'sit'; seat: number };

/**
 * A client seed riding on a move: the seat's seed (64 hex digits) for the
 * hand committed ahead (docs/fair-play.md, "What a client does").
 */
export interface AttachedSeed {
  hand: number;
  seed: string;
}

/** Whether a move can carry a seed (a bid, trump or card: Command.attached_seed). */
export function carriesSeed(m: Move): boolean {
  return m.type === 'bid' || m.type === 'trump' || m.type === 'play';
}

/**
 * The frame for a move at table, with the client's ref and idempotency key,
 * and the seed riding on it (dropped from a move that cannot carry one).
 */
export function moveFrame(table: string, m: Move, ref: string, cmd: string, seed?: AttachedSeed): Record<string, unknown> {
  const base: Record<string, unknown> = { table, ref, cmd };
  if (seed && carriesSeed(m)) {
    base.hand = seed.hand;
    base.seed = seed.seed;
  }
  switch (m.type) {
    case 'bid':
      return { ...base, type: 'bid', tricks: m.tricks };
    case 'trump':
      return { ...base, type: 'trump', suit: m.suit };
    case 'play': {
      const f: Record<string, unknown> = { ...base, type: 'play', card: cardCode(m.card) };
      if (m.joker) f.joker = m.joker.suit ? { action: m.joker.action, suit: m.joker.suit } : { action: m.joker.action };
      return f;
    }
    case 'sit':
      return { ...base, type: 'sit', seat: m.seat };
    case 'resign':
    case 'leave':
      return { ...base, type: m.type };
  }
}

export interface ServerError {
  code: string;
  message: string;
  ref: string;
}
