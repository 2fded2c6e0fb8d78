// Domino Coin as the client sees it (a virtual coin: never money, never
// bought or cashed out): the balance, the ledger's entries, and what a game
// at one table won or lost. The gateway sends a balance frame after the
// welcome and one per ledger entry (docs/protocol.md, "balance"); the
// ledger page reads GET /api/v1/me/wallet/ledger. Pure functions only.

import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import {
  BalanceSchema,
  LedgerEntryKind,
  LedgerEntrySchema,
  type Balance as WireBalance,
  type LedgerEntry as WireLedgerEntry,
} from '../gen/pulka/wallet/v1/wallet_pb';

export interface Balance {
  available: number;
  held: number;
  /** The number of the ledger entry it is the balance after; higher is newer. */
  version: number;
}

export type EntryKind = 'hold' | 'release' | 'stake_settled' | 'payout' | 'signup' | 'bonus' | 'forfeit' | 'other';

export interface LedgerItem {
  seq: number;
  kind: EntryKind;
  availableDelta: number;
  heldDelta: number;
  availableAfter: number;
  heldAfter: number;
  tableId: string;
  /** Unix ms. */
  at: number;
}

const KINDS: Partial<Record<LedgerEntryKind, EntryKind>> = {
  [LedgerEntryKind.HOLD]: 'hold',
  [LedgerEntryKind.RELEASE]: 'release',
  [LedgerEntryKind.STAKE_SETTLED]: 'stake_settled',
  [LedgerEntryKind.PAYOUT]: 'payout',
  [LedgerEntryKind.SIGNUP_GRANT]: 'signup',
  [LedgerEntryKind.DAILY_BONUS]: 'bonus',
  [LedgerEntryKind.FORFEIT]: 'forfeit',
};

const n = (v: bigint): number => Number(v);

export function balanceOf(b: WireBalance | undefined): Balance {
  return { available: n(b?.available ?? 0n), held: n(b?.held ?? 0n), version: n(b?.version ?? 0n) };
}

export function ledgerItemOf(e: WireLedgerEntry): LedgerItem {
  return {
    seq: n(e.seq),
    kind: KINDS[e.kind] ?? 'other',
    availableDelta: n(e.availableDelta),
    heldDelta: n(e.heldDelta),
    availableAfter: n(e.availableAfter),
    heldAfter: n(e.heldAfter),
    tableId: e.tableId,
    at: e.createdAt ? timestampMs(e.createdAt) : 0,
  };
}

export function balanceFromJson(json: unknown): Balance {
  return balanceOf(fromJson(BalanceSchema, json as JsonValue, { ignoreUnknownFields: true }));
}

export function ledgerItemFromJson(json: unknown): LedgerItem {
  return ledgerItemOf(fromJson(LedgerEntrySchema, json as JsonValue, { ignoreUnknownFields: true }));
}

/** The newer of two balances (frames may repeat or cross an HTTP read). */
export function newerBalance(cur: Balance | null, next: Balance): Balance {
  return cur && cur.version > next.version ? cur : next;
}

/** Entries merged by seq, newest first, at most max of them. */
export function mergeEntries(list: readonly LedgerItem[], add: readonly LedgerItem[], max = 500): LedgerItem[] {
  const bySeq = new Map<number, LedgerItem>();
  for (const e of [...list, ...add]) bySeq.set(e.seq, e);
  return [...bySeq.values()].sort((a, b) => b.seq - a.seq).slice(0, max);
}

/**
 * The coins shown in an entry's amount column: the change of the available
 * balance, or of the held one when only that moved (a stake played).
 */
export function entryAmount(e: LedgerItem): number {
  return e.availableDelta !== 0 ? e.availableDelta : e.heldDelta;
}

export interface TableCoins {
  /** Coins won (positive) or lost (negative) at the table, stake included. */
  net: number;
  /** The table's pot was paid out (or its stake returned): net is final. */
  settled: boolean;
}

/**
 * What a game at a table won or lost, from the account's ledger entries of
 * that table: the stake went from available to held (hold), then was played
 * into the pot (stake_settled) and a share came back (payout), or was
 * returned (release). The sum of both deltas over them is the net; null
 * when no entry is about the table (a free table, or none seen yet).
 */
export function tableCoins(entries: readonly LedgerItem[], tableId: string): TableCoins | null {
  const mine = entries.filter((e) => e.tableId === tableId && tableId !== '');
  if (mine.length === 0) return null;
  let net = 0;
  let settled = false;
  for (const e of mine) {
    net += e.availableDelta + e.heldDelta;
    if (e.kind === 'stake_settled' || e.kind === 'payout' || e.kind === 'release') settled = true;
  }
  // A hold still open (the pot not paid yet) is not a loss yet.
  const open = mine.some((e) => e.kind === 'hold') && !settled;
  return { net: open ? 0 : net, settled: settled && !open };
}
