// The table as this client sees it, and the pure function that applies one
// table event to it. Screens render a TableState; the protocol layer feeds
// events in. Everything here is derived from events alone (a ViewSynced
// resets it), so a replay after a reconnect rebuilds exactly the same state.

import { isJoker, type Card } from '../protocol/cards';
import type {
  EventBody,
  GameEndReason,
  LegalMoves,
  Phase,
  Placing,
  PlayedCard,
  RejectReason,
  SeatHandResult,
  SeatPlayer,
  SeatPulkaResult,
  TableEvent,
  TableSettings,
  TableView,
  Trump,
  BotReason,
} from '../protocol/types';

export interface SeatState {
  player: SeatPlayer;
  away: boolean;
  /** When the away player's grace ends (server clock, ms). */
  graceDeadline: number | null;
  /** Why a bot plays the seat, when one does. */
  botReason: BotReason | null;
  bid: number | null;
  tricks: number;
  score: number;
  handSize: number;
  columnsUp: (Card | null)[];
  columnsDown: boolean[];
}

export interface TrickRecord {
  cards: PlayedCard[];
  winner: number;
}

/** Something worth announcing to the player (screen readers, the log line). */
export type Notice =
  | { kind: 'bid'; seat: number; tricks: number; byServer: boolean }
  | { kind: 'trump'; seat: number | null; trump: Trump }
  | { kind: 'played'; seat: number; card: Card; byServer: boolean }
  | { kind: 'trick'; seat: number }
  | { kind: 'hand_ended'; handIndex: number }
  | { kind: 'away'; seat: number }
  | { kind: 'back'; seat: number }
  | { kind: 'bot'; seat: number; reason: BotReason }
  | { kind: 'left'; seat: number }
  | { kind: 'game_over' };

export interface Rejection {
  reason: RejectReason;
  message: string;
  /** Counts rejections, so a repeat of the same reason still shows. */
  serial: number;
}

export interface TableState {
  tableId: string;
  /** The player this client is (to find their seat in the seating events). */
  me: string;
  gameId: string;
  settings: TableSettings | null;
  seats: SeatState[];
  yourSeat: number | null;
  /** Your cards in hand, as dealt (screens sort them). */
  hand: Card[];
  phase: Phase;
  handIndex: number;
  pulkaIndex: number;
  cardsPerSeat: number;
  dealerSeat: number;
  trump: Trump | null;
  turnedCard: Card | null;
  trick: PlayedCard[];
  /** Tricks finished this hand (the trick index of the next one). */
  tricksPlayed: number;
  lastTrick: TrickRecord | null;
  /** Seats that have played a card this hand (Japanese: first card from the hand). */
  playedThisHand: boolean[];
  turnSeat: number | null;
  /** When the seat to move runs out of time (server clock, ms). */
  deadline: number | null;
  lastHand: { handIndex: number; results: SeatHandResult[] } | null;
  lastPulka: { pulkaIndex: number; results: SeatPulkaResult[] } | null;
  gameEnd: { reason: GameEndReason; placings: Placing[] } | null;
  rejection: Rejection | null;
  notice: Notice | null;
  /** The id of the last event applied: what a resume sends. */
  lastEventId: string;
  /**
   * Your legal moves for the move that is yours now, as the server's last
   * LegalMoves (or a view) said them: what the screens offer (game/moves.ts).
   * null when it is not your move, or the list for it has not come yet. Any
   * later move or move timer ends it: the server sends a fresh list with
   * each of your turns.
   */
  legal: LegalMoves | null;
  /**
   * Whether this table sends its players their legal moves: true once one
   * came (or a view carried one), false once a move timer of yours was
   * followed by anything but them (a table restored from a snapshot of
   * before legal moves sends none to the end of its game), null while not
   * known. A table that sends them keeps doing so.
   */
  sendsLegal: boolean | null;
  /** The last event gave you a move timer: your legal moves are the next
   * event, if the table sends them (docs/protocol.md). */
  legalDue: boolean;
  /**
   * Who owns each seat: the player seated there, kept while a bot plays it
   * for them, so a player whose seat a bot took can still find it (the
   * gateway then counts them as a watcher).
   */
  owners: string[];
}

