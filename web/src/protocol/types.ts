// The client's model of the protocol: the pulka.*.v1 messages as the gateway
// writes them (protojson: snake_case names, enums by name, int64 as strings,
// zero values left out), normalised by decode.ts into plain, complete
// TypeScript values so that screens never see a missing field or a string
// where a number belongs.

import type { Card, Suit } from './cards';

export type Game = 'classic' | 'japanese';
export type Variant = 'standard' | 'nines';
export type Khishti = '200' | '500' | '100' | 'per-card';
export type Trump = Suit | 'none';

/** A coin stake's payout is the share of the pot of each place, in percent,
 * first place first, as the lobby describes the table (empty when unknown). */
export type Stake = { kind: 'free' } | { kind: 'coins'; amount: number; payout: number[] } | { kind: 'unknown' };

export interface TableSettings {
  game: Game | null;
  variant: Variant | null;
  khishti: Khishti | null;
  premia: boolean;
  moshla: boolean;
  restDocked: boolean;
  japaneseTarget: number;
  visibility: 'public' | 'private';
  hasPassword: boolean;
  stake: Stake;
  /** Seconds per move; null for the server's default. */
  moveTime: number | null;
  /** Seconds of reconnect grace; null for the server's default. */
  reconnectGrace: number | null;
  /** How well the table's bots play; null when the table does not say
   * (made before levels, or the server's default). */
  botLevel: BotLevel | null;
}

export type BotLevel = 'easy' | 'normal' | 'strong';

export type Phase = 'waiting' | 'choose_trump' | 'bid' | 'play' | 'game_over' | 'none';

export interface SeatPlayer {
  seat: number;
  playerId: string;
  name: string;
  bot: boolean;
}

export type JokerAction = 'take' | 'discard' | 'highest' | 'give';

export interface JokerDecl {
  action: JokerAction;
  /** The suit a led joker names; null when following. */
  suit: Suit | null;
}

/** One card the seat may play, with each declaration a joker may be played with (empty for any other card). */
export interface LegalPlay {
  card: Card;
  declarations: JokerDecl[];
}

/**
 * The moves the seat to move may make now (pulka.table.v1.LegalMoves), as
 * the rules engine computes them: what the screens offer, so that no rule
 * of the game is written in the client.
 */
export interface LegalMoves {
  seat: number;
  /** What it must do: choose_trump, bid or play. */
  phase: Phase;
  /** choose_trump: the trumps it may choose ('none': no trump, or bezi). */
  trumps: Trump[];
  /** bid: the bids it may make, smallest first (the dealer's forbidden bid left out). */
  bids: number[];
  /** play: the cards it may play (Japanese: face-up column cards included when allowed). */
  plays: LegalPlay[];
}

export interface PlayedCard {
  seat: number;
  card: Card;
  joker: JokerDecl | null;
}

export interface SeatView {
  player: SeatPlayer;
  away: boolean;
  bid: number | null;
  tricks: number;
  score: number;
  handSize: number;
  /** Japanese: face-up card per column (null where none). */
  columnsUp: (Card | null)[];
  /** Japanese: whether each column still has its face-down card. */
  columnsDown: boolean[];
}

export interface TableView {
  settings: TableSettings;
  seats: SeatView[];
  yourSeat: number | null;
  yourHand: Card[];
  phase: Phase;
  handIndex: number;
  pulkaIndex: number;
  cardsPerSeat: number;
  dealerSeat: number;
  /** null while not yet known. */
  trump: Trump | null;
  turnedCard: Card | null;
  trick: PlayedCard[];
  turnSeat: number;
  /** Milliseconds since the epoch (server clock); null when none. */
  deadline: number | null;
  /**
   * The commit–reveal of the hand in play (docs/fair-play.md), from its
   * commitment to its reveal; seedDeadline is set while it waits for its
   * deal. null when none.
   */
  committed: HandCommitment | null;
  /** The awaited seats of committed whose seed was accepted, while it waits for its deal. */
  seededSeats: number[];
  /** The hand committed ahead (the one after the hand in play); null when none. */
  nextCommitted: HandCommitment | null;
  /** The awaited seats of nextCommitted whose seed was accepted. */
  nextSeededSeats: number[];
  /** Your legal moves when it is your move (and not a bot's); null otherwise,
   * and on a table that sends none (restored from before legal moves). */
  legal: LegalMoves | null;
}

/**
 * A hand's commitment (pulka.table.v1.HandCommitted). Bytes are lower-case
 * hex here (base64 on the wire). seedDeadline is null on a hand committed a
 * hand ahead, whose seed rides on the player's next move.
 */
export interface HandCommitment {
  handIndex: number;
  commitment: string;
  /** Milliseconds since the epoch (server clock); null when unset. */
  seedDeadline: number | null;
  awaitedSeats: number[];
}

export type BotReason = 'filled' | 'player_left' | 'grace_expired' | 'unknown';
export type GameEndReason = 'completed' | 'resigned' | 'forfeited' | 'aborted' | 'unknown';

export type RejectReason =
  | 'MALFORMED'
  | 'NOT_SEATED'
  | 'SEAT_UNAVAILABLE'
  | 'NOT_YOUR_TURN'
  | 'WRONG_PHASE'
  | 'INVALID_BID'
  | 'DEALER_BID_FORBIDDEN'
  | 'INVALID_TRUMP'
  | 'CARD_NOT_AVAILABLE'
  | 'MUST_FOLLOW_SUIT'
  | 'MUST_TRUMP'
  | 'MUST_PLAY_HIGHEST'
  | 'FIRST_CARD_FROM_HAND'
  | 'INVALID_DECLARATION'
  | 'GAME_OVER'
  | 'NOT_ALLOWED'
  | 'UNSPECIFIED';

