// The application's state, in signals: the session, the connection, the
// lobby list and each followed table. It wires the protocol layer's
// listeners to the pure reducers; screens read signals and call the
// methods here, nothing else.

import { batch, signal, type Signal } from '@preact/signals';
import { Api, ApiError, type Session } from '../protocol/api';
import { Connection, type SocketFactory, type SocketLike, type Status } from '../protocol/connection';
import { carriesSeed, type Move } from '../protocol/frames';
import type { LobbyUpdate, LobbyView, SheetUpdate, TableEvent, TableSummary } from '../protocol/types';
import { applyEvent, emptyTable, type TableState } from '../game/state';
import {
  applyFair,
  emptyFair,
  markAttached,
  markSent,
  rejoined,
  seedRefused,
  seedsToSend,
  seedToAttach,
  type FairHand,
  type FairState,
  type SeedMaker,
} from '../fairdeal/hands';
import { newClientSeed, toHex } from '../fairdeal/fairdeal';
import { navigate, route } from './router';
import { mergeEntries, newerBalance, type Balance, type LedgerItem } from '../wallet/wallet';

/** Sends a hand's client seed; false when it could not go now. */
export type SeedSender = (h: FairHand) => boolean;

function randomKey(): string {
  return toHex(newClientSeed()).slice(0, 24);
}

/** The browser's seeds: crypto.getRandomValues, made as they are sent. */
const browserSeeds: SeedMaker = { newSeed: () => toHex(newClientSeed()), newKey: randomKey };

export class TableSession {
  readonly state: Signal<TableState>;
  readonly sheet = signal<SheetUpdate | null>(null);
  /** The lobby's summary (seats, settings) before and around the game. */
  readonly summary = signal<TableSummary | null>(null);
  readonly joined = signal(false);
  /** Whether the last event applied was live, not replayed after a (re)join: only live ones sound. */
  readonly live = signal(true);
  /** Each hand's commit–reveal deal as this client saw it (fairdeal/hands.ts). */
  readonly fair = signal<FairState>(emptyFair());

  constructor(
    readonly id: string,
    me = '',
    private readonly sendSeed: SeedSender = () => false,
    private readonly seeds: SeedMaker = browserSeeds,
  ) {
    this.state = signal(emptyTable(id, me));
  }

  apply(ev: TableEvent, live: boolean): void {
    // A refused seed frame (another page of the player seeded the hand
    // first, or it came late) is the deal's business, not a move to tell the
    // player about. A refused move that carried a seed is the player's.
    const s = seedRefused(this.fair.value, ev) ? this.state.value : applyEvent(this.state.value, ev, live);
    const fs = applyFair(this.fair.value, ev, {
      tableId: this.id,
      yourSeat: s.yourSeat,
      japanese: s.settings?.game === 'japanese',
      handIndex: s.handIndex,
    });
    batch(() => {
      this.state.value = s;
      this.fair.value = fs;
      this.live.value = live;
    });
    // Replayed history waits for the join's end (joinedAgain): its hands
    // are mostly long dealt.
    if (live) this.sendSeeds(false);
  }

  /**
   * After a (re)join: the seeds due, and again the seed frames sent but not
   * yet taken. A seed that rode on a move neither accepted nor refused rides
   * on the next move again, or goes in a seed frame of its own if its hand
   * now waits for its deal.
   */
  joinedAgain(): void {
    this.fair.value = rejoined(this.fair.value);
    this.sendSeeds(true);
  }

  /**
   * The seed to carry on the player's next move, if one is due (its hand is
   * committed ahead): made now, with the key to send the move under. Pass it
   * to attached once the move went.
   */
  seedToAttach(): FairHand | undefined {
    return seedToAttach(this.fair.value, this.seeds);
  }

  /** The move carrying h's seed went (under h.seedKey). */
  attached(h: FairHand): void {
    this.fair.value = markAttached(this.fair.value, h);
  }

  private sendSeeds(resend: boolean): void {
    const due = seedsToSend(this.fair.value, resend, this.seeds);
    if (due.length === 0) return;
    this.fair.value = markSent(this.fair.value, due.filter((h) => this.sendSeed(h)));
  }

