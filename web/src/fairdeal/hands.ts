// What this client knows of each hand's commit–reveal deal, folded from the
// table's events: the commitment received before the deal, the client seed
// this browser sent (kept in memory only, for the hand's check), the cards
// dealt to this player, and the reveal. verify.ts checks a hand from it.
//
// A seed is made only when it is sent (seedsToSend, then markSent), never
// while folding: a replayed commitment (after a reload, on a second tab or
// device) may have been answered already by this player's other page, and
// a seed made for it would be one the table never saw. When the seat's
// seed comes from another page (its acceptance is caused by another
// command, or the table refuses this page's), this page does not know the
// seed used for its seat and does not check it (seedElsewhere).

import type { Card } from '../protocol/cards';
import type { TableEvent } from '../protocol/types';

export interface FairHand {
  tableId: string;
  gameId: string;
  handIndex: number;
  /** hand_committed's commitment (hex), received before any card of the hand. */
  commitment: string;
  awaitedSeats: number[];
  /** The player's seat when the hand awaited it (its seed is the player's), null when it did not. */
  seedSeat: number | null;
  /** The seed this browser sent (hex), null until it sent one. */
  seed: string | null;
  /** The seed frame's idempotency key (sent again, same key, after a reconnect); '' until sent. */
  seedKey: string;
  /** The seed is due and waits to be sent (events replayed at a join wait for its end). */
  seedDue: boolean;
  /** The table took this browser's seed (the acceptance was caused by its command). */
  seedAccepted: boolean;
  /**
   * The seat's seed is not this page's to check: 'elsewhere' when it came from
   * another page of the player (another tab or device, or this one before a
   * reload) or the table refused this page's; 'late' when this page's reached
   * the table after the deal. null otherwise.
   */
  seedElsewhere: 'elsewhere' | 'late' | null;
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
}

/** Makes a client seed (hex) and an idempotency key, when a seed is sent. */
export interface SeedMaker {
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
    seedElsewhere: null,
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
        if (h.seedSeat === null && !h.dealt && ctx.yourSeat !== null && b.awaitedSeats.includes(ctx.yourSeat)) {
          return { ...out, seedSeat: ctx.yourSeat, seedDue: true };
        }
        return out;
      });
    case 'client_seed_accepted': {
      const h = state.hands[b.handIndex];
      if (!h || b.seat !== h.seedSeat || h.seedAccepted) return state;
      // An acceptance without caused_by (none is written so) is taken as
      // this page's when it sent one: the reveal then decides.
      const mine = h.seed !== null && (ev.causedBy === '' || ev.causedBy.endsWith(`/${h.seedKey}`));
      return edit(b.handIndex, (x) => (mine ? { ...x, seedAccepted: true, seedDue: false } : { ...x, seedDue: false, seedElsewhere: 'elsewhere' }));
    }
    case 'move_rejected': {
      const h = seedRefused(state, ev);
      if (!h) return state;
      return edit(h.handIndex, (x) => ({ ...x, seedDue: false, seedElsewhere: b.reason === 'WRONG_PHASE' ? 'late' : 'elsewhere' }));
    }
    case 'hand_started':
      return edit(b.handIndex, (h) => ({
        ...h,
        dealt: true,
        seedDue: false,
        // Sent, not taken before the deal: it came too late.
        seedElsewhere: h.seedElsewhere ?? (h.seed !== null && !h.seedAccepted ? 'late' : null),
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
 * The hand whose seed command a move_rejected event refuses, if it is one
 * of this page's seeds.
 */
export function seedRefused(fs: FairState, ev: TableEvent): FairHand | undefined {
  if (ev.body.kind !== 'move_rejected' || ev.causedBy === '') return undefined;
  return Object.values(fs.hands).find((h) => h.seed !== null && !h.seedAccepted && ev.causedBy.endsWith(`/${h.seedKey}`));
}

/**
 * The seed frames to send now: the hands whose seed is due, and (after a
 * reconnect, again) the ones sent but neither accepted nor dealt yet. A hand
 * without a seed gets one from mk here, as it is sent: pass the ones that
 * left to markSent, which keeps their seeds.
 */
export function seedsToSend(fs: FairState, resend: boolean, mk: SeedMaker): FairHand[] {
  return Object.values(fs.hands)
    .filter(
      (h) =>
        h.seedSeat !== null &&
        h.seedElsewhere === null &&
        !h.dealt &&
        !h.seedAccepted &&
        h.revealed === null &&
        (h.seedDue || (resend && h.seed !== null)),
    )
    .map((h) => (h.seed !== null ? h : { ...h, seed: mk.newSeed(), seedKey: mk.newKey() }));
}

/** Marks the hands' seeds sent, and keeps the seeds. */
export function markSent(fs: FairState, sent: FairHand[]): FairState {
  if (sent.length === 0) return fs;
  const hands = { ...fs.hands };
  for (const h of sent) {
    const cur = hands[h.handIndex];
    if (cur) hands[h.handIndex] = { ...cur, seed: h.seed, seedKey: h.seedKey, seedDue: false };
  }
  return { ...fs, hands };
}

/** The revealed hands, newest last. */
export function revealedHands(fs: FairState): FairHand[] {
  return Object.values(fs.hands)
    .filter((h) => h.revealed !== null)
    .sort((a, b) => a.handIndex - b.handIndex);
}
