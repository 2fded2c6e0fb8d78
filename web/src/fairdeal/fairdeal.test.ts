// The browser's fair deal against the Go one: every vector of
// pkg/fairdeal/testdata/vectors.json (the file TestVectors pins) gives the
// same commitment, shuffle key, deck and next draw here.

import { describe, expect, test } from 'vitest';
import vectors from '../../../pkg/fairdeal/testdata/vectors.json';
import { classicPositions, commitment, fromHex, japanesePositions, shuffle, shuffleKey, toHex } from './fairdeal';

interface Vector {
  table_id: string;
  game_id: string;
  hand: number;
  server_seed: string;
  client_seeds: string[];
  commitment: string;
  shuffle_key: string;
  deck: number[];
  next_int_n_4: number;
}

function bytes(hex: string): Uint8Array {
  const b = fromHex(hex);
  if (!b) throw new Error(`not hex: ${hex}`);
  return b;
}

describe('pkg/fairdeal vectors', () => {
  const all = vectors as Vector[];
  test('the file has vectors', () => {
    expect(all.length).toBeGreaterThan(0);
  });
  for (const v of all) {
    test(`${v.table_id} / ${v.game_id} hand ${v.hand}`, async () => {
      const h = { tableId: v.table_id, gameId: v.game_id, index: v.hand };
      const server = bytes(v.server_seed);
      expect(toHex(await commitment(h, server))).toBe(v.commitment);
      const key = await shuffleKey(h, server, v.client_seeds.map(bytes));
      expect(toHex(key)).toBe(v.shuffle_key);
      const { deck, stream } = await shuffle(key);
      expect(deck).toEqual(v.deck);
      expect(await stream.intN(4)).toBe(v.next_int_n_4);
    });
  }
});

test('a changed seed, table, game or hand changes the commitment', async () => {
  const v = (vectors as Vector[])[0] as Vector;
  const h = { tableId: v.table_id, gameId: v.game_id, index: v.hand };
  const server = bytes(v.server_seed);
  const other = new Uint8Array(server);
  other[31] = (other[31] ?? 0) ^ 1;
  for (const [hh, s] of [
    [h, other],
    [{ ...h, index: h.index + 1 }, server],
    [{ ...h, gameId: h.gameId + 'x' }, server],
    [{ ...h, tableId: h.tableId + 'x' }, server],
  ] as const) {
    expect(toHex(await commitment(hh, s))).not.toBe(v.commitment);
  }
});

test('the deal layout gives every seat its own cards, all 36 once with the turned card or columns', () => {
  for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9]) {
    for (let dealer = 0; dealer < 4; dealer++) {
      const seen = new Set<number>();
      for (let seat = 0; seat < 4; seat++) {
        const ps = classicPositions(n, dealer, seat);
        expect(ps).toHaveLength(n);
        ps.forEach((p) => seen.add(p));
      }
      expect(seen.size).toBe(4 * n);
      // The seat after the dealer is served first.
      expect(classicPositions(n, dealer, (dealer + 1) % 4)[0]).toBe(0);
    }
  }
  const jp = new Set([...japanesePositions(0, 0), ...japanesePositions(0, 1)]);
  expect(jp).toEqual(new Set(Array.from({ length: 16 }, (_, i) => i)));
  expect(japanesePositions(1, 1).slice(0, 3)).toEqual([0, 1, 2]);
});
