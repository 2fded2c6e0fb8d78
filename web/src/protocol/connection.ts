// The WebSocket to the gateway: one per browser tab, shared by the lobby
// and the tables. It reconnects by itself with a growing back-off, and on
// every reconnect re-joins each followed table with the id of the last event
// it received, so the gateway replays exactly what was missed (no gap, no
// duplicate: events at or before that id are dropped if they come again).
// Commands carry an idempotency key; one sent but not acknowledged when the
// connection dropped is sent again with the same key after the re-join, and
// the table applies it at most once.
//
// It knows nothing of screens: listeners get decoded events.
//
// Frames are pulka.gateway.v1 messages (docs/protocol.md), binary protobuf
// by default (the WebSocket subprotocol pulka.v1.proto), decoded and
// encoded by the code generated from proto/; JSON (pulka.v1.json) on
// request, for debugging in the browser's network panel.

import { create, fromBinary, fromJsonString, toBinary, toJsonString } from '@bufbuild/protobuf';
import { timestampMs, type Timestamp } from '@bufbuild/protobuf/wkt';

import {
  ClientFrameSchema,
  ServerFrameSchema,
  type ClientFrame,
  type EventFrame,
  type Error as WireError,
  type ServerFrame,
  type Welcome,
} from '../gen/pulka/gateway/v1/frames_pb';
import { moveFrame, seedFrame, type AttachedSeed, type Move, type ServerError } from './frames';
import { compareStreamIds } from './streamid';
import type { LobbyUpdate, LobbyView, Player, SheetUpdate, TableEvent } from './types';
import { legalEvent, lobbyUpdateOf, lobbyViewOf, sheetUpdateOf, tableEvent } from './view';
import { balanceOf, ledgerItemOf, type Balance, type LedgerItem } from '../wallet/wallet';

/** How frames are written: binary protobuf, or protobuf's JSON. */
export type Encoding = 'proto' | 'json';

/** The WebSocket subprotocol of each encoding (wire.Subprotocol… in Go). */
export const SUBPROTOCOLS: Record<Encoding, string> = { proto: 'pulka.v1.proto', json: 'pulka.v1.json' };

export type Status = 'connecting' | 'open' | 'down' | 'unauthorized' | 'closed';

/** The part of the browser's WebSocket the connection uses (tests pass a fake). */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  /** Set to 'arraybuffer': binary frames arrive as ArrayBuffers. */
  binaryType?: string;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
}

/** Opens a socket asking for the subprotocol (SUBPROTOCOLS). */
export type SocketFactory = (url: string, subprotocol: string) => SocketLike;

export interface Clock {
  now(): number;
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(h: unknown): void;
}

export interface ConnectionOptions {
  url: string;
  socket: SocketFactory;
  /** A session token for the hello frame, when the cookie does not authenticate. */
  token?: () => string | null;
  clock?: Clock;
  /** Random ids (refs, command keys); tests make them predictable. */
  newId?: () => string;
  /** Back-off steps in ms; the last repeats. */
  backoff?: number[];
  /** A ping when nothing was heard for this long; the socket is dropped after twice it. */
  keepAliveMs?: number;
  /** How long to wait for the cookie's welcome before sending the token's hello. */
  helloDelayMs?: number;
  /** The frames' encoding ('proto' unless debugging). */
  encoding?: Encoding;
}

export interface Listeners {
  status?: (s: Status) => void;
  /** stakes: the Domino Coin stake ladder the gateway offers. */
  welcome?: (p: Player, stakes: number[]) => void;
  event?: (table: string, ev: TableEvent, live: boolean) => void;
  joined?: (table: string, seat: number | null, replayed: number, trimmed: boolean) => void;
  sheet?: (table: string, u: SheetUpdate) => void;
  lobbyView?: (v: LobbyView) => void;
  lobbyUpdate?: (u: LobbyUpdate) => void;
  error?: (e: ServerError, table: string | null) => void;
  ack?: (ref: string, cmd: string) => void;
  /** The account's Domino Coin balance, and the ledger entry that made it (accounts only). */
  balance?: (b: Balance, entry: LedgerItem | null) => void;
}

interface Followed {
  lastEventId: string;
  /** True from our join until the gateway's joined: what arrives meanwhile is replay. */
  replaying: boolean;
  joinRef: string;
}

