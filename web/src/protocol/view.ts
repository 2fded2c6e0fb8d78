// The client's view of the protocol's messages. Frames are decoded by the
// code generated from proto/ (web/src/gen, @bufbuild/protobuf): nothing here
// reads bytes or JSON. This file only turns the generated messages into the
// plain values screens work with (types.ts): cards as 0..35 like pkg/cards,
// suits and phases as short words, 64-bit numbers and times as numbers,
// bytes as hex, a oneof as a tagged union.

import { timestampMs, type Duration, type Timestamp } from '@bufbuild/protobuf/wkt';
import { fromJson, type JsonValue } from '@bufbuild/protobuf';

import { Card as WireCard, Suit as WireSuit } from '../gen/pulka/common/v1/cards_pb';
import {
  TableSummarySchema,
  TableStatus as WireTableStatus,
  type LobbyUpdate as WireLobbyUpdate,
  type LobbyView as WireLobbyView,
  type TableSummary as WireTableSummary,
} from '../gen/pulka/lobby/v1/lobby_pb';
import {
  BotLevel,
  ClassicVariant,
  Game as WireGame,
  KhishtiPenalty,
  TableVisibility,
  type TableSettings as WireSettings,
} from '../gen/pulka/lobby/v1/settings_pb';
import {
  SheetUpdateSchema,
  HandOutcome as WireOutcome,
  type Sheet as WireSheet,
  type SheetUpdate as WireSheetUpdate,
} from '../gen/pulka/scoring/v1/scoring_pb';
import { JokerAction, type JokerDeclaration } from '../gen/pulka/table/v1/command_pb';
import {
  EventSchema,
  BotReason as WireBotReason,
  GameEndReason,
  Phase as WirePhase,
  RejectReason as WireRejectReason,
  type Event as WireEvent,
  type HandCommitted,
  type LegalMoves as WireLegalMoves,
  type PlayedCard as WirePlayedCard,
  type SeatPlayer as WireSeatPlayer,
  type TableView as WireTableView,
  type TimerStarted,
} from '../gen/pulka/table/v1/event_pb';
import { parseWireCard, parseWireSuit, type Card, type Suit } from './cards';
import type {
  BotReason,
  EventBody,
  HandCommitment,
  HandOutcome,
  JokerDecl,
  LegalMoves,
  LobbyUpdate,
  LobbyView,
  Phase,
  PlayedCard,
  RejectReason,
  SeatPlayer,
  Sheet,
  SheetUpdate,
  TableEvent,
  TableSettings,
  TableStatus,
  TableSummary,
  TableView,
  Trump,
} from './types';

/** A wire card (pkg/cards + 1) as the client's 0..35; null for none. */
export function cardOf(c: WireCard): Card | null {
  return parseWireCard(c);
}

/** A client card as the wire's (cards.proto: pkg/cards' number plus one). */
export function wireCard(c: Card): WireCard {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the enum is the deck in pkg/cards' order, offset by one
  return c + 1;
}

function cardsOf(cs: readonly WireCard[]): Card[] {
  const out: Card[] = [];
  for (const c of cs) {
    const x = cardOf(c);
    if (x !== null) out.push(x);
  }
  return out;
}

/** A wire suit: a suit, 'none' (no trump / bezi) or null (unspecified). */
export function trumpOf(s: WireSuit): Trump | null {
  return parseWireSuit(s);
}

function suitOf(s: WireSuit): Suit | null {
  const t = trumpOf(s);
  return t === 'none' ? null : t;
}

/** A client suit as the wire's. */
export function wireSuit(t: Trump): WireSuit {
  return t === 'none' ? WireSuit.NONE : ([WireSuit.SPADES, WireSuit.HEARTS, WireSuit.DIAMONDS, WireSuit.CLUBS][['S', 'H', 'D', 'C'].indexOf(t)] ?? WireSuit.NONE);
}

/**
 * The enum value's name without its prefix, lower case ("" when unnamed).
 * protoc-gen-es drops the prefix from the names unless that would leave
 * one that is no identifier (KHISHTI_PENALTY_200), so both are read.
 */
function word(names: Record<number, string>, v: number, prefix: string): string {
  const n = names[v] ?? '';
  return (n.startsWith(prefix) ? n.slice(prefix.length) : n).toLowerCase();
}

function num(v: bigint | number): number {
  return Number(v);
}

/** A timestamp as ms since the epoch; null when unset. */
function time(t: Timestamp | undefined): number | null {
  return t ? timestampMs(t) : null;
}

