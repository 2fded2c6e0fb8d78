// What this client knows of each hand's commit–reveal deal, folded from the
// table's events: the commitment received before the deal, the client seed
// this browser sent (kept in memory only, for the hand's check), the cards
// dealt to this player, and the reveal. verify.ts checks a hand from it.
//
// A seed is made only when it is sent (seedsToSend, then markSent) or
// attached to a move (seedToAttach, then markAttached), never while folding: a replayed commitment (after a reload, on a second tab or
// device) may have been answered already by this player's other page, and
// a seed made for it would be one the table never saw. When the seat's
// seed comes from another page (its acceptance is caused by another
// command, or the table refuses this page's), this page does not know the
// seed used for its seat and does not check it (seedElsewhere).
//
// How a seed goes (docs/fair-play.md, "What a client does"): a hand that
// waits for its deal (committed with a seed deadline, or the hand before it
// revealed) gets a seed frame at once (seedsToSend); a hand committed a hand
// ahead gets its seed on the player's next bid, trump or card
// (seedToAttach, markAttached), whose idempotency key is then the seed's. A
// refused move took no seed: the next move carries it again, or a seed frame
// when the hand now waits for its deal.

import type { Card } from '../protocol/cards';
import type { HandCommitment, TableEvent, TableView } from '../protocol/types';

