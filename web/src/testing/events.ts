// Table events as the gateway writes them (protojson with proto names:
// zero values left out, int64 as strings, enums by name), for tests.

import type { TableEvent } from '../protocol/types';
import { tableEventFromJson } from '../protocol/view';

let n = 0;

/** One event of table t1 with the next stream id. */
export function wireEvent(body: Record<string, unknown>, id?: string): TableEvent {
  n++;
  return tableEventFromJson('t1', id ?? `1700000000000-${n}`, { seq: String(n), table_id: 't1', game_id: 'g1', visibility: { audience: 'AUDIENCE_PUBLIC' }, ...body });
}

export const classicSettings = {
  game: 'GAME_CLASSIC',
  classic_variant: 'CLASSIC_VARIANT_STANDARD',
  khishti: 'KHISHTI_PENALTY_200',
  premia: true,
  moshla: true,
  rest_docked: true,
  visibility: 'TABLE_VISIBILITY_PUBLIC',
  stake: { free: {} },
  move_time: '30s',
};

export const japaneseSettings = {
  game: 'GAME_JAPANESE',
  japanese_target: 21,
  visibility: 'TABLE_VISIBILITY_PUBLIC',
  stake: { free: {} },
};

export function seatsOf(names: string[]): Record<string, unknown>[] {
  // Seat 0 has no "seat" key: protojson leaves zeros out.
  return names.map((name, i) => (i === 0 ? { player_id: 'p0', display_name: name } : { seat: i, player_id: `p${i}`, display_name: name }));
}

/**
 * A LegalMoves event body for seat 0 (private to it), as the table sends it
 * right after the event carrying that seat's move timer. l is the
 * LegalMoves in protojson (phase, trumps, bids, plays).
 */
export function legalMoves(l: Record<string, unknown>): Record<string, unknown> {
  return { visibility: { audience: 'AUDIENCE_SEAT' }, legal_moves: l };
}

/** A LegalPlay of a card with no declaration. */
export function legalCard(card: string): Record<string, unknown> {
  return { card };
}

/** A LegalPlay of a joker with declarations given as "take", "discard", "highest-S", "give-H"… */
export function legalJoker(card: string, ...decls: string[]): Record<string, unknown> {
  const suits: Record<string, string> = { S: 'SUIT_SPADES', H: 'SUIT_HEARTS', D: 'SUIT_DIAMONDS', C: 'SUIT_CLUBS' };
  return {
    card,
    declarations: decls.map((d) => {
      const [action = '', suit] = d.split('-');
      const a = `JOKER_ACTION_${action.toUpperCase()}`;
      return suit ? { action: a, suit: suits[suit] } : { action: a };
    }),
  };
}
