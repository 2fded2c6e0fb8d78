// The gateway's HTTP API (docs/protocol.md): sessions and the lobby
// commands. The session is an HttpOnly cookie the gateway sets; the token in
// the answer is kept only in memory, for the WebSocket's hello when the
// cookie does not reach it.

import { decodeSummary, obj, str, num } from './decode';
import { encodeSettings } from './decode';
import type { Player, TableSettings, TableSummary } from './types';

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
  balance: number | null;
}

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** Paths of the API, in one place. */
export const PATHS = {
  session: '/api/session',
  guest: '/api/session/guest',
  login: '/api/session/login',
  register: '/api/accounts',
  tables: '/api/tables',
  table: (id: string) => `/api/tables/${encodeURIComponent(id)}`,
  sit: (id: string) => `/api/tables/${encodeURIComponent(id)}/sit`,
  stand: (id: string) => `/api/tables/${encodeURIComponent(id)}/stand`,
  leave: (id: string) => `/api/tables/${encodeURIComponent(id)}/leave`,
  bots: (id: string) => `/api/tables/${encodeURIComponent(id)}/bots`,
} as const;

function commandId(): string {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

export class Api {
  constructor(private readonly fetcher: Fetch = (i, o) => fetch(i, o)) {}

  private async call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const init: RequestInit = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers = { Accept: 'application/json', 'Content-Type': 'application/json' };
      init.body = JSON.stringify(body);
    }
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

  private session(d: Record<string, unknown>): Session {
    const p = obj(d.player);
    return {
      player: { id: str(p.id), name: str(p.name), guest: p.guest === true },
      token: str(d.token),
      balance: d.balance === undefined ? null : num(d.balance),
    };
  }

  /** The current session from the cookie, or null. */
  async current(): Promise<Session | null> {
    try {
      return this.session(await this.call('GET', PATHS.session));
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 404)) return null;
      throw e;
    }
  }

  async guest(name: string): Promise<Session> {
    return this.session(await this.call('POST', PATHS.guest, name ? { name } : {}));
  }

  async login(username: string, password: string): Promise<Session> {
    return this.session(await this.call('POST', PATHS.login, { username, password }));
  }

  async register(username: string, password: string): Promise<Session> {
    return this.session(await this.call('POST', PATHS.register, { username, password }));
  }

  async logout(): Promise<void> {
    await this.call('DELETE', PATHS.session);
  }

  async table(id: string): Promise<TableSummary> {
    const d = await this.call('GET', PATHS.table(id));
    return decodeSummary(d.table ?? d);
  }

  /** Creates a table; the answer names it (and, for a private one, is how the link is learnt). */
  async createTable(name: string, settings: TableSettings, password: string, sitDown: boolean): Promise<TableSummary> {
    const d = await this.call('POST', PATHS.tables, {
      command_id: commandId(),
      name,
      settings: encodeSettings(settings),
      password,
      sit_down: sitDown,
    });
    const s = decodeSummary(d.table ?? d);
    if (!s.tableId) s.tableId = str(d.table_id);
    return s;
  }

  async sit(id: string, seat: number, password: string): Promise<void> {
    await this.call('POST', PATHS.sit(id), { command_id: commandId(), seat, password });
  }

  async stand(id: string): Promise<void> {
    await this.call('POST', PATHS.stand(id), { command_id: commandId() });
  }

  async leave(id: string): Promise<void> {
    await this.call('POST', PATHS.leave(id), { command_id: commandId() });
  }

  async fillWithBots(id: string): Promise<void> {
    await this.call('POST', PATHS.bots(id), { command_id: commandId() });
  }
}
