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

/** The frame for a move at table, with the client's ref and idempotency key. */
export function moveFrame(table: string, m: Move, ref: string, cmd: string): Record<string, unknown> {
  const base = { table, ref, cmd };
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
