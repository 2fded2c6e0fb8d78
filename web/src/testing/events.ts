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