/** A duration in seconds; null when unset or zero. */
function seconds(d: Duration | undefined): number | null {
  if (!d) return null;
  const s = Number(d.seconds) + d.nanos / 1e9;
  return s > 0 ? s : null;
}

/** Bytes as lower-case hex ("" for none). */
export function hex(b: Uint8Array): string {
  let out = '';
  for (const x of b) out += x.toString(16).padStart(2, '0');
  return out;
}

export function settingsOf(s: WireSettings | undefined): TableSettings {
  const game = s ? word(WireGame, s.game, 'GAME_') : '';
  const variant = s ? word(ClassicVariant, s.classicVariant, 'CLASSIC_VARIANT_') : '';
  const kh = s ? word(KhishtiPenalty, s.khishti, 'KHISHTI_PENALTY_') : '';
  const stake = s?.stake?.kind;
  const level = s ? word(BotLevel, s.botLevel, 'BOT_LEVEL_') : '';
  return {
    game: game === 'classic' || game === 'japanese' ? game : null,
    variant: variant === 'standard' || variant === 'nines' ? variant : null,
    khishti: kh === '200' || kh === '500' || kh === '100' ? kh : kh === 'per_card' ? 'per-card' : null,
    premia: s?.premia ?? false,
    moshla: s?.moshla ?? false,
    restDocked: s?.restDocked ?? false,
    japaneseTarget: s?.japaneseTarget ?? 0,
    visibility: s?.visibility === TableVisibility.PUBLIC ? 'public' : 'private',
    hasPassword: s?.hasPassword ?? false,
    // A stake with no known kind must not be taken for a free table.
    stake: stake?.case === 'free' ? { kind: 'free' } : stake?.case === 'coins' ? { kind: 'coins', amount: num(stake.value.amount), payout: [...stake.value.payoutPercent] } : { kind: 'unknown' },
    moveTime: seconds(s?.moveTime),
    reconnectGrace: seconds(s?.reconnectGrace),
    botLevel: level === 'easy' || level === 'normal' || level === 'strong' ? level : null,
  };
}

/** The protocol's JSON of settings (the HTTP API's CreateTable body). */
export function settingsJson(s: TableSettings): JsonValue {
  const out: Record<string, JsonValue> = {
    game: s.game === 'japanese' ? 'GAME_JAPANESE' : 'GAME_CLASSIC',
    visibility: s.visibility === 'public' ? 'TABLE_VISIBILITY_PUBLIC' : 'TABLE_VISIBILITY_PRIVATE',
    has_password: s.hasPassword,
    stake: s.stake.kind === 'coins' ? { coins: { amount: String(s.stake.amount) } } : { free: {} },
  };
  if (s.game === 'japanese') {
    out.japanese_target = s.japaneseTarget;
  } else {
    out.classic_variant = s.variant === 'nines' ? 'CLASSIC_VARIANT_NINES' : 'CLASSIC_VARIANT_STANDARD';
    out.khishti = `KHISHTI_PENALTY_${(s.khishti ?? '200').replace('-', '_').toUpperCase()}`;
    out.premia = s.premia;
    out.moshla = s.moshla;
    out.rest_docked = s.restDocked;
    if (s.botLevel !== null) out.bot_level = `BOT_LEVEL_${s.botLevel.toUpperCase()}`;
  }
  if (s.moveTime !== null) out.move_time = `${s.moveTime}s`;
  if (s.reconnectGrace !== null) out.reconnect_grace = `${s.reconnectGrace}s`;
  return out;
}

function seatPlayer(p: WireSeatPlayer | undefined): SeatPlayer {
  return { seat: p?.seat ?? 0, playerId: p?.playerId ?? '', name: p?.displayName ?? '', bot: p?.bot ?? false };
}

function jokerDecl(d: JokerDeclaration | undefined): JokerDecl | null {
  if (!d) return null;
  const a = word(JokerAction, d.action, 'JOKER_ACTION_');
  if (a !== 'take' && a !== 'discard' && a !== 'highest' && a !== 'give') return null;
  return { action: a, suit: suitOf(d.suit) };
}

function playedCard(p: WirePlayedCard): PlayedCard | null {
  const c = cardOf(p.card);
  return c === null ? null : { seat: p.seat, card: c, joker: jokerDecl(p.declaration) };
}

export function phaseOf(p: WirePhase): Phase {
  const w = word(WirePhase, p, 'PHASE_');
  switch (w) {
    case 'waiting':
    case 'choose_trump':
    case 'bid':
    case 'play':
    case 'game_over':
      return w;
  }
  return 'none';
}

