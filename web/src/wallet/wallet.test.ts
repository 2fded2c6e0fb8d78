import { describe, expect, it } from 'vitest';
import { create } from '@bufbuild/protobuf';
import { LedgerEntryKind, LedgerEntrySchema } from '../gen/pulka/wallet/v1/wallet_pb';
import { balanceFromJson, entryAmount, ledgerItemFromJson, ledgerItemOf, mergeEntries, newerBalance, tableCoins, type LedgerItem } from './wallet';

const item = (seq: number, kind: LedgerItem['kind'], da: number, dh: number, tableId = 't1'): LedgerItem => ({
  seq,
  kind,
  availableDelta: da,
  heldDelta: dh,
  availableAfter: 0,
  heldAfter: 0,
  tableId,
  at: 0,
});

describe('wallet', () => {
  it('reads the gateway JSON of a balance and a ledger entry (int64 as strings, enums by name)', () => {
    expect(balanceFromJson({ account_id: 'u-1', available: '1100', held: '50', version: '3' })).toEqual({ available: 1100, held: 50, version: 3 });
    const e = ledgerItemFromJson({
      seq: '2',
      kind: 'LEDGER_ENTRY_KIND_DAILY_BONUS',
      available_delta: '100',
      available_after: '1100',
      created_at: '2026-12-05T10:00:00Z',
    });
    expect(e).toMatchObject({ seq: 2, kind: 'bonus', availableDelta: 100, heldDelta: 0, availableAfter: 1100, at: Date.UTC(2026, 11, 5, 10) });
    expect(ledgerItemOf(create(LedgerEntrySchema, { kind: LedgerEntryKind.CREDIT })).kind).toBe('other');
  });

  it('keeps the newest balance by version', () => {
    const a = { available: 1, held: 0, version: 5 };
    const b = { available: 2, held: 0, version: 4 };
    expect(newerBalance(a, b)).toBe(a);
    expect(newerBalance(b, a)).toBe(a);
    expect(newerBalance(null, b)).toBe(b);
  });

  it('merges entries by seq, newest first, bounded', () => {
    const m = mergeEntries([item(1, 'signup', 1000, 0, '')], [item(3, 'bonus', 100, 0, ''), item(1, 'signup', 1000, 0, ''), item(2, 'hold', -10, 10)]);
    expect(m.map((e) => e.seq)).toEqual([3, 2, 1]);
    expect(mergeEntries(m, [], 2).map((e) => e.seq)).toEqual([3, 2]);
  });

  it('shows the held change when the available balance did not move', () => {
    expect(entryAmount(item(1, 'hold', -50, 50))).toBe(-50);
    expect(entryAmount(item(2, 'stake_settled', 0, -50))).toBe(-50);
    expect(entryAmount(item(3, 'forfeit', 0, 0))).toBe(0);
  });

  it('sums what a table won or lost once its pot is resolved', () => {
    const hold = item(1, 'hold', -100, 100);
    // Won: staked 100, paid 250 of a 400 pot.
    expect(tableCoins([hold, item(2, 'stake_settled', 0, -100), item(3, 'payout', 250, 0)], 't1')).toEqual({ net: 150, settled: true });
    // Lost: no payout.
    expect(tableCoins([hold, item(2, 'stake_settled', 0, -100)], 't1')).toEqual({ net: -100, settled: true });
    // Released: nothing lost.
    expect(tableCoins([hold, item(2, 'release', 100, -100)], 't1')).toEqual({ net: 0, settled: true });
    // Still held: not settled yet.
    expect(tableCoins([hold], 't1')).toEqual({ net: 0, settled: false });
    // Other tables and free tables: nothing.
    expect(tableCoins([hold], 't2')).toBeNull();
    expect(tableCoins([item(1, 'bonus', 100, 0, '')], '')).toBeNull();
  });

});
