// What every browser test shares: where Pulka runs, launching Debian's
// Chromium through playwright-core, browser contexts for players, the
// test-only probes put into each page, and screenshots at both sizes.

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** The gateway under test (scripts/browser-test.sh starts one with bin/pulka-local). */
export const BASE_URL = requiredBase();

function requiredBase(): string {
  const u = process.env.PULKA_E2E_BASE_URL;
  if (!u) {
    throw new Error('PULKA_E2E_BASE_URL is not set: run `make browser-test` (scripts/browser-test.sh starts Pulka and sets it)');
  }
  return u.replace(/\/+$/, '');
}

/** Screenshots, metrics and logs of the run (git-ignored). */
export const OUT_DIR = process.env.PULKA_E2E_OUT ?? join(import.meta.dirname, 'out');

const CHROMIUM = process.env.PULKA_E2E_CHROMIUM ?? '/usr/bin/chromium';

// Debian's Chromium, never a downloaded browser. playwright-core's launch()
// gives every browser a new, empty user-data-dir of its own.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 360, height: 740 };

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** One measured table event: ms from the frame's arrival. */
export interface ApplySample {
  /** The WebSocket handler returned (parse, decode, reduce). */
  sync: number;
  /** The DOM had changed (Preact's render done); −1: the event changed nothing on screen. */
  dom: number;
  /** The next animation frame began. */
  frame: number;
  /** That frame's rendering was done (a task queued from the frame callback ran). */
  painted: number;
}

/** What the test-only init script records in each page (window.__e2e). */
export interface Probe {
  rejections: string[];
  applies: ApplySample[];
  measuring: boolean;
  /** performance.now() when the lobby first listed a table (ms after navigation start). */
  lobbyListedAt: number;
}

/**
 * The init script every test page gets. It wraps the page's WebSocket to time
 * each table event from the frame's arrival to the screen, and watches for a
 * refusal message. It is test-only: the app's code is not changed.
 */
function installProbe(): void {
  const probe: Probe = { rejections: [], applies: [], measuring: true, lobbyListedAt: -1 };
  (window as unknown as { __e2e: Probe }).__e2e = probe;

  const watch = new MutationObserver(() => {
    const r = document.querySelector('[data-testid="rejection"]');
    if (r?.textContent && probe.rejections[probe.rejections.length - 1] !== r.textContent) probe.rejections.push(r.textContent);
    if (probe.lobbyListedAt < 0 && document.querySelector('[data-testid="table-list"] li')) {
      probe.lobbyListedAt = performance.mark('pulka:lobby-listed').startTime;
    }
  });
  watch.observe(document, { subtree: true, childList: true });

  type Handler = ((this: WebSocket, ev: MessageEvent) => unknown) | null;
  const Native = window.WebSocket;
  class Probed extends Native {
    private handler: Handler = null;
    override get onmessage(): Handler {
      return this.handler;
    }
    override set onmessage(h: Handler) {
      this.handler = h;
      if (h === null) {
        super.onmessage = null;
        return;
      }
      super.onmessage = (ev: MessageEvent) => {
        const data: unknown = ev.data;
        // An event frame: a binary ServerFrame whose first field is its
        // event member (field 13, length-delimited: tag byte 0x6a).
        if (!probe.measuring || !(data instanceof ArrayBuffer) || new Uint8Array(data)[0] !== 0x6a) {
          h.call(this, ev);
          return;
        }
        const t0 = performance.now();
        let dom = -1;
        const mo = new MutationObserver(() => {
          if (dom < 0) dom = performance.now();
        });
        mo.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
        h.call(this, ev);
        const sync = performance.now();
        requestAnimationFrame(() => {
          const frame = performance.now();
          mo.disconnect();
          const ch = new MessageChannel();
          ch.port1.onmessage = () => {
            const painted = performance.now();
            probe.applies.push({ sync: sync - t0, dom: dom < 0 ? -1 : dom - t0, frame: frame - t0, painted: painted - t0 });
          };
          ch.port2.postMessage(0);
        });
      };
    }
  }
  window.WebSocket = Probed;
}

export interface ContextOptions {
  viewport?: { width: number; height: number };
  /** The interface language (pulka.lang); null keeps the default (Georgian). */
  lang?: 'en' | 'ka' | 'ru' | 'tr' | null;
  /** A session token to start signed in with (the gateway's cookie). */
  token?: string;
}

export async function newContext(browser: Browser, opts: ContextOptions = {}): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: opts.viewport ?? DESKTOP, baseURL: BASE_URL });
  const lang = opts.lang === undefined ? 'en' : opts.lang;
  if (lang !== null) {
    await ctx.addInitScript((l: string) => {
      localStorage.setItem('pulka.lang', l);
    }, lang);
  }
  await ctx.addInitScript(installProbe);
  if (opts.token) await ctx.addCookies([{ name: 'pulka_session', value: opts.token, url: BASE_URL, httpOnly: true }]);
  return ctx;
}

/** A page that fails the test on any uncaught error of the app. */
export async function newPage(ctx: BrowserContext, errors: string[]): Promise<Page> {
  const page = await ctx.newPage();
  page.on('pageerror', (e) => errors.push(`${e.name}: ${e.message}`));
  // PULKA_E2E_DEBUG=1 writes every WebSocket frame of every page to out/ws-<n>.log.
  if (process.env.PULKA_E2E_DEBUG) {
    mkdirSync(OUT_DIR, { recursive: true });
    const file = join(OUT_DIR, `ws-${String(++pages)}.log`);
    page.on('websocket', (ws) => {
      const log = (dir: string, payload: string | Buffer) => appendFileSync(file, `${new Date().toISOString()} ${dir} ${String(payload)}\n`);
      ws.on('framesent', (f) => log('>', f.payload));
      ws.on('framereceived', (f) => log('<', f.payload));
      ws.on('close', () => log('x', 'closed'));
    });
  }
  return page;
}

