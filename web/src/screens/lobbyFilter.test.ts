import { describe, expect, it } from 'vitest';
import { summaryFromJson } from '../protocol/view';
import { DEFAULT_FILTER, filterTables, freeSeats, tableIdFromLink } from './lobbyFilter';

function table(id: string, settings: Record<string, unknown>, seats: Record<string, unknown>[], status = 'TABLE_STATUS_WAITING', created = '2024-01-01T00:00:00Z') {
  return summaryFromJson({ table_id: id, name: id, settings: { visibility: 'TABLE_VISIBILITY_PUBLIC', ...settings }, seats, status, created_at: created });
}

const classic = { game: 'GAME_CLASSIC', classic_variant: 'CLASSIC_VARIANT_STANDARD', khishti: 'KHISHTI_PENALTY_200', stake: { free: {} } };
const nines = { ...classic, classic_variant: 'CLASSIC_VARIANT_NINES', stake: { coins: { amount: '50' } } };
const japanese = { game: 'GAME_JAPANESE', japanese_target: 21, stake: { coins: { amount: '500' } } };
const four = (taken: number) => [0, 1, 2, 3].map((i) => (i < taken ? { index: i, player_id: `p${i}`, display_name: `P${i}` } : { index: i }));

const tables = [
  table('a', classic, four(2), 'TABLE_STATUS_WAITING', '2024-01-01T00:00:01Z'),
  table('b', nines, four(4), 'TABLE_STATUS_PLAYING', '2024-01-01T00:00:05Z'),
  table('c', japanese, [{ player_id: 'p0', display_name: 'X' }, { index: 1 }], 'TABLE_STATUS_WAITING', '2024-01-01T00:00:03Z'),
  table('d', { ...classic, stake: { bitcoin: {} } }, four(1)),
  table('e', classic, four(4), 'TABLE_STATUS_FINISHED'),
];
const ids = (f: Partial<typeof DEFAULT_FILTER>) => filterTables(tables, { ...DEFAULT_FILTER, ...f }).map((t) => t.tableId);

describe('lobby filters', () => {
  it('lists waiting tables first, newest first, and never finished ones or unknown stakes', () => {
    expect(ids({})).toEqual(['c', 'a', 'b']);
  });

  it('filters by game and variant', () => {
    expect(ids({ game: 'standard' })).toEqual(['a']);
    expect(ids({ game: 'nines' })).toEqual(['b']);
    expect(ids({ game: 'japanese' })).toEqual(['c']);
  });

  it('filters by stake, with a ceiling for coin tables', () => {
    expect(ids({ stake: 'free' })).toEqual(['a']);
    expect(ids({ stake: 'coins' })).toEqual(['c', 'b']);
    expect(ids({ stake: 'coins', maxStake: 100 })).toEqual(['b']);
  });

  it('filters tables with free seats', () => {
    expect(ids({ freeSeats: true })).toEqual(['c', 'a']);
    expect(tables.slice(0, 2).map(freeSeats)).toEqual([2, 0]);
  });

  it('finds the table id in a private table’s link', () => {
    expect(tableIdFromLink('https://pulka.example/t/abc123')).toBe('abc123');
    expect(tableIdFromLink('  /t/x-9?x=1 ')).toBe('x-9');
    expect(tableIdFromLink('abc123')).toBe('abc123');
    expect(tableIdFromLink('')).toBeNull();
    expect(tableIdFromLink('has space')).toBeNull();
    expect(tableIdFromLink('{bad}')).toBeNull();
  });
});
