// Normalises the gateway's protojson into the complete values of types.ts.
// protojson leaves out zero values (seat 0, false, empty lists), writes
// 64-bit integers as strings and enums by name, so every reader here gives
// the zero value for a missing field and accepts a number or a numeric
// string for any integer.

import { parseWireCard, parseWireSuit, type Card, type Suit } from './cards';
import type {
  BotReason,
  EventBody,
  GameEndReason,
  HandCommitment,
  HandOutcome,
  JokerDecl,
  LobbySeat,
  LobbyUpdate,
  LobbyView,
  Phase,
  Placing,
  PlayedCard,
  RejectReason,
  SeatPlayer,
  SeatView,
  Sheet,
  SheetUpdate,
  Stake,
  TableEvent,
  TableSettings,
  TableStatus,
  TableSummary,
  TableView,
  Trump,
} from './types';

type Obj = Record<string, unknown>;

export function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

export function num(v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : 0;
  }
  return 0;
}

function optNum(v: unknown): number | null {
  return v === undefined || v === null ? null : num(v);
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function bool(v: unknown): boolean {
  return v === true;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? (v as unknown[]) : [];
}

/** RFC 3339 timestamp → ms since the epoch. */
function time(v: unknown): number | null {
  if (typeof v !== 'string' || v === '') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
}

/** protojson Duration ("30s", "1.5s") → seconds; null when absent or zero. */
function duration(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const m = /^(-?\d+(?:\.\d+)?)s$/.exec(v);
  if (!m?.[1]) return null;
  const n = Number(m[1]);
  return n > 0 ? n : null;
}

/**
 * A protojson bytes field (standard base64; protojson also reads URL-safe
 * and unpadded) as lower-case hex; "" when absent or not base64.
 */
export function bytesHex(v: unknown): string {
  if (typeof v !== 'string' || v === '') return '';
  let b64 = v.replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return '';
  b64 = b64.replace(/=+$/, '');
  if (b64.length % 4 === 1) return '';
  let bin: string;
  try {
    bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  } catch {
    return '';
  }
  let out = '';
  for (let i = 0; i < bin.length; i++) out += bin.charCodeAt(i).toString(16).padStart(2, '0');
  return out;
}

function card(v: unknown): Card | null {
  return parseWireCard(v);
}

function cards(v: unknown): Card[] {
  const out: Card[] = [];
  for (const x of arr(v)) {
    const c = card(x);
    if (c !== null) out.push(c);
  }
  return out;
}

function trump(v: unknown): Trump | null {
  return parseWireSuit(v);
}

function suit(v: unknown): Suit | null {
  const s = parseWireSuit(v);
  return s === 'none' ? null : s;
}

function enumTail(v: unknown, prefix: string): string {
  const s = str(v);
  return s.startsWith(prefix) ? s.slice(prefix.length).toLowerCase() : '';
}

export function decodeSettings(v: unknown): TableSettings {
  const o = obj(v);
  const game = enumTail(o.game, 'GAME_');
  const variant = enumTail(o.classic_variant, 'CLASSIC_VARIANT_');
  const kh = enumTail(o.khishti, 'KHISHTI_PENALTY_');
  return {
    game: game === 'classic' || game === 'japanese' ? game : null,
    variant: variant === 'standard' || variant === 'nines' ? variant : null,
    khishti: kh === '200' || kh === '500' || kh === '100' ? kh : kh === 'per_card' ? 'per-card' : null,
    premia: bool(o.premia),
    moshla: bool(o.moshla),
    restDocked: bool(o.rest_docked),
    japaneseTarget: num(o.japanese_target),
    visibility: o.visibility === 'TABLE_VISIBILITY_PUBLIC' ? 'public' : 'private',
    hasPassword: bool(o.has_password),
    stake: decodeStake(o.stake),
    moveTime: duration(o.move_time),
    reconnectGrace: duration(o.reconnect_grace),
  };
}

function decodeStake(v: unknown): Stake {
  const o = obj(v);
  if ('free' in o) return { kind: 'free' };
  if ('coins' in o) return { kind: 'coins', amount: num(obj(o.coins).amount) };
  // A stake with no known kind must not be taken for a free table.
  return { kind: 'unknown' };
}

/** The wire form of settings, for CreateTable (protojson accepts it as is). */
export function encodeSettings(s: TableSettings): Obj {
  const out: Obj = {
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
  }
  if (s.moveTime !== null) out.move_time = `${s.moveTime}s`;
  if (s.reconnectGrace !== null) out.reconnect_grace = `${s.reconnectGrace}s`;
  return out;
}

function seatPlayer(v: unknown): SeatPlayer {
  const o = obj(v);
  return { seat: num(o.seat), playerId: str(o.player_id), name: str(o.display_name), bot: bool(o.bot) };
}

function jokerDecl(v: unknown): JokerDecl | null {
  if (v === undefined || v === null) return null;
  const o = obj(v);
  const a = enumTail(o.action, 'JOKER_ACTION_');
  if (a !== 'take' && a !== 'discard' && a !== 'highest' && a !== 'give') return null;
  return { action: a, suit: suit(o.suit) };
}

function playedCard(v: unknown): PlayedCard | null {
  const o = obj(v);
  const c = card(o.card);
  if (c === null) return null;
  return { seat: num(o.seat), card: c, joker: jokerDecl(o.declaration) };
}

export function decodePhase(v: unknown): Phase {
  const p = enumTail(v, 'PHASE_');
  switch (p) {
    case 'waiting':
    case 'choose_trump':
    case 'bid':
    case 'play':
    case 'game_over':
      return p;
  }
  return 'none';
}

function seatView(v: unknown, i: number): SeatView {
  const o = obj(v);
  const player = seatPlayer(o.player);
  if (o.player === undefined) player.seat = i;
  return {
    player,
    away: bool(o.away),
    bid: optNum(o.bid),
    tricks: num(o.tricks),
    score: num(o.score),
    handSize: num(o.hand_size),
    columnsUp: arr(o.columns_face_up).map(card),
    columnsDown: arr(o.columns_face_down).map(bool),
  };
}

export function decodeView(v: unknown): TableView {
  const o = obj(v);
  const trick: PlayedCard[] = [];
  for (const x of arr(o.trick)) {
    const p = playedCard(x);
    if (p) trick.push(p);
  }
  return {
    settings: decodeSettings(o.settings),
    seats: arr(o.seats).map(seatView),
    yourSeat: optNum(o.your_seat),
    yourHand: cards(o.your_hand),
    phase: decodePhase(o.phase),
    handIndex: num(o.hand_index),
    pulkaIndex: num(o.pulka_index),
    cardsPerSeat: num(o.cards_per_seat),
    dealerSeat: num(o.dealer_seat),
    trump: trump(o.trump),
    turnedCard: card(o.turned_card),
    trick,
    turnSeat: num(o.turn_seat),
    deadline: time(o.deadline),
    committed: o.committed === undefined || o.committed === null ? null : handCommitment(obj(o.committed)),
    seededSeats: arr(o.seeded_seats).map(num),
    nextCommitted: o.next_committed === undefined || o.next_committed === null ? null : handCommitment(obj(o.next_committed)),
    nextSeededSeats: arr(o.next_seeded_seats).map(num),
  };
}

function handCommitment(o: Obj): HandCommitment {
  return {
    handIndex: num(o.hand_index),
    commitment: bytesHex(o.commitment),
    seedDeadline: time(o.seed_deadline),
    awaitedSeats: arr(o.awaited_seats).map(num),
  };
}

const REJECT_REASONS: readonly RejectReason[] = [
  'MALFORMED',
  'NOT_SEATED',
  'SEAT_UNAVAILABLE',
  'NOT_YOUR_TURN',
  'WRONG_PHASE',
  'INVALID_BID',
  'DEALER_BID_FORBIDDEN',
  'INVALID_TRUMP',
  'CARD_NOT_AVAILABLE',
  'MUST_FOLLOW_SUIT',
  'MUST_TRUMP',
  'MUST_PLAY_HIGHEST',
  'FIRST_CARD_FROM_HAND',
  'INVALID_DECLARATION',
  'GAME_OVER',
  'NOT_ALLOWED',
];

function rejectReason(v: unknown): RejectReason {
  const s = str(v).replace(/^REJECT_REASON_/, '');
  return REJECT_REASONS.find((r) => r === s) ?? 'UNSPECIFIED';
}

function botReason(v: unknown): BotReason {
  const r = enumTail(v, 'BOT_REASON_');
  return r === 'filled' || r === 'player_left' || r === 'grace_expired' ? r : 'unknown';
}

function endReason(v: unknown): GameEndReason {
  const r = enumTail(v, 'GAME_END_REASON_');
  return r === 'completed' || r === 'resigned' || r === 'forfeited' || r === 'aborted' ? r : 'unknown';
}

function timerStarted(o: Obj): Extract<EventBody, { kind: 'timer_started' }> {
  return { kind: 'timer_started', seat: num(o.seat), phase: decodePhase(o.phase), deadline: time(o.deadline) };
}

/** One table event, from the "event" member of an event frame. */
export function decodeEventBody(e: Obj): EventBody {
  for (const [key, raw] of Object.entries(e)) {
    const o = obj(raw);
    switch (key) {
      case 'game_started':
        return { kind: key, settings: decodeSettings(o.settings), seats: arr(o.seats).map(seatPlayer) };
      case 'player_seated':
        return { kind: key, seat: seatPlayer(o.seat) };
      case 'player_left':
        return { kind: key, seat: num(o.seat), playerId: str(o.player_id) };
      case 'seat_taken_by_bot':
        return { kind: key, seat: num(o.seat), reason: botReason(o.reason) };
      case 'player_away':
        return { kind: key, seat: num(o.seat), playerId: str(o.player_id), graceDeadline: time(o.grace_deadline) };
      case 'player_back':
        return { kind: key, seat: num(o.seat), playerId: str(o.player_id) };
      case 'hand_started':
        return {
          kind: key,
          handIndex: num(o.hand_index),
          pulkaIndex: num(o.pulka_index),
          cardsPerSeat: num(o.cards_per_seat),
          dealerSeat: num(o.dealer_seat),
        };
      case 'dealt':
        return { kind: key, seat: num(o.seat), cards: cards(o.cards) };
      case 'trump_turned':
        return { kind: key, card: card(o.card), trump: trump(o.trump) ?? 'none' };
      case 'trump_chosen':
        return { kind: key, seat: num(o.seat), trump: trump(o.trump) ?? 'none', byServer: bool(o.by_server) };
      case 'columns_dealt':
        return { kind: key, seat: num(o.seat), faceUp: arr(o.face_up).map(card) };
      case 'column_card_revealed': {
        const c = card(o.card);
        if (c === null) return { kind: 'unknown' };
        return { kind: key, seat: num(o.seat), column: num(o.column), card: c };
      }
      case 'columns_to_hand':
        return { kind: key, seat: num(o.seat), columns: arr(o.columns).map(num) };
      case 'bid_made':
        return { kind: key, seat: num(o.seat), tricks: num(o.tricks), byServer: bool(o.by_server) };
      case 'timer_started':
        return timerStarted(o);
      case 'card_played': {
        const c = card(o.card);
        if (c === null) return { kind: 'unknown' };
        return {
          kind: key,
          seat: num(o.seat),
          card: c,
          joker: jokerDecl(o.declaration),
          column: optNum(o.column),
          byServer: bool(o.by_server),
        };
      }
      case 'trick_won':
        return { kind: key, trickIndex: num(o.trick_index), seat: num(o.seat), tricksTaken: arr(o.tricks_taken).map(num) };
      case 'hand_ended':
        return {
          kind: key,
          handIndex: num(o.hand_index),
          results: arr(o.results).map((r) => {
            const x = obj(r);
            return { seat: num(x.seat), bid: num(x.bid), tricks: num(x.tricks), points: num(x.points), penalty: num(x.penalty) };
          }),
        };
      case 'hand_committed':
        return { kind: key, ...handCommitment(o) };
      case 'client_seed_accepted':
        return { kind: key, handIndex: num(o.hand_index), seat: num(o.seat) };
      case 'hand_revealed':
        return {
          kind: key,
          handIndex: num(o.hand_index),
          serverSeed: bytesHex(o.server_seed),
          clientSeeds: arr(o.client_seeds).map(bytesHex),
          commitment: bytesHex(o.commitment),
        };
      case 'pulka_ended':
        return {
          kind: key,
          pulkaIndex: num(o.pulka_index),
          results: arr(o.results).map((r) => {
            const x = obj(r);
            return { seat: num(x.seat), premia: num(x.premia), moshla: num(x.moshla), total: num(x.total) };
          }),
        };
      case 'game_ended':
        return {
          kind: key,
          reason: endReason(o.reason),
          placings: arr(o.placings).map((p): Placing => {
            const x = obj(p);
            return { place: num(x.place), seat: num(x.seat), playerId: str(x.player_id), score: num(x.score) };
          }),
        };
      case 'move_rejected':
        return { kind: key, reason: rejectReason(o.reason), message: str(o.message) };
      case 'view_synced':
        return { kind: key, view: decodeView(o.view) };
    }
  }
  return { kind: 'unknown' };
}

/** An event frame's table, id and event. */
export function decodeEvent(table: string, id: string, raw: unknown): TableEvent {
  const e = obj(raw);
  return {
    id,
    seq: num(e.seq),
    tableId: str(e.table_id) || table,
    gameId: str(e.game_id),
    causedBy: str(e.caused_by),
    occurredAt: time(e.occurred_at),
    body: decodeEventBody(e),
    timer: e.timer === undefined || e.timer === null ? null : timerStarted(obj(e.timer)),
    seedAccepted:
      e.seed_accepted === undefined || e.seed_accepted === null
        ? null
        : { handIndex: num(obj(e.seed_accepted).hand_index), seat: num(obj(e.seed_accepted).seat) },
  };
}

function outcome(v: unknown): HandOutcome {
  const r = enumTail(v, 'HAND_OUTCOME_');
  return r === 'in_progress' || r === 'made' || r === 'missed' || r === 'khishti' ? r : 'unspecified';
}

export function decodeSheet(v: unknown): Sheet {
  const o = obj(v);
  if (Array.isArray(o.hands)) return fromScoringSheet(o);
  return {
    tableId: str(o.table_id),
    gameId: str(o.game_id),
    settings: decodeSettings(o.settings),
    players: arr(o.players).map((p) => {
      const x = obj(p);
      return { seat: num(x.seat), playerId: str(x.player_id), name: str(x.display_name) };
    }),
    pulkas: arr(o.pulkas).map((p) => {
      const x = obj(p);
      return {
        pulkaIndex: num(x.pulka_index),
        finished: bool(x.finished),
        hands: arr(x.hands).map((h) => {
          const y = obj(h);
          return {
            handIndex: num(y.hand_index),
            cards: num(y.cards),
            cells: arr(y.cells).map((c) => {
              const z = obj(c);
              return {
                seat: num(z.seat),
                bid: optNum(z.bid),
                tricks: num(z.tricks),
                points: num(z.points),
                penalty: num(z.penalty),
                outcome: outcome(z.outcome),
                struck: bool(z.struck),
              };
            }),
          };
        }),
        totals: arr(x.totals).map((t) => {
          const y = obj(t);
          return { seat: num(y.seat), premia: num(y.premia), moshla: num(y.moshla), total: num(y.total) };
        }),
      };
    }),
    totals: arr(o.totals).map((t) => {
      const y = obj(t);
      return { seat: num(y.seat), total: num(y.total), onCourse: bool(y.on_course) };
    }),
    currentHand: num(o.current_hand),
  };
}

export function decodeSheetUpdate(v: unknown): SheetUpdate {
  const o = obj(v);
  return { version: num(o.version), sheet: decodeSheet(o.sheet) };
}

function status(v: unknown): TableStatus {
  const r = enumTail(v, 'TABLE_STATUS_');
  return r === 'waiting' || r === 'playing' || r === 'finished' ? r : 'unknown';
}

export function decodeSummary(v: unknown): TableSummary {
  const o = obj(v);
  return {
    tableId: str(o.table_id),
    name: str(o.name),
    settings: decodeSettings(o.settings),
    seats: arr(o.seats).map((s, i): LobbySeat => {
      const x = obj(s);
      return { index: x.index === undefined ? i : num(x.index), playerId: str(x.player_id), name: str(x.display_name), bot: bool(x.bot) };
    }),
    status: status(o.status),
    hostPlayerId: str(o.host_player_id),
    createdAt: time(o.created_at),
  };
}

export function decodeLobbyView(v: unknown): LobbyView {
  const o = obj(v);
  return { version: num(o.version), tables: arr(o.tables).map(decodeSummary) };
}

export function decodeLobbyUpdate(v: unknown): LobbyUpdate {
  const o = obj(v);
  const version = num(o.version);
  if (o.table_upserted !== undefined) return { version, kind: 'upserted', table: decodeSummary(o.table_upserted) };
  if (typeof o.table_removed === 'string') return { version, kind: 'removed', tableId: o.table_removed };
  return { version, kind: 'unknown' };
}

/**
 * Reads the sheet in pkg/scoring's own JSON (what `pulkactl score` prints:
 * hands[], pulkas[] with first/played, total[], onCourse[]) into the same
 * model as the wire's pulka.scoring.v1.Sheet. It has no player names.
 */
function fromScoringSheet(o: Obj): Sheet {
  const set = obj(o.settings);
  const hands = arr(o.hands).map(obj);
  const kh = str(set.khishti) || String(num(set.khishti) || 200);
  const settings: TableSettings = {
    ...decodeSettings({}),
    game: 'classic',
    variant: set.variant === 'nines' ? 'nines' : 'standard',
    khishti: kh === '500' || kh === '100' || kh === 'per-card' ? kh : '200',
    premia: set.premia !== false,
    moshla: set.moshla !== false,
    restDocked: set.restDocked !== false,
  };
  const seatsOf = (a: unknown): number[] => arr(a).map(num);
  return {
    tableId: '',
    gameId: '',
    settings,
    players: [],
    pulkas: arr(o.pulkas).map((pv) => {
      const p = obj(pv);
      const first = num(p.first);
      const played = num(p.played);
      const premia = seatsOf(p.premia);
      const moshla = seatsOf(p.moshla);
      const total = seatsOf(p.total);
      return {
        pulkaIndex: num(p.index),
        finished: bool(p.finished),
        hands: hands.slice(first, first + played).map((h, i) => {
          const bids = seatsOf(h.bids);
          const tricks = seatsOf(h.tricks);
          const points = seatsOf(h.points);
          const results = arr(h.result).map(str);
          const struck = arr(h.struck).map(bool);
          return {
            handIndex: first + i,
            cards: num(h.cards),
            cells: bids.map((bid, seat) => {
              const r = results[seat];
              const khishti = r === 'khishti';
              return {
                seat,
                bid,
                tricks: tricks[seat] ?? 0,
                points: khishti ? 0 : (points[seat] ?? 0),
                penalty: khishti ? (points[seat] ?? 0) : 0,
                outcome: r === 'made' || r === 'missed' || r === 'khishti' ? r : 'unspecified',
                struck: struck[seat] ?? false,
              };
            }),
          };
        }),
        totals: total.map((t, seat) => ({ seat, premia: premia[seat] ?? 0, moshla: moshla[seat] ?? 0, total: t })),
      };
    }),
    totals: seatsOf(o.total).map((t, seat) => ({ seat, total: t, onCourse: arr(o.onCourse)[seat] === true })),
    currentHand: num(o.next),
  };
}