export interface SeatHandResult {
  seat: number;
  bid: number;
  tricks: number;
  points: number;
  penalty: number;
}

export interface SeatPulkaResult {
  seat: number;
  premia: number;
  moshla: number;
  total: number;
}

export interface Placing {
  place: number;
  seat: number;
  playerId: string;
  score: number;
}

export type EventBody =
  | { kind: 'game_started'; settings: TableSettings; seats: SeatPlayer[] }
  | { kind: 'player_seated'; seat: SeatPlayer }
  | { kind: 'player_left'; seat: number; playerId: string }
  | { kind: 'seat_taken_by_bot'; seat: number; reason: BotReason }
  | { kind: 'player_away'; seat: number; playerId: string; graceDeadline: number | null }
  | { kind: 'player_back'; seat: number; playerId: string }
  | { kind: 'hand_started'; handIndex: number; pulkaIndex: number; cardsPerSeat: number; dealerSeat: number }
  | { kind: 'dealt'; seat: number; cards: Card[] }
  | { kind: 'trump_turned'; card: Card | null; trump: Trump }
  | { kind: 'trump_chosen'; seat: number; trump: Trump; byServer: boolean }
  | { kind: 'columns_dealt'; seat: number; faceUp: (Card | null)[] }
  | { kind: 'column_card_revealed'; seat: number; column: number; card: Card }
  | { kind: 'columns_to_hand'; seat: number; columns: number[] }
  | { kind: 'bid_made'; seat: number; tricks: number; byServer: boolean }
  | { kind: 'timer_started'; seat: number; phase: Phase; deadline: number | null }
  | { kind: 'card_played'; seat: number; card: Card; joker: JokerDecl | null; column: number | null; byServer: boolean }
  | { kind: 'trick_won'; trickIndex: number; seat: number; tricksTaken: number[] }
  | { kind: 'hand_ended'; handIndex: number; results: SeatHandResult[] }
  | { kind: 'pulka_ended'; pulkaIndex: number; results: SeatPulkaResult[] }
  | { kind: 'game_ended'; reason: GameEndReason; placings: Placing[] }
  | { kind: 'move_rejected'; reason: RejectReason; message: string }
  | { kind: 'view_synced'; view: TableView }
  // Private to the seat to move, right after the event carrying its timer.
  | { kind: 'legal_moves'; legal: LegalMoves }
  // The commit–reveal deal (docs/fair-play.md). Bytes are lower-case hex
  // here (base64 on the wire); "" when absent.
  | ({ kind: 'hand_committed' } & HandCommitment)
  | { kind: 'client_seed_accepted'; handIndex: number; seat: number }
  | { kind: 'hand_revealed'; handIndex: number; serverSeed: string; clientSeeds: string[]; commitment: string }
  | { kind: 'unknown' };

export interface TableEvent {
  /** The event stream id (Redis entry id): what a resume sends back. */
  id: string;
  seq: number;
  tableId: string;
  gameId: string;
  causedBy: string;
  /** Milliseconds since the epoch; null when absent. */
  occurredAt: number | null;
  body: EventBody;
  /** The move timer the event started (its "timer" member): applied after
   * the body, as a timer_started event that followed it would be. */
  timer: Extract<EventBody, { kind: 'timer_started' }> | null;
  /** A client seed that rode on this event's move was taken (its
   * "seed_accepted" member, docs/fair-play.md): folded as a
   * client_seed_accepted caused by the move. */
  seedAccepted?: { handIndex: number; seat: number } | null;
}

// ---- Score sheet (pulka.scoring.v1.Sheet) ----

export type HandOutcome = 'in_progress' | 'made' | 'missed' | 'khishti' | 'unspecified';

export interface SheetPlayer {
  seat: number;
  playerId: string;
  name: string;
}

export interface SheetCell {
  seat: number;
  bid: number | null;
  tricks: number;
  points: number;
  penalty: number;
  outcome: HandOutcome;
  struck: boolean;
}

export interface SheetHand {
  handIndex: number;
  cards: number;
  cells: SheetCell[];
}

export interface SheetPulkaSeat {
  seat: number;
  premia: number;
  moshla: number;
  total: number;
}

export interface SheetPulka {
  pulkaIndex: number;
  finished: boolean;
  hands: SheetHand[];
  totals: SheetPulkaSeat[];
}

export interface SeatTotal {
  seat: number;
  total: number;
  onCourse: boolean;
}

export interface Sheet {
  tableId: string;
  gameId: string;
  settings: TableSettings;
  players: SheetPlayer[];
  pulkas: SheetPulka[];
  totals: SeatTotal[];
  currentHand: number;
}

export interface SheetUpdate {
  version: number;
  sheet: Sheet;
}

// ---- Lobby (pulka.lobby.v1) ----

export type TableStatus = 'waiting' | 'playing' | 'finished' | 'unknown';

export interface LobbySeat {
  index: number;
  playerId: string;
  name: string;
  bot: boolean;
}

export interface TableSummary {
  tableId: string;
  name: string;
  settings: TableSettings;
  seats: LobbySeat[];
  status: TableStatus;
  hostPlayerId: string;
  createdAt: number | null;
}

export interface LobbyView {
  version: number;
  tables: TableSummary[];
}

export type LobbyUpdate =
  | { version: number; kind: 'upserted'; table: TableSummary }
  | { version: number; kind: 'removed'; tableId: string }
  | { version: number; kind: 'unknown' };

export interface Player {
  id: string;
  name: string;
  guest: boolean;
}
