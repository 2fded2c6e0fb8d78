// The joker dialog in all four languages (issue 22): a classic joker led
// (the others' highest of a suit, or give the trick away) and followed
// (take or throw away), and a Japanese joker led (name the suit). The games
// are scripted: every seat is a WebSocket from Node that answers the
// server's list of legal moves (docs/protocol.md, LegalMoves), so no rule is
// written twice here. A seat holding a joker plays its highest ordinary
// card and the others their lowest, so that a holder soon wins a trick and
// leads; when a holder is to play and its joker would ask a question this
// test has not yet looked at, that seat's player opens the table in a
// 360 px browser and clicks the joker. The dialog must then speak the
// language switched to (its texts are that language's messages, not
// English, no raw key), fit the phone (no box past the viewport's edges,
// no text cut) and is saved to out/screens/joker-<case>-<lang>-phone.png.
// The dialog is closed with Escape and the seat plays an ordinary card, so
// the hand goes on until every case has been seen.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { cardCode, isJoker, parseWireCard, rankOf, type Card } from '../src/protocol/cards';
import { MESSAGES, type Lang, type MsgKey } from '../src/i18n';
import { launch, newContext, newPage, OUT_DIR, PHONE, settled } from './harness';
import { body, createTable, kindOf, newGuest, sit, tableStatus, WsSeat, type Guest, type RawEvent, type RawSettings } from './scripted';
import { rejections } from './ui';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

const LANGS: Lang[] = ['ka', 'en', 'ru', 'tr'];
const DIR = join(OUT_DIR, 'screens');

type Case = 'classic-lead' | 'classic-follow' | 'japanese-lead';

interface RawPlay {
  card?: unknown;
  declarations?: { action?: string; suit?: string }[];
}
interface RawLegal {
  seat?: number;
  phase?: string;
  trumps?: string[];
  bids?: number[];
  plays?: RawPlay[];
}

/** What the dialog shows, read from the DOM. */
interface DialogText {
  label: string;
  title: string;
  close: string;
  paragraphs: string[];
  buttons: Record<string, string>;
}

function fill(msg: string, params: Record<string, string>): string {
  return msg.replace(/\{(\w+)\}/g, (_, k: string) => params[k] ?? `{${k}}`);
}

const SUITS = { S: 'suit_S', H: 'suit_H', D: 'suit_D', C: 'suit_C' } as const satisfies Record<string, MsgKey>;

/** The texts the dialog must show in lang for the declarations on offer (button test id → text or aria-label). */
function expected(lang: Lang, c: Case, buttons: string[]): DialogText {
  const m = MESSAGES[lang];
  const want: DialogText = { label: m.joker_title, title: m.joker_title, close: m.close, paragraphs: [], buttons: {} };
  for (const id of buttons) {
    const suit = /-(S|H|D|C)$/.exec(id)?.[1] as keyof typeof SUITS | undefined;
    if (id === 'joker-take') want.buttons[id] = m.joker_take_long;
    else if (id === 'joker-discard') want.buttons[id] = m.joker_discard_long;
    else if (id.startsWith('joker-highest-') && suit) want.buttons[id] = fill(m.joker_highest_aria, { suit: m[SUITS[suit]] });
    else if (id.startsWith('joker-give-') && suit) want.buttons[id] = fill(m.joker_give_aria, { suit: m[SUITS[suit]] });
    else want.buttons[id] = `(no message for ${id})`;
  }
  if (c === 'japanese-lead') want.paragraphs.push(m.joker_name_suit);
  if (c === 'classic-lead') {
    if (buttons.some((b) => b.startsWith('joker-highest-'))) want.paragraphs.push(m.joker_highest_long);
    if (buttons.some((b) => b.startsWith('joker-give-'))) want.paragraphs.push(m.joker_give_long);
  }
  return want;
}

async function readDialog(page: Page): Promise<DialogText> {
  return page.$eval('[data-testid="joker-dialog"]', (el) => {
    const buttons: Record<string, string> = {};
    for (const b of Array.from(el.querySelectorAll('button[data-testid^="joker-"]'))) {
      // Suit buttons show a symbol and are named by their aria-label.
      buttons[b.getAttribute('data-testid') ?? ''] = (b.getAttribute('aria-label') ?? b.textContent).trim();
    }
    return {
      label: el.getAttribute('aria-label') ?? '',
      title: el.querySelector('h2')?.textContent.trim() ?? '',
      close: el.querySelector('.dialog-close')?.getAttribute('aria-label') ?? '',
      paragraphs: Array.from(el.querySelectorAll('p')).map((p) => p.textContent.trim()),
      buttons,
    };
  });
}

