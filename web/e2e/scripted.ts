// Scripted players over the gateway's real HTTP API and WebSocket, from
// Node: guest sessions, a table, and four seats whose every bid and card
// the test chooses. Their sockets ask for no subprotocol, so the gateway
// speaks the protocol's JSON to them (docs/protocol.md, "Encodings"): frames
// are read as raw protobuf JSON here, not with the client's decoder, so that
// the screen is checked against the server alone.

import { BASE_URL } from './harness';
import type { RawSheet } from './sheet';

export interface Guest {
  token: string;
  id: string;
  name: string;
}

async function api<T>(method: string, path: string, token: string | null, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(BASE_URL + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${String(res.status)} ${text}`);
  return (text ? JSON.parse(text) : {}) as T;
}

export async function newGuest(): Promise<Guest> {
  const s = await api<{ token: string; player: { id: string; name: string } }>('POST', '/api/v1/session/guest', null, {});
  return { token: s.token, id: s.player.id, name: s.player.name };
}

/** TableSettings as protobuf JSON (pulka.lobby.v1). */
export type RawSettings = Record<string, unknown>;

export async function createTable(host: Guest, name: string, settings: RawSettings, password = ''): Promise<string> {
  const d = await api<{ table_id: string }>('POST', '/api/v1/tables', host.token, { name, settings, password, sit_down: true });
  return d.table_id;
}

export async function sit(g: Guest, table: string, seat: number, password = ''): Promise<void> {
  await api('POST', `/api/v1/tables/${encodeURIComponent(table)}/sit`, g.token, { seat, password });
}

export async function tableStatus(g: Guest, table: string): Promise<string> {
  const d = await api<{ status?: string }>('GET', `/api/v1/tables/${encodeURIComponent(table)}`, g.token);
  return d.status ?? '';
}

/** A table event as the gateway sends it: the oneof case is the one key besides the envelope's. */
export type RawEvent = Record<string, unknown> & {
  seq?: string;
  visibility?: { audience?: string; seat?: number };
};

const ENVELOPE = new Set(['seq', 'table_id', 'game_id', 'occurred_at', 'visibility', 'caused_by']);

export function kindOf(ev: RawEvent): string {
  return Object.keys(ev).find((k) => !ENVELOPE.has(k)) ?? '';
}

export function body(ev: RawEvent): Record<string, unknown> {
  const b = ev[kindOf(ev)];
  return typeof b === 'object' && b !== null ? (b as Record<string, unknown>) : {};
}

interface Waiter {
  check: () => boolean;
  resolve: () => void;
}

/** One player's WebSocket, following one table. */
export class WsSeat {
  readonly events: RawEvent[] = [];
  sheet: { version: number; sheet: RawSheet } | null = null;
  readonly errors: string[] = [];
  private readonly ws: WebSocket;
  private waiters: Waiter[] = [];
  private joined = false;
  private refs = 0;

  private constructor(
    readonly guest: Guest,
    readonly table: string,
  ) {
    this.ws = new WebSocket(BASE_URL.replace(/^http/, 'ws') + '/ws');
    this.ws.onopen = () => {
      this.send({ hello: { token: guest.token } });
      this.send({ ref: 'join', join: { table } });
    };
    this.ws.onmessage = (e: MessageEvent) => this.onFrame(String(e.data));
    this.ws.onclose = (e: CloseEvent) => this.errors.push(`socket closed ${String(e.code)}`);
  }

  static async open(guest: Guest, table: string): Promise<WsSeat> {
    const s = new WsSeat(guest, table);
    await s.until(() => s.joined, 'joined');
    return s;
  }

  close(): void {
    this.ws.onclose = null;
    this.ws.close(1000);
  }

  send(frame: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(frame));
  }

  /**
   * A table command with its own idempotency key: command is the
   * TableCommand's member in protobuf JSON, e.g. {bid: {tricks: 1}}.
   */
  command(command: Record<string, unknown>): void {
    this.send({ command: { ...command, table: this.table, cmd: `e2e-${String(++this.refs)}-${String(Date.now())}` } });
  }

  private onFrame(text: string): void {
    const f = JSON.parse(text) as {
      joined?: unknown;
      event?: { event?: RawEvent; legal?: Record<string, unknown> & { seat?: number } };
      sheet?: { update?: { version?: string; sheet?: RawSheet } };
      error?: { code?: string; message?: string };
    };
    if (f.joined) this.joined = true;
    if (f.event?.event) this.events.push(f.event.event);
    // Your legal moves ride on the frame of the event before them: the
    // table's legal_moves event, as wire.LegalEvent rebuilds it.
    if (f.event?.event && f.event.legal) {
      const h = f.event.event;
      this.events.push({
        seq: String(Number(h.seq ?? 0) + 1),
        table_id: h.table_id,
        game_id: h.game_id,
        occurred_at: h.occurred_at,
        caused_by: h.caused_by,
        visibility: { audience: 'AUDIENCE_SEAT', seat: f.event.legal.seat ?? 0 },
        legal_moves: f.event.legal,
      });
    }
    if (f.sheet) {
      const v = Number(f.sheet.update?.version ?? 0);
      if (!this.sheet || v > this.sheet.version) this.sheet = { version: v, sheet: f.sheet.update?.sheet ?? {} };
    }
    if (f.error) this.errors.push(`${f.error.code ?? ''}: ${f.error.message ?? ''}`);
    this.waiters = this.waiters.filter((w) => {
      if (!w.check()) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once cond holds (checked now and after every frame). */
  async until(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    if (cond()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.check !== cond);
        const refused = this.events.filter((e) => kindOf(e) === 'move_rejected').map((e) => JSON.stringify(body(e)));
        reject(new Error(`waited ${String(timeoutMs)} ms for ${what}; errors ${JSON.stringify(this.errors)}; refusals ${JSON.stringify(refused)}`));
      }, timeoutMs);
      this.waiters.push({
        check: cond,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /** The events of hand h so far (from its HandStarted on). */
  handEvents(h: number): RawEvent[] {
    const start = this.events.findIndex((e) => kindOf(e) === 'hand_started' && Number(body(e).hand_index ?? 0) === h);
    if (start < 0) return [];
    const rest = this.events.slice(start + 1);
    const next = rest.findIndex((e) => kindOf(e) === 'hand_started');
    return [this.events[start] as RawEvent, ...(next < 0 ? rest : rest.slice(0, next))];
  }
}