export function emptyTable(tableId: string, me = ''): TableState {
  return {
    tableId,
    me,
    gameId: '',
    settings: null,
    seats: [],
    yourSeat: null,
    hand: [],
    phase: 'waiting',
    handIndex: 0,
    pulkaIndex: 0,
    cardsPerSeat: 0,
    dealerSeat: 0,
    trump: null,
    turnedCard: null,
    trick: [],
    tricksPlayed: 0,
    lastTrick: null,
    playedThisHand: [],
    turnSeat: null,
    deadline: null,
    lastHand: null,
    lastPulka: null,
    gameEnd: null,
    rejection: null,
    notice: null,
    lastEventId: '',
    owners: [],
    legal: null,
    sendsLegal: null,
    legalDue: false,
  };
}

export function seatCount(s: TableState): number {
  if (s.seats.length > 0) return s.seats.length;
  return s.settings?.game === 'japanese' ? 2 : 4;
}

function newSeat(p: SeatPlayer): SeatState {
  return {
    player: p,
    away: false,
    graceDeadline: null,
    botReason: p.bot ? 'filled' : null,
    bid: null,
    tricks: 0,
    score: 0,
    handSize: 0,
    columnsUp: [],
    columnsDown: [],
  };
}

/** The state a ViewSynced gives: everything is replaced. */
export function fromView(tableId: string, v: TableView, prev?: TableState): TableState {
  const s = emptyTable(tableId, prev?.me ?? '');
  s.gameId = prev?.gameId ?? '';
  s.settings = v.settings;
  s.seats = v.seats.map((sv, i) => ({
    player: { ...sv.player, seat: i },
    away: sv.away,
    graceDeadline: prev?.seats[i]?.graceDeadline ?? null,
    botReason: sv.player.bot ? (prev?.seats[i]?.botReason ?? 'filled') : null,
    bid: sv.bid,
    tricks: sv.tricks,
    score: sv.score,
    handSize: sv.handSize,
    columnsUp: sv.columnsUp,
    columnsDown: sv.columnsDown,
  }));
  s.yourSeat = v.yourSeat;
  s.hand = [...v.yourHand];
  s.phase = v.phase;
  s.handIndex = v.handIndex;
  s.pulkaIndex = v.pulkaIndex;
  s.cardsPerSeat = v.cardsPerSeat;
  s.dealerSeat = v.dealerSeat;
  s.trump = v.trump;
  s.turnedCard = v.turnedCard;
  s.trick = [...v.trick];
  s.turnSeat = v.phase === 'game_over' || v.phase === 'none' ? null : v.turnSeat;
  s.deadline = v.deadline;
  s.playedThisHand = s.seats.map((_, i) => v.trick.some((p) => p.seat === i));
  // A view does not say how many tricks of the hand are done; the seats' trick
  // counts add up to it.
  s.tricksPlayed = s.seats.reduce((n, x) => n + x.tricks, 0);
  if (s.tricksPlayed > 0) s.playedThisHand = s.seats.map(() => true);
  s.lastTrick = prev?.lastTrick ?? null;
  s.lastHand = prev?.lastHand ?? null;
  s.lastPulka = prev?.lastPulka ?? null;
  s.gameEnd = v.phase === 'game_over' ? (prev?.gameEnd ?? null) : null;
  s.rejection = prev?.rejection ?? null;
  s.owners = v.seats.map((sv, i) => sv.player.playerId || prev?.owners[i] || '');
  // The view carries your legal moves whenever it is your move; one
  // without them at your move is from a table that sends none.
  s.legal = v.legal;
  s.sendsLegal = v.legal !== null ? true : yourTurn(s) ? false : (prev?.sendsLegal ?? null);
  return s;
}

function mapSeat(s: TableState, seat: number, f: (x: SeatState) => SeatState): SeatState[] {
  return s.seats.map((x, i) => (i === seat ? f(x) : x));
}

function next(seat: number, n: number): number {
  return (seat + 1) % n;
}

/**
 * Applies one event. live is false for events replayed after a (re)join:
 * they rebuild the state but raise no rejection message.
 */
export function applyEvent(s: TableState, ev: TableEvent, live = true): TableState {
  let out = applyBody(s, ev.body, live);
  if (ev.timer) out = applyBody(out, ev.timer, live);
  out = { ...out, ...legalAfter(s, out, ev) };
  out.lastEventId = ev.id || s.lastEventId;
  if (ev.gameId) out.gameId = ev.gameId;
  return out;
}