/** Boxes of the dialog past the viewport's edges, text cut by its box, a page wider than the phone. */
async function overflowing(page: Page): Promise<string[]> {
  return page.$eval('[data-testid="joker-dialog"]', (dialog) => {
    const out: string[] = [];
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    if (document.documentElement.scrollWidth > vw) out.push(`the page is ${String(document.documentElement.scrollWidth)} px wide in ${String(vw)}`);
    for (const el of [dialog, ...Array.from(dialog.querySelectorAll('*'))]) {
      if (el.closest('.sr-only')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const name = `${el.tagName.toLowerCase()}[${el.getAttribute('data-testid') ?? el.getAttribute('class') ?? ''}]`;
      if (r.left < -1 || r.right > vw + 1 || r.top < -1 || r.bottom > vh + 1) {
        out.push(`${name} spans x ${r.left.toFixed(0)}..${r.right.toFixed(0)}, y ${r.top.toFixed(0)}..${r.bottom.toFixed(0)} in ${String(vw)}×${String(vh)}`);
      }
      const html = el as HTMLElement;
      if (el.children.length === 0 && el.textContent.trim() && html.scrollWidth > html.clientWidth + 1 && getComputedStyle(html).display !== 'inline') {
        out.push(`${name}: text "${el.textContent.trim().slice(0, 30)}" is cut`);
      }
    }
    return out;
  });
}

/** Every text of every language a raw message key could leak as ("joker_take_long"), or an unfilled "{suit}". */
const RAW = /\b[a-z]+(?:_[a-z0-9]+)+\b|\{\w+\}/;

/**
 * The dialog open in page: in each language, its texts, its fit at 360 px,
 * and a screenshot. Answers the problems found (empty: all good).
 */
async function checkDialog(page: Page, c: Case): Promise<string[]> {
  const problems: string[] = [];
  mkdirSync(DIR, { recursive: true });
  const buttons = Object.keys((await readDialog(page)).buttons);
  if (c === 'classic-follow' && buttons.join() !== 'joker-take,joker-discard') problems.push(`${c}: buttons ${buttons.join()}`);
  if (c !== 'classic-follow' && !buttons.some((b) => b.startsWith('joker-highest-'))) problems.push(`${c}: no suit to name among ${buttons.join()}`);
  const english = expected('en', c, buttons);
  for (const lang of LANGS) {
    await page.getByTestId('lang-switch').selectOption(lang);
    await page.waitForFunction((l) => document.documentElement.lang === l, lang);
    await settled(page);
    const got = await readDialog(page);
    const want = expected(lang, c, buttons);
    const at = `${c} ${lang}`;
    if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`${at}: shows ${JSON.stringify(got)}, the messages say ${JSON.stringify(want)}`);
    const texts = [got.label, got.title, got.close, ...got.paragraphs, ...Object.values(got.buttons)];
    for (const s of texts) {
      if (!s) problems.push(`${at}: an empty text`);
      if (RAW.test(s)) problems.push(`${at}: "${s}" looks like a raw message key`);
    }
    if (lang !== 'en') {
      const en = [english.label, english.title, english.close, ...english.paragraphs, ...Object.values(english.buttons)];
      for (const s of texts) if (en.includes(s)) problems.push(`${at}: "${s}" is the English text`);
    }
    for (const o of await overflowing(page)) problems.push(`${at} 360px: ${o}`);
    await page.screenshot({ path: join(DIR, `joker-${c}-${lang}-phone.png`) });
  }
  await page.getByTestId('lang-switch').selectOption('en');
  return problems;
}

const legalOf = (e: RawEvent) => body(e) as RawLegal;

function cardOf(p: RawPlay): Card {
  const c = parseWireCard(p.card);
  if (c === null) throw new Error(`not a card: ${JSON.stringify(p.card)}`);
  return c;
}

/** The case a joker's declarations ask about, or null when it is not a question (a single declaration). */
function caseOf(p: RawPlay, japanese: boolean): Case | null {
  const ds = p.declarations ?? [];
  if (ds.length < 2) return null;
  const lead = ds.some((d) => d.action === 'JOKER_ACTION_HIGHEST' || d.action === 'JOKER_ACTION_GIVE');
  if (japanese) return lead ? 'japanese-lead' : null;
  return lead ? 'classic-lead' : 'classic-follow';
}

/**
 * Drives the scripted game until every wanted case has been checked in a
 * browser (or the time is up): each seat answers each LegalMoves event of
 * its own once.
 */