interface Pending {
  table: string;
  frame: ClientFrame;
}

const OPEN = 1;

/**
 * Close codes after which reconnecting cannot help without a new session
 * (4003: the session expired or was revoked by a logout).
 */
const UNAUTHORIZED = new Set([4001, 4002, 4003]);

const browserClock: Clock = {
  now: () => Date.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

function randomId(): string {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

export class Connection {
  private ws: SocketLike | null = null;
  private readonly tables = new Map<string, Followed>();
  private readonly pending = new Map<string, Pending>();
  /** The join refs of tables given up (forget) whose answer may still come:
   * an error answering one is about a table nobody follows any more. */
  private readonly forgottenJoins = new Set<string>();
  private lobby = false;
  private attempt = 0;
  private retryTimer: unknown = null;
  private aliveTimer: unknown = null;
  private helloTimer: unknown = null;
  private heardAt = 0;
  private stopped = true;
  private authed = false;
  private readonly clock: Clock;
  private readonly newId: () => string;
  private readonly backoff: number[];
  private readonly keepAliveMs: number;
  private readonly helloDelayMs: number;
  private readonly encoding: Encoding;
  private listeners: Listeners = {};
  private statusNow: Status = 'closed';
  /** Server time minus local time, in ms (from welcome and pong). */
  skew = 0;
  player: Player | null = null;

  constructor(private readonly opts: ConnectionOptions) {
    this.clock = opts.clock ?? browserClock;
    this.newId = opts.newId ?? randomId;
    this.backoff = opts.backoff ?? [500, 1000, 2000, 4000, 8000, 15000];
    this.keepAliveMs = opts.keepAliveMs ?? 25000;
    this.helloDelayMs = opts.helloDelayMs ?? 1500;
    this.encoding = opts.encoding ?? 'proto';
  }

  get status(): Status {
    return this.statusNow;
  }

  listen(l: Listeners): void {
    this.listeners = l;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimers();
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onclose = null;
      ws.close(1000, 'bye');
    }
    this.setStatus('closed');
  }

  /** Follows a table; resumes after lastEventId when given. */
  join(table: string, lastEventId = ''): void {
    const f = this.tables.get(table);
    const last = lastEventId || f?.lastEventId || '';
    this.tables.set(table, { lastEventId: last, replaying: true, joinRef: '' });
    this.sendJoin(table);
  }

  /** Stops following a table (the seat is kept; use a leave move to leave). */
  unjoin(table: string): void {
    if (!this.tables.delete(table)) return;
    for (const [ref, p] of this.pending) if (p.table === table) this.pending.delete(ref);
    this.send(create(ClientFrameSchema, { ref: this.newId(), frame: { case: 'unjoin', value: { table } } }));
  }

  /**
   * Forgets a table the server says is gone (table_not_found, table_gone):
   * no unjoin goes out, as the gateway follows it no more.
   */
  forget(table: string): void {
    const ref = this.tables.get(table)?.joinRef ?? '';
    if (ref !== '') {
      if (this.forgottenJoins.size >= 64) this.forgottenJoins.clear();
      this.forgottenJoins.add(ref);
    }
    this.tables.delete(table);
    for (const [ref, p] of this.pending) if (p.table === table) this.pending.delete(ref);
  }

  lastEventId(table: string): string {
    return this.tables.get(table)?.lastEventId ?? '';
  }

  watchLobby(on: boolean): void {
    this.lobby = on;
    this.send(lobbyFrame(on));
  }

  /**
   * Sends a move. Returns its ref, or null when the connection is down (the
   * screen shows the banner and keeps the controls disabled). A seed riding
   * on it (a bid, trump or card) comes with the idempotency key to send the
   * move under: the seed's, which the acceptance's caused_by names.
   */
  move(table: string, m: Move, seed?: AttachedSeed & { cmd: string }): string | null {
    if (!this.isOpen() || !this.tables.has(table)) return null;
    const ref = this.newId();
    const frame = seed ? moveFrame(table, m, ref, seed.cmd, seed) : moveFrame(table, m, ref, this.newId());
    this.pending.set(ref, { table, frame });
    this.send(frame);
    return ref;
  }

  /**
   * Sends this seat's client seed (64 hex digits) for hand at table
   * (docs/fair-play.md). cmd is the seed's idempotency key: the caller
   * sends it again with the same key after a re-join while the hand is
   * not dealt. False when the connection is down.
   */
  seed(table: string, hand: number, seed: string, cmd: string): boolean {
    if (!this.isOpen() || !this.tables.has(table)) return false;
    return this.send(seedFrame(table, hand, seed, cmd, this.newId()));
  }

  /** Server time now (ms), from the local clock and the measured skew. */
  serverNow(): number {
    return this.clock.now() + this.skew;
  }

  private isOpen(): boolean {
    return this.ws !== null && this.ws.readyState === OPEN && this.authed;
  }

  private open(): void {
    this.setStatus(this.attempt === 0 ? 'connecting' : 'down');
    let ws: SocketLike;
    try {
      ws = this.opts.socket(this.opts.url, SUBPROTOCOLS[this.encoding]);
    } catch {
      this.scheduleRetry();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.authed = false;
    ws.onopen = () => {
      this.heard();
      // The session cookie authenticates a browser at once (welcome comes
      // first); a hello then would be refused as a second authentication.
      // Only when no welcome comes does the token go in a hello.
      this.helloTimer = this.clock.setTimeout(() => {
        this.helloTimer = null;
        const tok = this.opts.token?.();
        if (tok && ws === this.ws && !this.authed && ws.readyState === OPEN) {
          ws.send(this.encode(create(ClientFrameSchema, { frame: { case: 'hello', value: { token: tok } } })));
        }
      }, this.helloDelayMs);
    };
    ws.onmessage = (ev) => {
      if (ws !== this.ws) return;
      this.heard();
      this.onFrame(ev.data);
    };
    ws.onerror = () => {
      /* onclose follows */
    };
    ws.onclose = (ev) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.authed = false;
      this.clearTimers();
      if (this.stopped) return;
      if (UNAUTHORIZED.has(ev.code)) {
        this.stopped = true;
        this.setStatus('unauthorized');
        return;
      }
      this.scheduleRetry();
    };
  }

  private scheduleRetry(): void {
    this.setStatus('down');
    const step = this.backoff[Math.min(this.attempt, this.backoff.length - 1)] ?? 1000;
    this.attempt++;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) this.open();
    }, step);
  }

  private heard(): void {
    this.heardAt = this.clock.now();
    if (this.aliveTimer !== null) this.clock.clearTimeout(this.aliveTimer);
    this.aliveTimer = this.clock.setTimeout(() => this.checkAlive(), this.keepAliveMs);
  }

  private checkAlive(): void {
    this.aliveTimer = null;
    const ws = this.ws;
    if (!ws) return;
    if (this.clock.now() - this.heardAt >= 2 * this.keepAliveMs) {
      // Nothing heard, not even a pong: the socket is dead without knowing it.
      ws.close(4000, 'silent');
      ws.onclose?.({ code: 4000, reason: 'silent' });
      return;
    }
    this.send(create(ClientFrameSchema, { ref: this.newId(), frame: { case: 'ping', value: {} } }));
    this.aliveTimer = this.clock.setTimeout(() => this.checkAlive(), this.keepAliveMs);
  }

  private clearTimers(): void {
    if (this.retryTimer !== null) this.clock.clearTimeout(this.retryTimer);
    if (this.aliveTimer !== null) this.clock.clearTimeout(this.aliveTimer);
    if (this.helloTimer !== null) this.clock.clearTimeout(this.helloTimer);
    this.retryTimer = null;
    this.aliveTimer = null;
    this.helloTimer = null;
  }

  private setStatus(s: Status): void {
    if (s === this.statusNow) return;
    this.statusNow = s;
    this.listeners.status?.(s);
  }

  private encode(frame: ClientFrame): string | Uint8Array {
    return this.encoding === 'json' ? toJsonString(ClientFrameSchema, frame) : toBinary(ClientFrameSchema, frame);
  }

  private send(frame: ClientFrame): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== OPEN) return false;
    if (!this.authed) return false;
    ws.send(this.encode(frame));
    return true;
  }

  private sendJoin(table: string): void {
    const f = this.tables.get(table);
    if (!f) return;
    f.replaying = true;
    f.joinRef = this.newId();
    this.send(create(ClientFrameSchema, { ref: f.joinRef, frame: { case: 'join', value: { table, lastEventId: f.lastEventId } } }));
  }

  /** One message from the gateway: binary, or JSON text. A frame this client cannot read is dropped. */
  private onFrame(data: unknown): void {
    let m: ServerFrame;
    try {
      if (data instanceof ArrayBuffer) m = fromBinary(ServerFrameSchema, new Uint8Array(data), { readUnknownFields: false });
      else if (typeof data === 'string') m = fromJsonString(ServerFrameSchema, data, { ignoreUnknownFields: true });
      else return;
    } catch {
      return;
    }
    const f = m.frame;
    switch (f.case) {
      case 'welcome':
        this.onWelcome(f.value);
        return;
      case 'event':
        this.onEvent(f.value);
        return;
      case 'joined': {
        const j = f.value;
        const t = this.tables.get(j.table);
        if (!t) return;
        t.replaying = false;
        this.listeners.joined?.(j.table, j.seat ?? null, j.replayed, j.historyTrimmed);
        this.resendPending(j.table);
        return;
      }
      case 'sheet':
        this.listeners.sheet?.(f.value.table, sheetUpdateOf(f.value.update));
        return;
      case 'lobbyView':
        this.listeners.lobbyView?.(lobbyViewOf(f.value));
        return;
      case 'lobbyUpdate':
        this.listeners.lobbyUpdate?.(lobbyUpdateOf(f.value));
        return;
      case 'ack':
        this.pending.delete(m.ref);
        this.listeners.ack?.(m.ref, f.value.cmd);
        return;
      case 'pong':
        this.setSkew(f.value.serverTime);
        return;
      case 'error':
        this.onError(m.ref, f.value);
        return;
      case 'balance':
        this.listeners.balance?.(balanceOf(f.value.balance), f.value.entry ? ledgerItemOf(f.value.entry) : null);
        return;
    }
  }

  private onWelcome(w: Welcome): void {
    this.player = { id: w.player?.id ?? '', name: w.player?.name ?? '', guest: w.player?.guest ?? false };
    this.authed = true;
    this.attempt = 0;
    this.setSkew(w.serverTime);
    this.setStatus('open');
    this.listeners.welcome?.(this.player, w.stakeLadder.map(Number));
    if (this.lobby) this.send(lobbyFrame(true));
    for (const t of this.tables.keys()) this.sendJoin(t);
  }

  private onEvent(e: EventFrame): void {
    const f = this.tables.get(e.table);
    if (!f) return;
    const id = e.id;
    if (id && f.lastEventId && compareStreamIds(id, f.lastEventId) <= 0) return; // seen already
    if (id) f.lastEventId = id;
    const ev = tableEvent(e.table, id, e.event);
    this.listeners.event?.(e.table, ev, !f.replaying);
    // Your legal moves ride on the frame of the event they follow.
    if (e.legal) this.listeners.event?.(e.table, legalEvent(ev, e.legal), !f.replaying);
  }

  private onError(ref: string, w: WireError): void {
    // The answer to the join of a table given up meanwhile (e.g. a link the
    // HTTP API already said names no table): nothing to tell anyone.
    if (ref !== '' && this.forgottenJoins.delete(ref)) return;
    const e: ServerError = { code: w.code, message: w.message, ref };
    // An error about a followed table itself (table_gone) names it.
    let table: string | null = w.table !== '' && this.tables.has(w.table) ? w.table : null;
    for (const [t, f] of this.tables) {
      if (f.joinRef !== '' && f.joinRef === e.ref) {
        table = t;
        e.join = true;
      }
    }
    const p = this.pending.get(e.ref);
    if (p) {
      table = p.table;
      this.pending.delete(e.ref);
    }
    if (table !== null && e.code === 'history_trimmed') {
      // What we missed is gone: join afresh; the table sends a full view.
      const f = this.tables.get(table);
      if (f) {
        f.lastEventId = '';
        this.sendJoin(table);
        return;
      }
    }
    this.listeners.error?.(e, table);
  }

  /** After a re-join: commands the old socket never got an ack for go again, same key. */
  private resendPending(table: string): void {
    for (const p of this.pending.values()) if (p.table === table) this.send(p.frame);
  }

  private setSkew(t: Timestamp | undefined): void {
    if (t) this.skew = timestampMs(t) - this.clock.now();
  }
}

function lobbyFrame(watch: boolean): ClientFrame {
  return create(ClientFrameSchema, { frame: { case: 'lobby', value: { watch } } });
}