/**
 * A seat's legal moves. A trump or card the client does not know is left
 * out (it could not be offered anyway), and so is a joker declaration it
 * cannot read; a joker whose every declaration is unreadable keeps none.
 */
export function legalOf(l: WireLegalMoves): LegalMoves {
  const trumps: Trump[] = [];
  for (const w of l.trumps) {
    const t = trumpOf(w);
    if (t !== null) trumps.push(t);
  }
  const plays: LegalMoves['plays'] = [];
  for (const p of l.plays) {
    const card = cardOf(p.card);
    if (card === null) continue;
    const declarations: JokerDecl[] = [];
    for (const d of p.declarations) {
      const j = jokerDecl(d);
      if (j) declarations.push(j);
    }
    plays.push({ card, declarations });
  }
  return { seat: l.seat, phase: phaseOf(l.phase), trumps, bids: [...l.bids], plays };
}

function handCommitment(h: HandCommitted): HandCommitment {
  return { handIndex: h.handIndex, commitment: hex(h.commitment), seedDeadline: time(h.seedDeadline), awaitedSeats: [...h.awaitedSeats] };
}

export function viewOf(v: WireTableView | undefined): TableView {
  const trick: PlayedCard[] = [];
  for (const x of v?.trick ?? []) {
    const p = playedCard(x);
    if (p) trick.push(p);
  }
  return {
    settings: settingsOf(v?.settings),
    seats: (v?.seats ?? []).map((s, i) => {
      const player = seatPlayer(s.player);
      if (!s.player) player.seat = i;
      return {
        player,
        away: s.away,
        bid: s.bid ?? null,
        tricks: s.tricks,
        score: num(s.score),
        handSize: s.handSize,
        columnsUp: s.columnsFaceUp.map(cardOf),
        columnsDown: [...s.columnsFaceDown],
      };
    }),
    yourSeat: v?.yourSeat ?? null,
    yourHand: cardsOf(v?.yourHand ?? []),
    phase: phaseOf(v?.phase ?? WirePhase.UNSPECIFIED),
    handIndex: v?.handIndex ?? 0,
    pulkaIndex: v?.pulkaIndex ?? 0,
    cardsPerSeat: v?.cardsPerSeat ?? 0,
    dealerSeat: v?.dealerSeat ?? 0,
    trump: trumpOf(v?.trump ?? WireSuit.UNSPECIFIED),
    turnedCard: cardOf(v?.turnedCard ?? WireCard.UNSPECIFIED),
    trick,
    turnSeat: v?.turnSeat ?? 0,
    deadline: time(v?.deadline),
    committed: v?.committed ? handCommitment(v.committed) : null,
    seededSeats: [...(v?.seededSeats ?? [])],
    nextCommitted: v?.nextCommitted ? handCommitment(v.nextCommitted) : null,
    nextSeededSeats: [...(v?.nextSeededSeats ?? [])],
    legal: v?.legal ? legalOf(v.legal) : null,
  };
}

function rejectReason(r: WireRejectReason): RejectReason {
  const name = word(WireRejectReason, r, 'REJECT_REASON_').toUpperCase();
  return name === '' ? 'UNSPECIFIED' : (name as RejectReason);
}

function botReason(r: WireBotReason): BotReason {
  const w = word(WireBotReason, r, 'BOT_REASON_');
  return w === 'filled' || w === 'player_left' || w === 'grace_expired' ? w : 'unknown';
}

function timer(t: TimerStarted): Extract<EventBody, { kind: 'timer_started' }> {
  return { kind: 'timer_started', seat: t.seat, phase: phaseOf(t.phase), deadline: time(t.deadline) };
}

