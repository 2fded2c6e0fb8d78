// The score sheet twice: as the server keeps it (pulka.scoring.v1.Sheet in
// protobuf's JSON, read here on its own, not with the client's decoder) and
// as the screen shows it (read from the DOM). compareSheet lists every
// number, mark, colour and strike where they differ.

import type { Page } from 'playwright-core';

export interface RawCell {
  seat?: number;
  bid?: number;
  tricks?: number;
  points?: string | number;
  penalty?: string | number;
  outcome?: string;
  struck?: boolean;
}
export interface RawHand {
  hand_index?: number;
  cards?: number;
  cells?: RawCell[];
}
export interface RawPulkaSeat {
  seat?: number;
  premia?: string | number;
  moshla?: string | number;
  total?: string | number;
}
export interface RawPulka {
  pulka_index?: number;
  finished?: boolean;
  hands?: RawHand[];
  totals?: RawPulkaSeat[];
}
export interface RawSheet {
  table_id?: string;
  game_id?: string;
  settings?: { game?: string };
  players?: { seat?: number; player_id?: string; display_name?: string }[];
  pulkas?: RawPulka[];
  totals?: { seat?: number; total?: string | number; on_course?: boolean }[];
  current_hand?: number;
}

/** protojson leaves zeros out and writes 64-bit numbers as strings. */
export function n(v: string | number | undefined): number {
  return v === undefined ? 0 : Number(v);
}

export interface ScreenCell {
  bid: string;
  score: string;
  outcome: string;
  struck: boolean;
  color: string;
}
export interface ScreenSheet {
  rows: { hand: number; current: boolean }[];
  cells: Record<string, ScreenCell>;
  sigma: Record<string, { total: string; extra: string; extraKind: string; extraColor: string }>;
  sul: Record<string, { total: string; course: string; color: string }>;
  players: Record<string, { course: string; nameColor: string }>;
}

/** Reads the sheet drawn inside root (a CSS selector) from the DOM. */
export async function readScreenSheet(page: Page, root: string): Promise<ScreenSheet> {
  return page.$eval(root, (el) => {
    const own = (e: Element): string => {
      // The cell's own text: a struck score is inside <s>; marks and
      // screen-reader words are in spans of their own.
      let out = '';
      for (const c of Array.from(e.childNodes)) {
        if (c.nodeType === Node.TEXT_NODE) out += c.textContent ?? '';
        else if (c instanceof HTMLElement && c.tagName === 'S') out += c.textContent;
      }
      return out.trim();
    };
    const id = (e: Element) => e.getAttribute('data-testid') ?? '';
    const color = (e: Element | null) => (e ? getComputedStyle(e).color : '');
    const out: ScreenSheet = { rows: [], cells: {}, sigma: {}, sul: {}, players: {} };
    for (const tr of Array.from(el.querySelectorAll('tr[data-testid^="sheet-hand-"]'))) {
      out.rows.push({ hand: Number(id(tr).slice('sheet-hand-'.length)), current: tr.classList.contains('current') });
    }
    for (const td of Array.from(el.querySelectorAll('td[data-testid^="sheet-score-"]'))) {
      const key = id(td).slice('sheet-score-'.length);
      const bid = el.querySelector(`[data-testid="sheet-bid-${key}"]`);
      out.cells[key] = {
        bid: bid ? own(bid) : '',
        score: own(td),
        outcome: td.getAttribute('data-outcome') ?? '',
        struck: td.querySelector('s') !== null && td.classList.contains('struck'),
        color: color(td),
      };
    }
    for (const td of Array.from(el.querySelectorAll('td[data-testid^="sheet-sigma-"]'))) {
      const extra = td.querySelector('.extra');
      out.sigma[id(td).slice('sheet-sigma-'.length)] = {
        total: td.querySelector('.total')?.textContent.trim() ?? '',
        extra: extra?.textContent.trim() ?? '',
        extraKind: extra ? (extra.classList.contains('premia') ? 'premia' : extra.classList.contains('moshla') ? 'moshla' : '?') : '',
        extraColor: color(extra),
      };
    }
    for (const td of Array.from(el.querySelectorAll('td[data-testid^="sheet-sul-"]'))) {
      out.sul[id(td).slice('sheet-sul-'.length)] = { total: own(td), course: td.getAttribute('data-course') ?? '', color: color(td) };
    }
    for (const th of Array.from(el.querySelectorAll('th[data-testid^="sheet-player-"]'))) {
      const course = /course-(\w+)/.exec(th.className)?.[1] ?? '';
      out.players[id(th).slice('sheet-player-'.length)] = { course, nameColor: color(th.querySelector('.name')) };
    }
    return out;
  });
}

const MINUS = '\u2212';

/** A hand cell as written: whole points, "−900". */
export function parseWhole(s: string): number {
  const m = new RegExp(`^(${MINUS})?(\\d+)$`).exec(s);
  if (!m?.[2]) return Number.NaN;
  return (m[1] ? -1 : 1) * Number(m[2]);
}

/** The /100 notation of Σ and sul: "9.5" = 950, "−0.4" = −40, "0.05" = 5; "+2.5" too. */
export function parseHundredths(s: string): number {
  const m = new RegExp(`^([+]|${MINUS})?(\\d+)(?:\\.(\\d{1,2}))?$`).exec(s);
  if (!m?.[2]) return Number.NaN;
  const frac = (m[3] ?? '').padEnd(2, '0');
  return (m[1] === MINUS ? -1 : 1) * (Number(m[2]) * 100 + Number(frac || '0'));
}

export type Hue = 'green' | 'amber' | 'red' | 'other';