export interface FairHand {
  tableId: string;
  gameId: string;
  handIndex: number;
  /** hand_committed's commitment (hex), received before any card of the hand. */
  commitment: string;
  awaitedSeats: number[];
  /** The player's seat when the hand awaited it (its seed is the player's), null when it did not. */
  seedSeat: number | null;
  /** The seed this browser sent (hex), null until it sent (or attached) one. */
  seed: string | null;
  /**
   * The idempotency key of the command carrying the seed: the seed frame's
   * (sent again, same key, after a reconnect) or the move's it rides on;
   * '' until sent, and again once the move carrying it was refused.
   */
  seedKey: string;
  /** How the seed under seedKey went: in a seed frame, or on a move; null when no command carries it. */
  seedVia: 'frame' | 'move' | null;
  /**
   * The keys of earlier moves that carried the seed and were neither
   * accepted nor refused when the connection dropped: an acceptance caused
   * by one of them is still this page's seed.
   */
  pastKeys: string[];
  /** The hand waits for its deal: committed with a seed deadline, or the hand before it revealed. */
  waiting: boolean;
  /** The seed is due in a seed frame and waits to be sent (events replayed at a join wait for its end). */
  seedDue: boolean;
  /** The seed is due on the player's next move (the hand is committed ahead). */
  attachDue: boolean;
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
    seedVia: null,
    pastKeys: [],
    waiting: false,
    seedDue: false,
    attachDue: false,
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
  // A seed that rode on this event's move was taken: folded first, as the
  // table took it with the move.
  if (ev.seedAccepted) state = acceptSeed(state, ev, ev.seedAccepted.handIndex, ev.seedAccepted.seat);
  switch (b.kind) {
    case 'hand_committed': {
      const prev = state.hands[b.handIndex - 1];
      // Without a seed deadline the hand is committed ahead, unless the hand
      // before it is over already.
      const waiting = b.seedDeadline !== null || (prev !== undefined && prev.revealed !== null);
      return edit(b.handIndex, (h) => {
        const out = { ...h, commitment: b.commitment, awaitedSeats: b.awaitedSeats, japanese: ctx.japanese, waiting: h.waiting || waiting };
        if (h.seedSeat === null && !h.dealt && ctx.yourSeat !== null && b.awaitedSeats.includes(ctx.yourSeat)) {
          return { ...out, seedSeat: ctx.yourSeat, seedDue: out.waiting, attachDue: !out.waiting };
        }
        return out;
      });
    }
    case 'client_seed_accepted':
      return acceptSeed(state, ev, b.handIndex, b.seat);
    case 'move_rejected': {
      const h = seedRefused(state, ev);
      if (h) {
        if (h.seedAccepted) return state;
        return edit(h.handIndex, (x) => ({ ...x, seedDue: false, seedElsewhere: b.reason === 'WRONG_PHASE' ? 'late' : 'elsewhere' }));
      }
      const m = attachRefused(state, ev);
      if (!m) return state;
      // A refused move takes no seed: the next one carries it, or a seed
      // frame when the hand waits for its deal.
      return edit(m.handIndex, (x) => ({ ...x, seedKey: '', seedVia: null, seedDue: x.waiting, attachDue: !x.waiting }));
    }
    case 'view_synced':
      return foldView(state, b.view, ctx);
    case 'hand_started':
      return edit(b.handIndex, (h) => ({
        ...h,
        dealt: true,
        waiting: false,
        seedDue: false,
        attachDue: false,
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
    case 'hand_revealed': {
      const out = edit(b.handIndex, (h) => ({
        ...h,
        waiting: false,
        seedDue: false,
        attachDue: false,
        revealed: { serverSeed: b.serverSeed, clientSeeds: b.clientSeeds, commitment: b.commitment },
      }));
      // The hand committed ahead now waits for its deal: a seed that found
      // no move to ride on goes in a seed frame.
      const next = out.hands[b.handIndex + 1];
      if (!next || next.dealt || next.revealed !== null) return out;
      return { ...out, hands: { ...out.hands, [next.handIndex]: { ...next, waiting: true, seedDue: next.seedDue || next.attachDue, attachDue: false } } };
    }
    default:
      return state;
  }
}

/** Folds a seed's acceptance: a client_seed_accepted event, or one riding on a move's event. */
function acceptSeed(state: FairState, ev: TableEvent, handIndex: number, seat: number): FairState {
  const h = state.hands[handIndex];
  if (!h || seat !== h.seedSeat || h.seedAccepted) return state;
  // An acceptance without caused_by (none is written so) is taken as
  // this page's when it sent one: the reveal then decides.
  const mine = h.seed !== null && (ev.causedBy === '' || carriedBy(h, ev.causedBy));
  const x: FairHand = mine
    ? { ...h, seedAccepted: true, seedDue: false, attachDue: false }
    : { ...h, seedDue: false, attachDue: false, seedElsewhere: 'elsewhere' };
  return { ...state, hands: { ...state.hands, [handIndex]: x } };
}

/** The command caused_by names carried this page's seed of h. */
function carriedBy(h: FairHand, causedBy: string): boolean {
  return [h.seedKey, ...h.pastKeys].some((k) => k !== '' && causedBy.endsWith(`/${k}`));
}

/**
 * Folds a view's commit–reveal (after a resync whose history was trimmed):
 * its commitments are kept for the reveals, and the player's seed is due
 * where its seat is awaited and not seeded yet — in a seed frame for the
 * hand waiting for its deal, on the next move for the hand committed ahead.
 */
function foldView(fs: FairState, v: TableView, ctx: FairContext): FairState {
  let out = fs;
  if (v.committed) out = foldCommitment(out, v.committed, v.seededSeats, false, ctx);
  if (v.nextCommitted) out = foldCommitment(out, v.nextCommitted, v.nextSeededSeats, true, ctx);
  return out;
}

function foldCommitment(fs: FairState, c: HandCommitment, seeded: number[], ahead: boolean, ctx: FairContext): FairState {
  const cur = fs.hands[c.handIndex] ?? newHand(ctx, fs.gameId, c.handIndex);
  // The view's hand in play without a seed deadline is dealt already.
  const dealt = cur.dealt || (!ahead && c.seedDeadline === null);
  let h: FairHand = {
    ...cur,
    commitment: cur.commitment || c.commitment,
    awaitedSeats: c.awaitedSeats,
    waiting: !dealt && (cur.waiting || !ahead),
    dealt,
  };
  if (dealt && !cur.dealt) {
    // Dealt while this page missed the events: a seed of its own that it
    // does not know taken is not checked.
    h = { ...h, seedDue: false, attachDue: false, seedElsewhere: h.seedElsewhere ?? (h.seed !== null && !h.seedAccepted ? 'late' : null) };
  }
  const seat = ctx.yourSeat;
  if (!dealt && seat !== null && c.awaitedSeats.includes(seat)) {
    if (h.seedSeat === null) h = { ...h, seedSeat: seat };
    if (h.seedAccepted || h.seedElsewhere !== null || h.seedSeat !== seat) {
      // Settled already, or the seat is not the one the seed was made for.
    } else if (seeded.includes(seat)) {
      // Its acceptance was missed: which page's seed the table took is not
      // known here, so it is not checked.
      h = { ...h, seedDue: false, attachDue: false, seedElsewhere: 'elsewhere' };
    } else if (h.seedVia === null) {
      h = { ...h, seedDue: h.waiting, attachDue: !h.waiting };
    }
  }
  return { ...fs, hands: { ...fs.hands, [c.handIndex]: h } };
}

/** Whether the seed of h may still be sent: this page's to give, and the table still waits for it. */
function open(h: FairHand): boolean {
  return h.seedSeat !== null && h.seedElsewhere === null && !h.dealt && !h.seedAccepted && h.revealed === null;
}

/**
 * The hand whose seed frame a move_rejected event refuses, if it is one of
 * this page's seed frames.
 */
export function seedRefused(fs: FairState, ev: TableEvent): FairHand | undefined {
  if (ev.body.kind !== 'move_rejected' || ev.causedBy === '') return undefined;
  return Object.values(fs.hands).find((h) => h.seedVia === 'frame' && h.seedKey !== '' && ev.causedBy.endsWith(`/${h.seedKey}`));
}

/** The hand whose seed rode on the move a move_rejected event refuses, if any. */
function attachRefused(fs: FairState, ev: TableEvent): FairHand | undefined {
  if (ev.causedBy === '') return undefined;
  return Object.values(fs.hands).find((h) => h.seedVia === 'move' && !h.seedAccepted && h.seedKey !== '' && ev.causedBy.endsWith(`/${h.seedKey}`));
}

/**
 * The seed frames to send now: the hands whose seed is due, and (after a
 * reconnect, again) the seed frames sent but neither accepted nor dealt yet.
 * A hand without a seed gets one from mk here, as it is sent: pass the ones
 * that left to markSent, which keeps their seeds. A seed that rode on a
 * move before keeps its value and gets a key of its own.
 */
export function seedsToSend(fs: FairState, resend: boolean, mk: SeedMaker): FairHand[] {
  return Object.values(fs.hands)
    .filter((h) => open(h) && (h.seedDue || (resend && h.seedVia === 'frame')))
    .map((h) => (h.seedVia === 'frame' ? h : { ...h, seed: h.seed ?? mk.newSeed(), seedKey: mk.newKey() }));
}

/** Marks the hands' seeds sent in seed frames, and keeps the seeds. */
export function markSent(fs: FairState, sent: FairHand[]): FairState {
  if (sent.length === 0) return fs;
  const hands = { ...fs.hands };
  for (const h of sent) {
    const cur = hands[h.handIndex];
    if (cur) hands[h.handIndex] = { ...cur, seed: h.seed, seedKey: h.seedKey, seedVia: 'frame', seedDue: false, attachDue: false };
  }
  return { ...fs, hands };
}

/**
 * The seed to carry on the player's next move (bid, trump or card), if one
 * is due: its seed made now by mk when it has none, and its seedKey the
 * move's idempotency key to send it under. Pass it to markAttached once the
 * move went.
 */
export function seedToAttach(fs: FairState, mk: SeedMaker): FairHand | undefined {
  const h = Object.values(fs.hands)
    .filter((x) => open(x) && x.attachDue)
    .sort((a, b) => a.handIndex - b.handIndex)[0];
  return h && { ...h, seed: h.seed ?? mk.newSeed(), seedKey: mk.newKey() };
}

/** Marks a hand's seed as riding on the move sent under its seedKey, and keeps the seed. */
export function markAttached(fs: FairState, h: FairHand): FairState {
  const cur = fs.hands[h.handIndex];
  if (!cur) return fs;
  return { ...fs, hands: { ...fs.hands, [h.handIndex]: { ...cur, seed: h.seed, seedKey: h.seedKey, seedVia: 'move', attachDue: false } } };
}

/**
 * After a reconnect: a seed that rode on a move neither accepted nor
 * refused since is due again — on the next move, or in a seed frame of its
 * own (under a key of its own, never the move's) when its hand now waits
 * for its deal. Seed frames are sent again by seedsToSend.
 */
export function rejoined(fs: FairState): FairState {
  let hands: Record<number, FairHand> | null = null;
  for (const h of Object.values(fs.hands)) {
    if (h.seedVia !== 'move' || !open(h)) continue;
    hands ??= { ...fs.hands };
    hands[h.handIndex] = { ...h, seedKey: '', seedVia: null, pastKeys: [...h.pastKeys, h.seedKey], seedDue: h.waiting, attachDue: !h.waiting };
  }
  return hands ? { ...fs, hands } : fs;
}

/** The revealed hands, newest last. */
export function revealedHands(fs: FairState): FairHand[] {
  return Object.values(fs.hands)
    .filter((h) => h.revealed !== null)
    .sort((a, b) => a.handIndex - b.handIndex);
}
