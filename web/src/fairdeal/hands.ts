// What this client knows of each hand's commit–reveal deal, folded from the
// table's events: the commitment received before the deal, the client seed
// this browser sent (kept in memory only, for the hand's check), the cards
// dealt to this player, and the reveal. verify.ts checks a hand from it.

import type { Card } from '../protocol/cards';
import type { TableEvent } from '../protocol/types';

export interface FairHand {
  tableId: string;
  gameId: string;
  handIndex: number;
  /** hand_committed's commitment (hex), received before any card of the hand. */
  commitment: string;
  awaitedSeats: number[];
  /** The seat this browser sent its seed for, and the seed (hex); null when it sent none. */
  seedSeat: number | null;
  seed: string | null;
  /** The seed frame's idempotency key (sent again, same key, after a reconnect). */
  seedKey: string;
  /** The seed is due and waits to be sent (events replayed at a join wait for its end). */
  seedDue: boolean;
  seedAccepted: boolean;
  /** hand_started came: the hand is dealt, a seed is too late. */
  dealt: boolean;
  japanese: boolean;
  cardsPerSeat: number;
  /** The dealer (classic) or declarer (Japanese) of hand_started. */
  dealerSeat: number;
  /** The player's seat when the hand was dealt, and the cards dealt to it. */
  yourSeat: number | null;
  dealtToYou: Card[];
  /** Classic: the turned card. */
  turned: Card | null;
  /** Japanese: the player's face-down column cards as they came to hand. */
  columnCards: { column: number; card: Card }[];
  revealed: { serverSeed: string; clientSeeds: string[]; commitment: string } | null;
}

export interface FairState {
  gameId: string;
  /** By hand index. */
  hands: Record<number, FairHand>;
}

export function emptyFair(): FairState {
  return { gameId: '', hands: {} };
}

/** What the fold needs from the table around the event. */
export interface FairContext {
  tableId: string;
  /** The player's seat after the event (TableState.yourSeat). */
  yourSeat: number | null;
  japanese: boolean;
  /** The hand in play (TableState.handIndex), for events that name none. */
  handIndex: number;
  /** Makes a client seed (hex) and an idempotency key. */
  newSeed: () => string;
  newKey: () => string;
}

function newHand(ctx: FairContext, gameId: string, handIndex: number): FairHand {
  return {
    tableId: ctx.tableId,
    gameId,
    handIndex,
    commitment: '',
    awaitedSeats: [],
    seedSeat: null,
    seed: null,
    seedKey: '',
    seedDue: false,
    seedAccepted: false,
    dealt: false,
    japanese: ctx.japanese,
    cardsPerSeat: 0,
    dealerSeat: 0,
    yourSeat: null,
    dealtToYou: [],
    turned: null,
    columnCards: [],
    revealed: null,
  };
}

/** Folds one event. The state is replaced, never changed in place. */
export function applyFair(fs: FairState, ev: TableEvent, ctx: FairContext): FairState {
  const b = ev.body;
  let state = fs;
  if (b.kind === 'game_started' || (ev.gameId !== '' && ev.gameId !== fs.gameId)) {
    state = { gameId: ev.gameId || (b.kind === 'game_started' ? '' : fs.gameId), hands: {} };
  }
  const gameId = state.gameId;
  const edit = (i: number, f: (h: FairHand) => FairHand): FairState => {
    const h = state.hands[i] ?? newHand(ctx, gameId, i);
    return { ...state, hands: { ...state.hands, [i]: f(h) } };
  };
  switch (b.kind) {
    case 'hand_committed':
      return edit(b.handIndex, (h) => {
        const out = { ...h, commitment: b.commitment, awaitedSeats: b.awaitedSeats, japanese: ctx.japanese };
        if (h.seed === null && !h.dealt && ctx.yourSeat !== null && b.awaitedSeats.includes(ctx.yourSeat)) {
          return { ...out, seedSeat: ctx.yourSeat, seed: ctx.newSeed(), seedKey: ctx.newKey(), seedDue: true };
        }
        return out;
      });
    case 'client_seed_accepted':
      if (!state.hands[b.handIndex]) return state;
      return edit(b.handIndex, (h) => (b.seat === h.seedSeat ? { ...h, seedAccepted: true, seedDue: false } : h));
    case 'hand_started':
      return edit(b.handIndex, (h) => ({
        ...h,
        dealt: true,
        seedDue: false,
        japanese: ctx.japanese,
        cardsPerSeat: b.cardsPerSeat,
        dealerSeat: b.dealerSeat,
        yourSeat: ctx.yourSeat,
        dealtToYou: [],
        turned: null,
        columnCards: [],
      }));
    case 'dealt': {
      const h = state.hands[ctx.handIndex];
      if (!h || b.seat !== h.yourSeat) return state;
      return edit(ctx.handIndex, (x) => ({ ...x, dealtToYou: [...x.dealtToYou, ...b.cards.filter((c) => !x.dealtToYou.includes(c))] }));
    }
    case 'trump_turned': {
      if (!state.hands[ctx.handIndex]) return state;
      return edit(ctx.handIndex, (x) => ({ ...x, turned: b.card }));
    }
    case 'column_card_revealed': {
      const h = state.hands[ctx.handIndex];
      if (!h || b.seat !== h.yourSeat) return state;
      return edit(ctx.handIndex, (x) => ({ ...x, columnCards: [...x.columnCards, { column: b.column, card: b.card }] }));
    }
    case 'hand_revealed':
      return edit(b.handIndex, (h) => ({
        ...h,
        seedDue: false,
        revealed: { serverSeed: b.serverSeed, clientSeeds: b.clientSeeds, commitment: b.commitment },
      }));
    default:
      return state;
  }
}

/**
 * The seed frames to send now: the hands whose seed is due, and (after a
 * reconnect, again) the ones sent but neither accepted nor dealt yet.
 */
export function seedsToSend(fs: FairState, resend: boolean): FairHand[] {
  return Object.values(fs.hands).filter(
    (h) => h.seed !== null && !h.dealt && !h.seedAccepted && h.revealed === null && (h.seedDue || resend),
  );
}

/** Marks the hands' seeds sent. */
export function markSent(fs: FairState, sent: FairHand[]): FairState {
  if (sent.length === 0) return fs;
  const hands = { ...fs.hands };
  for (const h of sent) {
    const cur = hands[h.handIndex];
    if (cur) hands[h.handIndex] = { ...cur, seedDue: false };
  }
  return { ...fs, hands };
}

/** The revealed hands, newest last. */
export function revealedHands(fs: FairState): FairHand[] {
  return Object.values(fs.hands)
    .filter((h) => h.revealed !== null)
    .sort((a, b) => a.handIndex - b.handIndex);
}