/**
 * The events that end your legal moves: a move (yours taken, or another
 * seat's), a trick taken, a hand or game begun or ended; and any move
 * timer, which the turn's fresh list follows. (A bot given your seat plays
 * it: it is no longer your move to make, and taking the seat back starts
 * your timer again.)
 */
const ENDS_LEGAL: ReadonlySet<EventBody['kind']> = new Set([
  'game_started',
  'hand_started',
  'trump_chosen',
  'bid_made',
  'card_played',
  'trick_won',
  'hand_ended',
  'game_ended',
  'timer_started',
]);

/** Your legal moves after event ev took the table from before to after (which applyBody made). */
function legalAfter(before: TableState, after: TableState, ev: TableEvent): Pick<TableState, 'legal' | 'sendsLegal' | 'legalDue'> {
  const b = ev.body;
  // applyBody set them (legal_moves, view_synced); a refusal, which is
  // no history, or an event this client does not know changes nothing.
  if (b.kind === 'legal_moves' || b.kind === 'view_synced') return { legal: after.legal, sendsLegal: after.sendsLegal, legalDue: false };
  if (b.kind === 'move_rejected' || b.kind === 'unknown') return { legal: before.legal, sendsLegal: before.sendsLegal, legalDue: before.legalDue };
  const ends = ENDS_LEGAL.has(b.kind) || ev.timer !== null;
  const timer = ev.timer ?? (b.kind === 'timer_started' ? b : null);
  let sendsLegal = before.sendsLegal;
  // The list follows the event carrying your timer at once: anything else
  // there means the table sends none.
  if (before.legalDue && sendsLegal === null) sendsLegal = false;
  // A table that sent none did so to the end of its game (restored from
  // before legal moves); its next game may send them.
  if (b.kind === 'game_started' && sendsLegal === false) sendsLegal = null;
  return {
    legal: ends ? null : before.legal,
    sendsLegal,
    legalDue: timer !== null && timer.seat === after.yourSeat && !seatIsBot(after, timer.seat),
  };
}

