// The gateway's HTTP API under /api/v1: sessions and the lobby commands.
// The session is the HttpOnly cookie the gateway sets; the token in the
// answer is kept only in memory, for the WebSocket's hello when the cookie
// does not reach it (it is never written to storage).

import type { Player, TableSettings, TableSummary } from './types';
import { settingsJson, summaryFromJson } from './view';
import { balanceFromJson, ledgerItemFromJson, type Balance, type LedgerItem } from '../wallet/wallet';

// The session answers and errors are small JSON objects of the HTTP API
// itself (docs/protocol.md, "HTTP API"); the messages of proto/ in them are
// read by the generated code (view.ts).
type Obj = Record<string, unknown>;

function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Session {
  player: Player;
  token: string;
}

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** Paths of the API (services/gateway/internal/httpapi), in one place. */
const V1 = '/api/v1';
const tbl = (id: string) => `${V1}/tables/${encodeURIComponent(id)}`;
export const PATHS = {
  me: `${V1}/me`,
  session: `${V1}/session`,
  guest: `${V1}/session/guest`,
  login: `${V1}/login`,
  register: `${V1}/register`,
  logout: `${V1}/logout`,
  tables: `${V1}/tables`,
  table: tbl,
  sit: (id: string) => `${tbl(id)}/sit`,
  stand: (id: string) => `${tbl(id)}/stand`,
  leave: (id: string) => `${tbl(id)}/leave`,
  bots: (id: string) => `${tbl(id)}/bots`,
  wallet: `${V1}/me/wallet`,
  ledger: `${V1}/me/wallet/ledger`,
  dailyBonus: `${V1}/me/wallet/daily-bonus`,
} as const;

/** A page of the ledger, newest first; nextBefore is '' on the last one. */
export interface LedgerPage {
  entries: LedgerItem[];
  nextBefore: string;
}

function idempotencyKey(): string {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/** Failures after which sending the same lobby command again is safe and may help. */
function retryable(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 0 || e.status === 503 || e.status === 504);
}

export class Api {
  constructor(private readonly fetcher: Fetch = (i, o) => fetch(i, o)) {}

  private async call(method: string, path: string, body?: unknown, key?: string): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (key) headers['Idempotency-Key'] = key;
    const init: RequestInit = { method, credentials: 'same-origin', headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    let res: Response;
    try {
      res = await this.fetcher(path, init);
    } catch {
      throw new ApiError(0, 'network', 'network error');
    }
    let data: unknown = null;
    const text = await res.text();
    if (text !== '') {
      try {
        data = JSON.parse(text);
      } catch {
        data = null;
      }
    }
    if (!res.ok) {
      const e = obj(obj(data).error);
      const ra = res.headers.get('Retry-After');
      throw new ApiError(res.status, str(e.code) || `http_${res.status}`, str(e.message) || res.statusText, ra ? Number(ra) : null);
    }
    return obj(data);
  }

  /**
   * A lobby command: one idempotency key for the command, so that the one
   * retry after a lost answer can never apply it twice.
   */
  private async command(path: string, body: unknown): Promise<Record<string, unknown>> {
    const key = idempotencyKey();
    try {
      return await this.call('POST', path, body, key);
    } catch (e) {
      if (!retryable(e)) throw e;
      return this.call('POST', path, body, key);
    }
  }

  private session(d: Record<string, unknown>, token = ''): Session {
    const p = obj(d.player);
    return {
      player: { id: str(p.id), name: str(p.name), guest: p.guest === true },
      token: str(d.token) || token,
    };
  }

  /** The session the cookie holds, or null. Asked of /session, which
   * answers "none" with 204, not a 401 logged in the console on every load. */
  async current(): Promise<Session | null> {
    try {
      const d = await this.call('GET', PATHS.session);
      return Object.keys(d).length === 0 ? null : this.session(d);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return null;
      throw e;
    }
  }

  async guest(): Promise<Session> {
    return this.session(await this.call('POST', PATHS.guest, {}));
  }

  async login(username: string, password: string): Promise<Session> {
    return this.session(await this.call('POST', PATHS.login, { username, password }));
  }

  async register(username: string, password: string): Promise<Session> {
    return this.session(await this.call('POST', PATHS.register, { username, password }));
  }

  async logout(): Promise<void> {
    await this.call('POST', PATHS.logout, {});
  }

  /** One table, private ones included (the id is the link). */
  async table(id: string): Promise<TableSummary> {
    return summaryFromJson((await this.call('GET', PATHS.table(id))));
  }

  /** Creates a table and answers its id. */
  async createTable(name: string, settings: TableSettings, password: string, sitDown: boolean): Promise<string> {
    const d = await this.command(PATHS.tables, { name, settings: settingsJson(settings), password, sit_down: sitDown });
    return str(d.table_id);
  }

  async sit(id: string, seat: number, password: string): Promise<void> {
    await this.command(PATHS.sit(id), { seat, password });
  }

  async stand(id: string): Promise<void> {
    await this.command(PATHS.stand(id), {});
  }

  async leave(id: string): Promise<void> {
    await this.command(PATHS.leave(id), {});
  }

  async fillWithBots(id: string): Promise<void> {
    await this.command(PATHS.bots(id), {});
  }

  /** The account's Domino Coin balance (guests: ApiError account_required). */
  async balance(): Promise<Balance> {
    return balanceFromJson(await this.call('GET', PATHS.wallet));
  }

  /** A page of the account's ledger, older than before ('' for the newest). */
  async ledger(before = '', limit = 50): Promise<LedgerPage> {
    const q = new URLSearchParams({ limit: String(limit) });
    if (before) q.set('before', before);
    const d = await this.call('GET', `${PATHS.ledger}?${q.toString()}`);
    const entries = Array.isArray(d.entries) ? d.entries.map((e) => ledgerItemFromJson(e)) : [];
    return { entries, nextBefore: str(d.next_before) };
  }

  /** Claims today's bonus: the balance after it and its entry (409 bonus_claimed when claimed). */
  async claimDailyBonus(): Promise<{ balance: Balance; entry: LedgerItem }> {
    const d = await this.call('POST', PATHS.dailyBonus, {});
    return { balance: balanceFromJson(d.balance ?? {}), entry: ledgerItemFromJson(d.entry ?? {}) };
  }
}