/** What a person would call the colour: green (made), amber (missed), red (khishti, off course). */
export function hueOf(css: string): Hue {
  const m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(css);
  if (!m) return 'other';
  const [r, g, b] = [Number(m[1]) / 255, Number(m[2]) / 255, Number(m[3]) / 255];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  if (max - min < 0.25) return 'other'; // black, grey, white: no colour
  let h: number;
  if (max === r) h = (60 * ((g - b) / (max - min)) + 360) % 360;
  else if (max === g) h = 60 * ((b - r) / (max - min)) + 120;
  else h = 60 * ((r - g) / (max - min)) + 240;
  if (h < 15 || h >= 345) return 'red';
  if (h >= 25 && h < 60) return 'amber';
  if (h >= 90 && h < 170) return 'green';
  return 'other';
}

const OUTCOME_HUE: Record<string, Hue> = { made: 'green', missed: 'amber', khishti: 'red' };

function outcomeName(o: string | undefined): string {
  return (o ?? 'HAND_OUTCOME_UNSPECIFIED').replace('HAND_OUTCOME_', '').toLowerCase();
}

export interface CompareOptions {
  game: 'classic' | 'japanese';
  /** The game is over: totals carry no course colour. */
  over: boolean;
}

/** Every difference between the server's sheet and the screen's; empty when they agree. */
export function compareSheet(server: RawSheet, screen: ScreenSheet, opts: CompareOptions): string[] {
  const diffs: string[] = [];
  const seats = (server.players ?? []).length || (opts.game === 'classic' ? 4 : 2);
  const want = (what: string, got: unknown, exp: unknown) => {
    if (got !== exp) diffs.push(`${what}: screen ${JSON.stringify(got)}, server ${JSON.stringify(exp)}`);
  };
  const onScreen = new Set(screen.rows.filter((r) => !r.current).map((r) => r.hand));
  const served = new Set<number>();
  for (const p of server.pulkas ?? []) {
    for (const h of p.hands ?? []) {
      const hi = n(h.hand_index);
      served.add(hi);
      if (!onScreen.has(hi)) {
        diffs.push(`hand ${hi + 1} is on the server's sheet but not on the screen (or is drawn as the current hand)`);
        continue;
      }
      for (let seat = 0; seat < seats; seat++) {
        const c = (h.cells ?? []).find((x) => n(x.seat) === seat);
        const s = screen.cells[`${hi}-${seat}`];
        const at = `hand ${hi + 1} seat ${seat}`;
        if (!c || !s) {
          diffs.push(`${at}: cell missing (server ${c ? 'has' : 'lacks'} it, screen ${s ? 'has' : 'lacks'} it)`);
          continue;
        }
        const outcome = outcomeName(c.outcome);
        want(`${at} outcome`, s.outcome, outcome);
        if (opts.game === 'classic') {
          want(`${at} bid`, s.bid, n(c.bid) === 0 ? '–' : String(n(c.bid)));
          const written = outcome === 'khishti' ? n(c.penalty) : n(c.points);
          want(`${at} score`, parseWhole(s.score), written);
          want(`${at} struck`, s.struck, c.struck === true);
          const hue = OUTCOME_HUE[outcome];
          if (hue) want(`${at} colour (${s.color})`, hueOf(s.color), hue);
        } else {
          want(`${at} tricks`, s.bid, String(n(c.tricks)));
          want(`${at} points`, parseWhole(s.score), n(c.points));
        }
      }
    }
    if (opts.game === 'classic') {
      const pi = n(p.pulka_index);
      for (let seat = 0; seat < seats; seat++) {
        const t = (p.totals ?? []).find((x) => n(x.seat) === seat);
        const s = screen.sigma[`${pi}-${seat}`];
        const at = `pulka ${pi + 1} seat ${seat} Σ`;
        if (!s) {
          diffs.push(`${at}: missing on the screen`);
          continue;
        }
        want(at, parseHundredths(s.total), n(t?.total));
        const premia = n(t?.premia);
        const moshla = n(t?.moshla);
        if (premia !== 0) {
          want(`${at} premia`, parseHundredths(s.extra.replace(/[()]/g, '')), premia);
          want(`${at} premia kind`, s.extraKind, 'premia');
          want(`${at} premia colour (${s.extraColor})`, hueOf(s.extraColor), 'green');
        } else if (moshla !== 0) {
          want(`${at} moshla`, parseHundredths(s.extra.replace(/[()]/g, '')), moshla);
          want(`${at} moshla kind`, s.extraKind, 'moshla');
          want(`${at} moshla colour (${s.extraColor})`, hueOf(s.extraColor), 'red');
        } else {
          want(`${at} extra`, s.extra, '');
        }
      }
    }
  }
  for (const hi of onScreen) if (!served.has(hi)) diffs.push(`hand ${hi + 1} is on the screen but not on the server's sheet`);
  for (let seat = 0; seat < seats; seat++) {
    const t = (server.totals ?? []).find((x) => n(x.seat) === seat);
    const s = screen.sul[String(seat)];
    const at = `seat ${seat} total`;
    if (!s) {
      diffs.push(`${at}: missing on the screen`);
      continue;
    }
    const total = opts.game === 'classic' ? parseHundredths(s.total) : parseWhole(s.total);
    want(at, total, n(t?.total));
    if (opts.game === 'classic' && !opts.over) {
      const course = t?.on_course === true ? 'on' : 'off';
      want(`${at} course`, s.course, course);
      want(`${at} colour (${s.color})`, hueOf(s.color), course === 'on' ? 'green' : 'red');
      want(`seat ${seat} name colour`, hueOf(screen.players[String(seat)]?.nameColor ?? ''), course === 'off' ? 'red' : 'other');
    } else {
      want(`${at} course`, s.course, 'neutral');
      want(`${at} colour (${s.color})`, hueOf(s.color), 'other');
    }
  }
  return diffs;
}