function applyBody(s: TableState, b: EventBody, live: boolean): TableState {
  const n = seatCount(s);
  const japanese = s.settings?.game === 'japanese';
  switch (b.kind) {
    case 'game_started': {
      // The gateway's joined frame names no seat for a table joined before
      // its game began; the seating in this event does.
      const mine = s.me ? b.seats.findIndex((p) => p.playerId === s.me) : -1;
      return {
        ...emptyTable(s.tableId, s.me),
        yourSeat: mine >= 0 ? mine : s.yourSeat,
        lastEventId: s.lastEventId,
        settings: b.settings,
        seats: b.seats.map(newSeat),
        owners: b.seats.map((p) => p.playerId),
        phase: 'none',
      };
    }
    case 'player_seated':
      return {
        ...s,
        yourSeat: s.me !== '' && b.seat.playerId === s.me ? b.seat.seat : s.yourSeat,
        owners: b.seat.playerId ? setAt(s.owners, b.seat.seat, b.seat.playerId) : s.owners,
        seats: mapSeat(s, b.seat.seat, (x) => ({ ...x, player: b.seat, away: false, graceDeadline: null, botReason: b.seat.bot ? x.botReason : null })),
      };
    case 'player_left':
      return { ...s, seats: mapSeat(s, b.seat, (x) => ({ ...x, away: false, graceDeadline: null })), notice: { kind: 'left', seat: b.seat } };
    case 'seat_taken_by_bot':
      return {
        ...s,
        seats: mapSeat(s, b.seat, (x) => ({ ...x, player: { ...x.player, bot: true, playerId: '' }, away: false, graceDeadline: null, botReason: b.reason })),
        notice: { kind: 'bot', seat: b.seat, reason: b.reason },
      };
    case 'player_away':
      return { ...s, seats: mapSeat(s, b.seat, (x) => ({ ...x, away: true, graceDeadline: b.graceDeadline })), notice: { kind: 'away', seat: b.seat } };
    case 'player_back':
      return { ...s, seats: mapSeat(s, b.seat, (x) => ({ ...x, away: false, graceDeadline: null })), notice: { kind: 'back', seat: b.seat } };
    case 'hand_started': {
      const first = japanese ? b.dealerSeat : next(b.dealerSeat, n);
      const nine = !japanese && b.cardsPerSeat >= 9;
      return {
        ...s,
        handIndex: b.handIndex,
        pulkaIndex: b.pulkaIndex,
        cardsPerSeat: b.cardsPerSeat,
        dealerSeat: b.dealerSeat,
        hand: [],
        trump: null,
        turnedCard: null,
        trick: [],
        tricksPlayed: 0,
        lastTrick: null,
        playedThisHand: s.seats.map(() => false),
        phase: japanese || nine ? 'choose_trump' : 'bid',
        turnSeat: first,
        deadline: null,
        seats: s.seats.map((x, i) => ({
          ...x,
          bid: null,
          tricks: 0,
          // Until trump is chosen a nine-card chooser (and every Japanese
          // player) holds three cards; the others wait for the deal.
          handSize: japanese ? 3 : nine ? (i === first ? 3 : 0) : b.cardsPerSeat,
          columnsUp: [],
          columnsDown: [],
        })),
      };
    }
    case 'dealt': {
      if (b.seat !== s.yourSeat) return s;
      const hand = [...s.hand, ...b.cards.filter((c) => !s.hand.includes(c))];
      return { ...s, hand, seats: mapSeat(s, b.seat, (x) => ({ ...x, handSize: hand.length })) };
    }
    case 'trump_turned':
      return { ...s, trump: b.trump, turnedCard: b.card, notice: { kind: 'trump', seat: null, trump: b.trump } };
    case 'trump_chosen': {
      const size = japanese ? 8 : 9;
      return {
        ...s,
        trump: b.trump,
        phase: japanese ? 'play' : 'bid',
        turnSeat: japanese ? s.dealerSeat : next(s.dealerSeat, n),
        deadline: null,
        seats: s.seats.map((x, i) => ({ ...x, handSize: i === s.yourSeat ? Math.max(x.handSize, s.hand.length) : size })),
        notice: { kind: 'trump', seat: b.seat, trump: b.trump },
      };
    }
    case 'columns_dealt':
      return {
        ...s,
        seats: mapSeat(s, b.seat, (x) => ({ ...x, columnsUp: [...b.faceUp], columnsDown: b.faceUp.map(() => true) })),
      };
    case 'column_card_revealed': {
      if (b.seat !== s.yourSeat) return s;
      const hand = s.hand.includes(b.card) ? s.hand : [...s.hand, b.card];
      return {
        ...s,
        hand,
        seats: mapSeat(s, b.seat, (x) => ({ ...x, handSize: hand.length, columnsDown: setAt(x.columnsDown, b.column, false) })),
      };
    }
    case 'columns_to_hand': {
      // The face-up cards go to the owner's hand (they are public); each
      // face-down one follows privately as a column_card_revealed.
      const seat = s.seats[b.seat];
      if (!seat) return s;
      const up = b.columns.map((c) => seat.columnsUp[c] ?? null).filter((c): c is Card => c !== null);
      const mine = b.seat === s.yourSeat;
      const hand = mine ? [...s.hand, ...up.filter((c) => !s.hand.includes(c))] : s.hand;
      return {
        ...s,
        hand,
        seats: mapSeat(s, b.seat, (x) => {
          let columnsUp = x.columnsUp;
          let columnsDown = x.columnsDown;
          let downs = 0;
          for (const c of b.columns) {
            if (columnsDown[c]) downs++;
            columnsUp = setAt(columnsUp, c, null);
            if (!mine) columnsDown = setAt(columnsDown, c, false);
          }
          return { ...x, columnsUp, columnsDown, handSize: mine ? hand.length : x.handSize + up.length + downs };
        }),
      };
    }
    case 'bid_made': {
      const dealerBid = b.seat === s.dealerSeat;
      return {
        ...s,
        seats: mapSeat(s, b.seat, (x) => ({ ...x, bid: b.tricks })),
        phase: dealerBid ? 'play' : 'bid',
        turnSeat: next(b.seat, n),
        deadline: null,
        notice: { kind: 'bid', seat: b.seat, tricks: b.tricks, byServer: b.byServer },
      };
    }
    case 'timer_started':
      return { ...s, turnSeat: b.seat, phase: b.phase === 'none' ? s.phase : b.phase, deadline: b.deadline };
    case 'card_played': {
      const mine = b.seat === s.yourSeat;
      const hand = mine ? s.hand.filter((c) => c !== b.card) : s.hand;
      const trick = [...s.trick, { seat: b.seat, card: b.card, joker: b.joker }];
      return {
        ...s,
        hand,
        trick,
        phase: 'play',
        turnSeat: trick.length >= n ? null : next(b.seat, n),
        deadline: null,
        playedThisHand: setAt(s.playedThisHand, b.seat, true),
        seats: mapSeat(s, b.seat, (x) => {
          if (b.column !== null) {
            // From a column: its face-down card moves into the hand.
            const had = x.columnsDown[b.column] === true;
            return {
              ...x,
              columnsUp: setAt(x.columnsUp, b.column, null),
              columnsDown: mine ? x.columnsDown : setAt(x.columnsDown, b.column, false),
              handSize: mine ? hand.length : x.handSize + (had ? 1 : 0),
            };
          }
          return { ...x, handSize: mine ? hand.length : Math.max(0, x.handSize - 1) };
        }),
        notice: { kind: 'played', seat: b.seat, card: b.card, byServer: b.byServer },
      };
    }
    case 'trick_won':
      return {
        ...s,
        lastTrick: { cards: s.trick, winner: b.seat },
        trick: [],
        tricksPlayed: b.trickIndex + 1,
        turnSeat: b.seat,
        seats: s.seats.map((x, i) => ({ ...x, tricks: b.tricksTaken[i] ?? x.tricks })),
        notice: { kind: 'trick', seat: b.seat },
      };
    case 'hand_ended':
      return {
        ...s,
        lastHand: { handIndex: b.handIndex, results: b.results },
        phase: 'none',
        turnSeat: null,
        deadline: null,
        seats: s.seats.map((x, i) => {
          const r = b.results.find((y) => y.seat === i);
          return r ? { ...x, score: x.score + r.points + r.penalty, tricks: r.tricks } : x;
        }),
        notice: { kind: 'hand_ended', handIndex: b.handIndex },
      };
    case 'pulka_ended':
      return {
        ...s,
        lastPulka: { pulkaIndex: b.pulkaIndex, results: b.results },
        seats: s.seats.map((x, i) => {
          const r = b.results.find((y) => y.seat === i);
          return r ? { ...x, score: x.score + r.premia + r.moshla } : x;
        }),
      };
    case 'game_ended':
      return {
        ...s,
        phase: 'game_over',
        turnSeat: null,
        deadline: null,
        gameEnd: { reason: b.reason, placings: b.placings },
        seats: s.seats.map((x) => ({ ...x, away: false, graceDeadline: null })),
        notice: { kind: 'game_over' },
      };
    case 'move_rejected':
      if (!live) return s;
      return { ...s, rejection: { reason: b.reason, message: b.message, serial: (s.rejection?.serial ?? 0) + 1 } };
    case 'view_synced':
      return fromView(s.tableId, b.view, s);
    case 'legal_moves':
      // Private to the seat to move (sent to no one else); while the
      // client does not know its seat yet (a replay before the join's
      // answer) it is kept, as it can only be for that seat.
      if (s.yourSeat !== null && b.legal.seat !== s.yourSeat) return s;
      return { ...s, legal: b.legal, sendsLegal: true };
    case 'hand_committed':
    case 'client_seed_accepted':
    case 'hand_revealed':
      // The deal's seeds: the table session keeps them (fair.ts).
      return s;
    case 'unknown':
      return s;
  }
}

function setAt<T>(a: readonly T[], i: number, v: T): T[] {
  const out = [...a];
  out[i] = v;
  return out;
}

/** The seat player owns (plays, or a bot plays for them); null when none. */
export function ownedSeat(s: TableState, player: string): number | null {
  if (player === '') return null;
  const i = s.owners.indexOf(player);
  return i >= 0 ? i : null;
}

/** Whether it is your move now. */
export function yourTurn(s: TableState): boolean {
  return s.yourSeat !== null && s.turnSeat === s.yourSeat && (s.phase === 'bid' || s.phase === 'play' || s.phase === 'choose_trump') && !seatIsBot(s, s.yourSeat);
}

export function seatIsBot(s: TableState, seat: number): boolean {
  return s.seats[seat]?.player.bot === true;
}

/** The joker a card on the table was declared as, for screen text. */
export function isJokerPlay(p: PlayedCard): boolean {
  return isJoker(p.card);
}