  setSheet(u: SheetUpdate): void {
    const cur = this.sheet.value;
    // Sheets are whole; a stale one (lower version of the same game) is dropped.
    if (cur && cur.sheet.gameId === u.sheet.gameId && cur.version > u.version) return;
    this.sheet.value = u;
  }
}

/** Error codes that mean the table is not there (any more). */
const TABLE_GONE = new Set(['table_not_found', 'table_gone']);

export interface Toast {
  text: string;
  kind: 'error' | 'info';
  serial: number;
}

export class Store {
  readonly status = signal<Status>('closed');
  readonly session = signal<Session | null>(null);
  readonly checking = signal(true);
  readonly lobby = signal<TableSummary[]>([]);
  readonly lobbyVersion = signal(0);
  readonly toast = signal<Toast | null>(null);
  /** The account's Domino Coin balance; null for guests and until known. */
  readonly balance = signal<Balance | null>(null);
  /** The stakes a coin table may have (the gateway's welcome: pkg/payout's ladder). */
  readonly stakes = signal<number[]>([]);
  /** Ledger entries seen (balance frames, ledger reads), newest first: what games won or lost. */
  readonly coinEntries = signal<LedgerItem[]>([]);
  private readonly tables = new Map<string, TableSession>();
  private watchingLobby = false;

  constructor(
    readonly api: Api,
    readonly conn: Connection,
  ) {
    conn.listen({
      status: (s) => {
        this.status.value = s;
        // The gateway refused the session (expired): back to the entry.
        if (s === 'unauthorized') this.session.value = null;
      },
      welcome: (p, stakes) => {
        this.stakes.value = stakes;
        const cur = this.session.value;
        if (cur && cur.player.id !== p.id) this.session.value = { ...cur, player: p };
      },
      event: (table, ev, live) => this.tables.get(table)?.apply(ev, live),
      joined: (table, seat) => {
        const t = this.tables.get(table);
        if (!t) return;
        batch(() => {
          t.joined.value = true;
          // The gateway knows the seating at the point the client joined; a
          // seat the events gave since (or a game not begun then) stays.
          if (seat !== null && t.state.value.yourSeat !== seat) t.state.value = { ...t.state.value, yourSeat: seat };
        });
        t.joinedAgain();
      },
      sheet: (table, u) => this.tables.get(table)?.setSheet(u),
      lobbyView: (v) => this.setLobby(v),
      lobbyUpdate: (u) => this.updateLobby(u),
      error: (e, table) => {
        // A join refused as malformed refused the table's id: a link that
        // names no table (issue 22: it was followed and polled for ever).
        if (e.join && e.code === 'invalid_message') {
          this.tableGone(table);
          this.showError('table_not_found', e.message);
          return;
        }
        if (TABLE_GONE.has(e.code)) this.tableGone(table);
        this.showError(e.code, e.message);
      },
      balance: (b, entry) => this.noteCoins(b, entry ? [entry] : []),
    });
  }

  static create(socket?: SocketFactory): Store {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${proto}//${location.host}/ws`;
    let store: Store | null = null;
    const conn = new Connection({
      url,
      socket: socket ?? ((u, sub) => new WebSocket(u, sub) as unknown as SocketLike),
      // ?wire=json speaks the protocol's JSON (readable in the browser's
      // network panel); binary protobuf otherwise.
      encoding: new URLSearchParams(location.search).get('wire') === 'json' ? 'json' : 'proto',
      token: () => store?.session.value?.token || null,
    });
    store = new Store(new Api(), conn);
    return store;
  }

  /** Finds the session from the cookie and connects if there is one. */
  async init(): Promise<void> {
    try {
      const s = await this.api.current();
      if (s) this.signedIn(s);
    } catch {
      // The gateway is unreachable: the entry screen says so when used.
    } finally {
      this.checking.value = false;
    }
  }

  signedIn(s: Session): void {
    this.session.value = s;
    this.conn.start();
    // The socket's balance frame follows the welcome; this read also opens
    // a wallet the account's registration could not.
    if (!s.player.guest) void this.refreshBalance();
  }

  /** A balance and entries learnt from the gateway; older balances are ignored. */
  noteCoins(b: Balance | null, entries: readonly LedgerItem[]): void {
    batch(() => {
      if (b) this.balance.value = newerBalance(this.balance.value, b);
      if (entries.length > 0) this.coinEntries.value = mergeEntries(this.coinEntries.value, entries);
    });
  }