/** An event's body: its oneof member as the client's tagged union. */
export function eventBody(e: WireEvent): EventBody {
  const ev = e.event;
  switch (ev.case) {
    case 'gameStarted':
      return { kind: 'game_started', settings: settingsOf(ev.value.settings), seats: ev.value.seats.map(seatPlayer) };
    case 'playerSeated':
      return { kind: 'player_seated', seat: seatPlayer(ev.value.seat) };
    case 'playerLeft':
      return { kind: 'player_left', seat: ev.value.seat, playerId: ev.value.playerId };
    case 'seatTakenByBot':
      return { kind: 'seat_taken_by_bot', seat: ev.value.seat, reason: botReason(ev.value.reason) };
    case 'playerAway':
      return { kind: 'player_away', seat: ev.value.seat, playerId: ev.value.playerId, graceDeadline: time(ev.value.graceDeadline) };
    case 'playerBack':
      return { kind: 'player_back', seat: ev.value.seat, playerId: ev.value.playerId };
    case 'handStarted':
      return { kind: 'hand_started', handIndex: ev.value.handIndex, pulkaIndex: ev.value.pulkaIndex, cardsPerSeat: ev.value.cardsPerSeat, dealerSeat: ev.value.dealerSeat };
    case 'dealt':
      return { kind: 'dealt', seat: ev.value.seat, cards: cardsOf(ev.value.cards) };
    case 'trumpTurned':
      return { kind: 'trump_turned', card: cardOf(ev.value.card), trump: trumpOf(ev.value.trump) ?? 'none' };
    case 'trumpChosen':
      return { kind: 'trump_chosen', seat: ev.value.seat, trump: trumpOf(ev.value.trump) ?? 'none', byServer: ev.value.byServer };
    case 'columnsDealt':
      return { kind: 'columns_dealt', seat: ev.value.seat, faceUp: ev.value.faceUp.map(cardOf) };
    case 'columnCardRevealed': {
      const c = cardOf(ev.value.card);
      return c === null ? { kind: 'unknown' } : { kind: 'column_card_revealed', seat: ev.value.seat, column: ev.value.column, card: c };
    }
    case 'columnsToHand':
      return { kind: 'columns_to_hand', seat: ev.value.seat, columns: [...ev.value.columns] };
    case 'bidMade':
      return { kind: 'bid_made', seat: ev.value.seat, tricks: ev.value.tricks, byServer: ev.value.byServer };
    case 'timerStarted':
      return timer(ev.value);
    case 'cardPlayed': {
      const c = cardOf(ev.value.card);
      if (c === null) return { kind: 'unknown' };
      return { kind: 'card_played', seat: ev.value.seat, card: c, joker: jokerDecl(ev.value.declaration), column: ev.value.column ?? null, byServer: ev.value.byServer };
    }
    case 'trickWon':
      return { kind: 'trick_won', trickIndex: ev.value.trickIndex, seat: ev.value.seat, tricksTaken: [...ev.value.tricksTaken] };
    case 'handEnded':
      return {
        kind: 'hand_ended',
        handIndex: ev.value.handIndex,
        results: ev.value.results.map((r) => ({ seat: r.seat, bid: r.bid, tricks: r.tricks, points: num(r.points), penalty: num(r.penalty) })),
      };
    case 'pulkaEnded':
      return {
        kind: 'pulka_ended',
        pulkaIndex: ev.value.pulkaIndex,
        results: ev.value.results.map((r) => ({ seat: r.seat, premia: num(r.premia), moshla: num(r.moshla), total: num(r.total) })),
      };
    case 'gameEnded': {
      const r = word(GameEndReason, ev.value.reason, 'GAME_END_REASON_');
      return {
        kind: 'game_ended',
        reason: r === 'completed' || r === 'resigned' || r === 'forfeited' || r === 'aborted' ? r : 'unknown',
        placings: ev.value.placings.map((p) => ({ place: p.place, seat: p.seat, playerId: p.playerId, score: num(p.score) })),
      };
    }
    case 'moveRejected':
      return { kind: 'move_rejected', reason: rejectReason(ev.value.reason), message: ev.value.message };
    case 'viewSynced':
      return { kind: 'view_synced', view: viewOf(ev.value.view) };
    case 'handCommitted':
      return { kind: 'hand_committed', ...handCommitment(ev.value) };
    case 'legalMoves':
      return { kind: 'legal_moves', legal: legalOf(ev.value) };
    case 'clientSeedAccepted':
      return { kind: 'client_seed_accepted', handIndex: ev.value.handIndex, seat: ev.value.seat };
    case 'handRevealed':
      return {
        kind: 'hand_revealed',
        handIndex: ev.value.handIndex,
        serverSeed: hex(ev.value.serverSeed),
        clientSeeds: ev.value.clientSeeds.map(hex),
        commitment: hex(ev.value.commitment),
      };
  }
  return { kind: 'unknown' };
}

/**
 * The LegalMoves event that the legal moves riding on the frame of event
 * host (EventFrame.legal) stand for: the table's history has it right after
 * host, in the same step, for the receiver's seat (Go: wire.LegalEvent). It
 * has no id of its own (the frame's id covers both).
 */