async function drive(guests: Guest[], seats: WsSeat[], table: string, wanted: Case[], japanese: boolean, errors: string[]): Promise<string[]> {
  const problems: string[] = [];
  const left = new Set(wanted);
  const answered = seats.map(() => 0);
  const views = new Map<number, { ctx: BrowserContext; page: Page }>();
  const until = Date.now() + 150_000;
  const pending = () => seats.findIndex((s, i) => s.events.filter((e) => kindOf(e) === 'legal_moves').length > (answered[i] ?? 0));
  try {
    while (left.size > 0) {
      if (Date.now() > until) throw new Error(`cases not reached in time: ${[...left].join(', ')}`);
      // Wait until some seat has a list of legal moves it has not answered.
      const waitUntil = Date.now() + 30_000;
      while (pending() < 0) {
        if (Date.now() > waitUntil) throw new Error(`no seat was asked to move for 30 s; errors ${JSON.stringify(seats.map((s) => s.errors))}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      const i = pending();
      const seat = seats[i] as WsSeat;
      const lists = seat.events.filter((e) => kindOf(e) === 'legal_moves');
      const legal = legalOf(lists[answered[i] ?? 0] as RawEvent);
      answered[i] = (answered[i] ?? 0) + 1;
      if (legal.phase === 'PHASE_CHOOSE_TRUMP') {
        seat.command({ trump: { trump: legal.trumps?.[0] ?? 'SUIT_NONE' } });
        continue;
      }
      if (legal.phase === 'PHASE_BID') {
        seat.command({ bid: { tricks: legal.bids?.[0] ?? 0 } });
        continue;
      }
      const plays = legal.plays ?? [];
      const joker = plays.find((p) => isJoker(cardOf(p)));
      const c = joker ? caseOf(joker, japanese) : null;
      if (joker && c !== null && left.has(c)) {
        left.delete(c);
        let view = views.get(i);
        if (!view) {
          const ctx = await newContext(browser, { viewport: PHONE, token: guests[i]?.token ?? '' });
          const page = await newPage(ctx, errors);
          await page.goto(`/t/${encodeURIComponent(table)}`);
          view = { ctx, page };
          views.set(i, view);
        }
        const { page } = view;
        const code = cardCode(cardOf(joker));
        // Cards in a hand overlap: click the corner that is always visible.
        await page.locator(`button[data-testid="card-${code}"][data-playable="true"]`).click({ position: { x: 7, y: 12 }, timeout: 15_000 });
        await page.getByTestId('joker-dialog').waitFor();
        problems.push(...(await checkDialog(page, c)));
        await page.keyboard.press('Escape');
        await page.getByTestId('joker-dialog').waitFor({ state: 'detached' });
        problems.push(...(await rejections(page)).map((r) => `${c}: refused: ${r}`));
      }
      // A holder plays its highest ordinary card (to win tricks and lead),
      // the others their lowest; a seat left with jokers only plays one.
      const ordinary = plays.filter((p) => !isJoker(cardOf(p))).sort((a, b) => rankOf(cardOf(a)) - rankOf(cardOf(b)));
      const move = (joker ? ordinary[ordinary.length - 1] : ordinary[0]) ?? joker;
      if (!move) throw new Error(`seat ${String(i)} has nothing to play: ${JSON.stringify(legal)}`);
      const decl = move.declarations?.[0];
      seat.command({ play: decl ? { card: move.card, declaration: decl } : { card: move.card } });
    }
  } finally {
    for (const v of views.values()) await v.ctx.close();
  }
  return problems;
}

async function scriptedTable(players: number, name: string, settings: RawSettings): Promise<{ guests: Guest[]; table: string; seats: WsSeat[] }> {
  const guests = await Promise.all(Array.from({ length: players }, () => newGuest()));
  const [host] = guests as [Guest];
  const table = await createTable(host, name, { visibility: 'TABLE_VISIBILITY_PRIVATE', stake: { free: {} }, move_time: '60s', ...settings });
  for (const [i, g] of guests.entries()) if (i > 0) await sit(g, table, i);
  for (let i = 0; i < 100 && (await tableStatus(host, table)) !== 'TABLE_STATUS_PLAYING'; i++) await new Promise((r) => setTimeout(r, 100));
  const seats = await Promise.all(guests.map((g) => WsSeat.open(g, table)));
  return { guests, table, seats };
}

/** Every seat leaves: bots finish a classic game, a Japanese match ends. */
function leave(seats: WsSeat[]): void {
  for (const s of seats) {
    s.command({ leave: {} });
    s.close();
  }
}

test('the classic joker dialog, led and followed, speaks ka, en, ru and tr and fits a 360 px phone', async () => {
  const errors: string[] = [];
  // Nines: all 36 cards are dealt in every hand, so both jokers are in play.
  const { guests, table, seats } = await scriptedTable(4, 'Joker dialog', {
    game: 'GAME_CLASSIC',
    classic_variant: 'CLASSIC_VARIANT_NINES',
    khishti: 'KHISHTI_PENALTY_200',
    premia: true,
    moshla: true,
    rest_docked: true,
  });
  let problems: string[];
  try {
    problems = await drive(guests, seats, table, ['classic-lead', 'classic-follow'], false, errors);
  } finally {
    leave(seats);
  }
  expect(problems).toEqual([]);
  expect(errors).toEqual([]);
});

test('the Japanese joker dialog, led, speaks ka, en, ru and tr and fits a 360 px phone', async () => {
  const errors: string[] = [];
  const { guests, table, seats } = await scriptedTable(2, 'Japanese joker dialog', { game: 'GAME_JAPANESE', japanese_target: 11 });
  let problems: string[];
  try {
    problems = await drive(guests, seats, table, ['japanese-lead'], true, errors);
  } finally {
    leave(seats);
  }
  expect(problems).toEqual([]);
  expect(errors).toEqual([]);
});