  async refreshBalance(): Promise<void> {
    try {
      this.noteCoins(await this.api.balance(), []);
    } catch {
      // The balance frame may still come; the header shows none meanwhile.
    }
  }

  /** Reads the newest ledger entries (a game's result after a reload). */
  async loadRecentCoins(): Promise<void> {
    try {
      this.noteCoins(null, (await this.api.ledger('', 50)).entries);
    } catch {
      // Shown as unknown.
    }
  }

  async signOut(): Promise<void> {
    try {
      await this.api.logout();
    } catch {
      // Signed out locally either way.
    }
    this.conn.stop();
    batch(() => {
      this.session.value = null;
      this.balance.value = null;
      this.coinEntries.value = [];
    });
  }

  table(id: string): TableSession {
    let t = this.tables.get(id);
    if (!t) {
      t = new TableSession(id, this.session.value?.player.id ?? '', (h) => this.conn.seed(id, h.handIndex, h.seed ?? '', h.seedKey));
      this.tables.set(id, t);
    }
    return t;
  }

  follow(id: string): TableSession {
    const t = this.table(id);
    this.conn.join(id, t.state.value.lastEventId);
    return t;
  }

  unfollow(id: string): void {
    this.conn.unjoin(id);
    const t = this.tables.get(id);
    if (t) t.joined.value = false;
  }

  watchLobby(on: boolean): void {
    if (this.watchingLobby === on) return;
    this.watchingLobby = on;
    this.conn.watchLobby(on);
  }

  /** Sends a move; a bid, trump or card carries the seed due for the hand committed ahead. */
  move(table: string, m: Move): boolean {
    const t = this.tables.get(table);
    const h = t && carriesSeed(m) ? t.seedToAttach() : undefined;
    const ref = this.conn.move(table, m, h && { hand: h.handIndex, seed: h.seed ?? '', cmd: h.seedKey });
    if (ref === null) return false;
    if (t && h) t.attached(h);
    return true;
  }

  serverNow(): number {
    return this.conn.serverNow();
  }

  setLobby(v: LobbyView): void {
    batch(() => {
      this.lobby.value = v.tables;
      this.lobbyVersion.value = v.version;
      for (const s of v.tables) this.noteSummary(s);
    });
  }

  updateLobby(u: LobbyUpdate): void {
    const expected = this.lobbyVersion.value + 1;
    if (u.version <= this.lobbyVersion.value) return; // already in the view
    if (u.version > expected && this.lobbyVersion.value > 0) {
      // A gap: some change was missed. Ask for the whole list again.
      this.conn.watchLobby(true);
      return;
    }
    if (u.kind === 'unknown') {
      this.lobbyVersion.value = u.version;
      return;
    }
    const list = this.lobby.value;
    if (u.kind === 'upserted') {
      const i = list.findIndex((x) => x.tableId === u.table.tableId);
      this.lobby.value = i >= 0 ? list.map((x, j) => (j === i ? u.table : x)) : [u.table, ...list];
      this.noteSummary(u.table);
    } else {
      this.lobby.value = list.filter((x) => x.tableId !== u.tableId);
    }
    this.lobbyVersion.value = u.version;
  }

  noteSummary(s: TableSummary): void {
    const t = this.tables.get(s.tableId);
    if (t) t.summary.value = s;
  }

  /**
   * The server says a table does not exist (any more): its state is dropped
   * and, if the player is looking at it, they go back to the lobby, where
   * the toast says why. A table the error does not name is the one on
   * screen.
   */
  tableGone(table: string | null): void {
    const r = route.value;
    const id = table ?? (r.name === 'table' ? r.tableId : null);
    if (id === null) return;
    this.conn.forget(id);
    this.tables.delete(id);
    if (r.name === 'table' && r.tableId === id) navigate('/');
  }

  showError(code: string, message: string): void {
    this.toast.value = { text: code || message, kind: 'error', serial: (this.toast.value?.serial ?? 0) + 1 };
  }

  showApiError(e: unknown): void {
    if (e instanceof ApiError) this.showError(e.code, e.message);
    else this.showError('network', String(e));
  }
}