export function legalEvent(host: TableEvent, l: WireLegalMoves): TableEvent {
  return {
    ...host,
    id: '',
    seq: host.seq + 1,
    body: { kind: 'legal_moves', legal: legalOf(l) },
    timer: null,
    seedAccepted: null,
  };
}

/** An event frame's table, id and event. */
export function tableEvent(table: string, id: string, e: WireEvent | undefined): TableEvent {
  return {
    id,
    seq: num(e?.seq ?? 0),
    tableId: e?.tableId || table,
    gameId: e?.gameId ?? '',
    causedBy: e?.causedBy ?? '',
    occurredAt: time(e?.occurredAt),
    body: e ? eventBody(e) : { kind: 'unknown' },
    timer: e?.timer ? timer(e.timer) : null,
    seedAccepted: e?.seedAccepted ? { handIndex: e.seedAccepted.handIndex, seat: e.seedAccepted.seat } : null,
  };
}

function outcome(o: WireOutcome): HandOutcome {
  const w = word(WireOutcome, o, 'HAND_OUTCOME_');
  return w === 'in_progress' || w === 'made' || w === 'missed' || w === 'khishti' ? w : 'unspecified';
}

export function sheetOf(s: WireSheet | undefined): Sheet {
  return {
    tableId: s?.tableId ?? '',
    gameId: s?.gameId ?? '',
    settings: settingsOf(s?.settings),
    players: (s?.players ?? []).map((p) => ({ seat: p.seat, playerId: p.playerId, name: p.displayName })),
    pulkas: (s?.pulkas ?? []).map((p) => ({
      pulkaIndex: p.pulkaIndex,
      finished: p.finished,
      hands: p.hands.map((h) => ({
        handIndex: h.handIndex,
        cards: h.cards,
        cells: h.cells.map((c) => ({
          seat: c.seat,
          bid: c.bid ?? null,
          tricks: c.tricks,
          points: num(c.points),
          penalty: num(c.penalty),
          outcome: outcome(c.outcome),
          struck: c.struck,
        })),
      })),
      totals: p.totals.map((t) => ({ seat: t.seat, premia: num(t.premia), moshla: num(t.moshla), total: num(t.total) })),
    })),
    totals: (s?.totals ?? []).map((t) => ({ seat: t.seat, total: num(t.total), onCourse: t.onCourse })),
    currentHand: s?.currentHand ?? 0,
  };
}

export function sheetUpdateOf(u: WireSheetUpdate | undefined): SheetUpdate {
  return { version: num(u?.version ?? 0), sheet: sheetOf(u?.sheet) };
}

function status(s: WireTableStatus): TableStatus {
  const w = word(WireTableStatus, s, 'TABLE_STATUS_');
  return w === 'waiting' || w === 'playing' || w === 'finished' ? w : 'unknown';
}

export function summaryOf(t: WireTableSummary): TableSummary {
  return {
    tableId: t.tableId,
    name: t.name,
    settings: settingsOf(t.settings),
    seats: t.seats.map((s) => ({ index: s.index, playerId: s.playerId, name: s.displayName, bot: s.bot })),
    status: status(t.status),
    hostPlayerId: t.hostPlayerId,
    createdAt: time(t.createdAt),
  };
}

/** A TableSummary in the protocol's JSON (the HTTP API's answer). */
export function summaryFromJson(json: unknown): TableSummary {
  return summaryOf(fromJson(TableSummarySchema, json as JsonValue, { ignoreUnknownFields: true }));
}

export function lobbyViewOf(v: WireLobbyView): LobbyView {
  return { version: num(v.version), tables: v.tables.map(summaryOf) };
}

export function lobbyUpdateOf(u: WireLobbyUpdate): LobbyUpdate {
  const version = num(u.version);
  switch (u.change.case) {
    case 'tableUpserted':
      return { version, kind: 'upserted', table: summaryOf(u.change.value) };
    case 'tableRemoved':
      return { version, kind: 'removed', tableId: u.change.value };
  }
  return { version, kind: 'unknown' };
}

/** A SheetUpdate in the protocol's JSON (fixtures, the demo page). */
export function sheetUpdateFromJson(json: unknown): SheetUpdate {
  return sheetUpdateOf(fromJson(SheetUpdateSchema, json as JsonValue));
}

/** An event frame's event in the protocol's JSON (fixtures, tests). */
export function tableEventFromJson(table: string, id: string, json: unknown): TableEvent {
  return tableEvent(table, id, fromJson(EventSchema, json as JsonValue));
}
