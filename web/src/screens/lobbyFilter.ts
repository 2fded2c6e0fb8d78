// The lobby's filters, as a pure function over the table list.

import type { TableSummary } from '../protocol/types';

export interface LobbyFilter {
  game: 'all' | 'standard' | 'nines' | 'japanese';
  stake: 'any' | 'free' | 'coins';
  /** Coin tables only up to this stake; 0 for any. */
  maxStake: number;
  freeSeats: boolean;
}

export const DEFAULT_FILTER: LobbyFilter = { game: 'all', stake: 'any', maxStake: 0, freeSeats: false };

export function freeSeats(t: TableSummary): number {
  if (t.status !== 'waiting') return 0;
  return t.seats.filter((s) => !s.playerId && !s.bot).length;
}

export function matches(t: TableSummary, f: LobbyFilter): boolean {
  const s = t.settings;
  if (t.status === 'finished') return false;
  // A stake of a kind this client does not know is never listed as joinable.
  if (s.stake.kind === 'unknown') return false;
  switch (f.game) {
    case 'standard':
    case 'nines':
      if (s.game !== 'classic' || s.variant !== f.game) return false;
      break;
    case 'japanese':
      if (s.game !== 'japanese') return false;
      break;
  }
  if (f.stake === 'free' && s.stake.kind !== 'free') return false;
  if (f.stake === 'coins') {
    if (s.stake.kind !== 'coins') return false;
    if (f.maxStake > 0 && s.stake.amount > f.maxStake) return false;
  }
  if (f.freeSeats && freeSeats(t) === 0) return false;
  return true;
}

/** Waiting tables first, then the newest. */
export function filterTables(ts: readonly TableSummary[], f: LobbyFilter): TableSummary[] {
  return ts
    .filter((t) => matches(t, f))
    .sort((a, b) => {
      const wa = a.status === 'waiting' ? 0 : 1;
      const wb = b.status === 'waiting' ? 0 : 1;
      if (wa !== wb) return wa - wb;
      return (b.createdAt ?? 0) - (a.createdAt ?? 0);
    });
}

/** The table id in a pasted link ("https://…/t/abc") or a bare id. */
export function tableIdFromLink(text: string): string | null {
  const s = text.trim();
  if (s === '') return null;
  const m = /\/t\/([^/?#\s]+)/.exec(s);
  const id = m?.[1] ? decodeURIComponent(m[1]) : s;
  return /^[\x21-\x7e]{1,64}$/.test(id) && !/[{}/]/.test(id) ? id : null;
}