let pages = 0;

export async function probe(page: Page): Promise<Probe> {
  return page.evaluate(() => (window as unknown as { __e2e: Probe }).__e2e);
}

/** Signs in as a guest through the entry screen and waits for the lobby. */
export async function signInAsGuest(page: Page): Promise<{ id: string; name: string }> {
  await page.goto('/');
  await page.getByTestId('entry-submit').click();
  await page.getByTestId('create-table-open').waitFor();
  return me(page);
}

/**
 * Registers a new account (a name from prefix and the clock) through the
 * entry screen and waits for the lobby.
 */
export async function registerAccount(page: Page, prefix: string): Promise<{ id: string; name: string }> {
  await page.goto('/');
  await page.getByTestId('entry-tab-register').click();
  const form = page.getByTestId('entry-form-register');
  await form.locator('input[name="username"]').fill(`${prefix}${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`);
  await form.locator('input[name="password"]').fill('a long enough passphrase');
  await page.getByTestId('entry-submit').click();
  try {
    await page.getByTestId('create-table-open').waitFor({ timeout: 15_000 });
  } catch (e) {
    const said = await page.getByTestId('entry-form-register').textContent().catch(() => '(no form)');
    throw new Error(`registration did not reach the lobby; the form says: ${said ?? ''}`, { cause: e });
  }
  return me(page);
}

export async function me(page: Page): Promise<{ id: string; name: string }> {
  const res = await page.request.get('/api/v1/me');
  if (!res.ok()) throw new Error(`GET /api/v1/me: ${res.status()}`);
  const d = (await res.json()) as { player?: { id?: string; name?: string } };
  return { id: d.player?.id ?? '', name: d.player?.name ?? '' };
}

/** Waits until the browser has drawn the current DOM (two animation frames). */
export async function settled(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
}

/**
 * Saves <dir>/<name>-desktop.png (1280×800) and <name>-phone.png (360×740)
 * and puts the page back at its own size.
 */
export async function shoot(page: Page, dir: string, name: string): Promise<void> {
  const path = join(OUT_DIR, dir);
  mkdirSync(path, { recursive: true });
  const own = page.viewportSize();
  for (const [label, vp] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(vp);
    await settled(page);
    await page.screenshot({ path: join(path, `${name}-${label}.png`) });
  }
  if (own) await page.setViewportSize(own);
}

/** Writes a JSON result of the run under out/ (the numbers docs/benchmarks.md quotes). */
export function saveJSON(name: string, value: unknown): void {
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(join(OUT_DIR, name), JSON.stringify(value, null, 2) + '\n');
}

/** A small seeded generator (mulberry32), so a failing run can be repeated with PULKA_E2E_SEED. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function runSeed(): number {
  const s = Number(process.env.PULKA_E2E_SEED);
  return Number.isInteger(s) && s > 0 ? s : Math.floor(Math.random() * 2 ** 31) + 1;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
}

export function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] ?? Number.NaN) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

/** One entry of GET /api/v1/me/games: a finished game with its sheet and standings. */
export interface FinishedGame {
  game_id?: string;
  table_id?: string;
  sheet?: import('./sheet').RawSheet;
  standings?: { standings?: { place?: number; seat?: number; player_id?: string; total?: string | number }[] };
}

/**
 * The server's record of the finished game at tableId, from the history of
 * the page's player (the scoring service writes it when the game ends, so
 * it is waited for).
 */
export async function finishedGame(page: Page, tableId: string, timeoutMs = 20_000): Promise<FinishedGame> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await page.request.get('/api/v1/me/games?limit=20');
    if (res.ok()) {
      const d = (await res.json()) as { games?: FinishedGame[] };
      const g = (d.games ?? []).find((x) => x.table_id === tableId);
      if (g) return g;
    }
    if (Date.now() > until) throw new Error(`the game of table ${tableId} is not in /api/v1/me/games after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The table id of the page's /t/<id> route. */
export function tableIdOf(page: Page): string {
  const m = /\/t\/([^/?#]+)/.exec(new URL(page.url()).pathname);
  if (!m?.[1]) throw new Error(`not at a table: ${page.url()}`);
  return decodeURIComponent(m[1]);
}

/**
 * The WCAG contrast ratio of an element's text against the background it is
 * drawn on (the nearest ancestor with an opaque background colour).
 */
export async function textContrast(page: Page, selector: string): Promise<number> {
  return page.$eval(selector, (el) => {
    const rgb = (css: string): [number, number, number, number] => {
      const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?/.exec(css);
      return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])] : [0, 0, 0, 0];
    };
    const lum = ([r, g, b]: [number, number, number, number]) => {
      const ch = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b);
    };
    const fg = rgb(getComputedStyle(el).color);
    let bg: [number, number, number, number] = [255, 255, 255, 1];
    for (let e: Element | null = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c[3] >= 0.99) {
        bg = c;
        break;
      }
    }
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x) as [number, number];
    return (a + 0.05) / (b + 0.05);
  });
}
