// Playing through the screen only: wait until the page offers something to
// do (a bid, a trump, a joker choice, a playable card, the game's end), do it
// with a click like a person would, and wait until the table has taken it.

import type { Page } from 'playwright-core';

export type Action = 'end' | 'joker' | 'trump' | 'bid' | 'play';

/** Which card to play among the playable codes ("AS", "10H", "JK1"). */
export type CardPolicy = (playable: string[], rnd: () => number) => string;

export const randomCard: CardPolicy = (playable, rnd) => pick(playable, rnd);

const RANKS = ['6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'];

/** 0 = six … 8 = ace; jokers above all. */
export function rankOfCode(code: string): number {
  if (code.startsWith('JK')) return 9;
  return RANKS.indexOf(code.slice(0, -1));
}

export const highestCard: CardPolicy = (playable) => [...playable].sort((a, b) => rankOfCode(b) - rankOfCode(a))[0] ?? '';
export const lowestCard: CardPolicy = (playable) => [...playable].sort((a, b) => rankOfCode(a) - rankOfCode(b))[0] ?? '';

export function pick<T>(xs: readonly T[], rnd: () => number): T {
  const x = xs[Math.floor(rnd() * xs.length)];
  if (x === undefined) throw new Error('pick from an empty list');
  return x;
}

export interface PlayOptions {
  rnd: () => number;
  cards?: CardPolicy;
  /** Asked before each move; true stops the loop (the move is not made). */
  stopBefore?: (action: Action) => Promise<boolean>;
  /** Called with the joker dialog open, before it is answered (for a screenshot). */
  onJokerDialog?: () => Promise<void>;
  /** Longest wait for the next thing to do (bots and the other browser play meanwhile). */
  waitMs?: number;
}

export interface PlayCount {
  bids: number;
  trumps: number;
  cards: number;
  jokers: number;
}

/** The next thing the screen offers this player, once it offers one. */
export async function nextAction(page: Page, timeout: number): Promise<Action> {
  const h = await page.waitForFunction(
    () => {
      const q = (id: string) => document.querySelector(`[data-testid="${id}"]`);
      if (q('game-end')) return 'end';
      if (q('joker-dialog')) return 'joker';
      if (q('trump-panel')) return 'trump';
      if (q('bid-panel')) return 'bid';
      if (document.querySelector('button[data-playable="true"]')) return 'play';
      return false;
    },
    null,
    { polling: 'raf', timeout },
  );
  return (await h.jsonValue()) as Action;
}

/**
 * Plays this page's seat until the game ends (answers 'end') or stopBefore
 * says stop ('stopped'). Every choice is one of the buttons the screen
 * enables: the bids not forbidden, the cards marked playable.
 */
export async function playUntilEnd(page: Page, opts: PlayOptions, count: PlayCount = { bids: 0, trumps: 0, cards: 0, jokers: 0 }): Promise<'end' | 'stopped'> {
  try {
    return await play(page, opts, count);
  } catch (e) {
    // Say what the screen showed: the refusals and the last announcement.
    const said = await page
      .evaluate(() => ({
        rejections: (window as unknown as { __e2e?: { rejections: string[] } }).__e2e?.rejections ?? [],
        announced: document.querySelector('[data-testid="announcer"]')?.textContent ?? '',
        hand: document.querySelector('[data-testid="hand-info"]')?.textContent ?? '',
        yourMove: document.querySelector('[data-testid="your-move"]')?.textContent ?? '',
        cards: Array.from(document.querySelectorAll<HTMLElement>('button.card')).map((c) => `${c.dataset.testid ?? ''}${c.dataset.playable === 'true' ? '*' : ''}`),
        dialog: document.querySelector('[data-testid="joker-dialog"]') !== null,
        status: document.querySelector('[data-testid="connection-banner"]')?.textContent ?? '',
      }))
      .catch(() => null);
    throw new Error(`playing failed after ${JSON.stringify(count)}; the screen: ${JSON.stringify(said)}`, { cause: e });
  }
}

async function play(page: Page, opts: PlayOptions, count: PlayCount): Promise<'end' | 'stopped'> {
  const waitMs = opts.waitMs ?? 60_000;
  const cards = opts.cards ?? randomCard;
  for (;;) {
    const action = await nextAction(page, waitMs);
    if (action === 'end') return 'end';
    if (opts.stopBefore && (await opts.stopBefore(action))) return 'stopped';
    switch (action) {
      case 'bid': {
        const ids = await page.$$eval('[data-testid="bid-panel"] button:not([disabled])', (bs) => bs.map((b) => b.getAttribute('data-testid') ?? ''));
        await page.getByTestId(pick(ids, opts.rnd)).click();
        await page.getByTestId('bid-panel').waitFor({ state: 'detached', timeout: waitMs });
        count.bids++;
        break;
      }
      case 'trump': {
        await page.getByTestId(pick(['trump-S', 'trump-H', 'trump-D', 'trump-C', 'trump-none'], opts.rnd)).click();
        await page.getByTestId('trump-panel').waitFor({ state: 'detached', timeout: waitMs });
        count.trumps++;
        break;
      }
      case 'joker':
        // A dialog left open (it is opened by the card click below).
        await answerJoker(page, opts, waitMs);
        count.jokers++;
        break;
      case 'play': {
        const codes = await page.$$eval('button[data-playable="true"]', (bs) => bs.map((b) => (b.getAttribute('data-testid') ?? '').replace(/^card-/, '')));
        const code = cards(codes, opts.rnd);
        // Cards in a hand overlap: click the corner that is always visible.
        await page.locator(`button[data-testid="card-${code}"]`).click({ position: { x: 7, y: 12 } });
        if (code.startsWith('JK')) {
          // A joker asks how it is meant, unless its list of legal moves
          // gives it one declaration: then it is sent at once, and the
          // joker is no longer playable (sent, then taken). Not "gone from
          // the page": a joker that was the hand's last card can be dealt
          // again in the next hand, in the very step that ends this one.
          await page.waitForFunction(
            (c) => document.querySelector('[data-testid="joker-dialog"]') !== null || document.querySelector(`button[data-testid="card-${c}"][data-playable="true"]`) === null,
            code,
            { polling: 'raf', timeout: waitMs },
          );
          if ((await page.getByTestId('joker-dialog').count()) > 0) {
            await answerJoker(page, opts, waitMs);
            count.jokers++;
          }
        }
        // Taken once it is no longer playable: gone from the hand, or no
        // longer this seat's turn. (The next hand may deal the same card
        // again, so waiting for it to leave the page is not enough.)
        await page.locator(`button[data-testid="card-${code}"][data-playable="true"]`).waitFor({ state: 'detached', timeout: waitMs });
        count.cards++;
        break;
      }
    }
  }
}

async function answerJoker(page: Page, opts: PlayOptions, waitMs: number): Promise<void> {
  if (opts.onJokerDialog) await opts.onJokerDialog();
  const ids = await page.$$eval('[data-testid="joker-dialog"] button[data-testid^="joker-"]', (bs) => bs.map((b) => b.getAttribute('data-testid') ?? ''));
  await page.getByTestId(pick(ids, opts.rnd)).click();
  await page.getByTestId('joker-dialog').waitFor({ state: 'detached', timeout: waitMs });
}

/** The refusal messages the page showed (the probe keeps them all). */
export async function rejections(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __e2e: { rejections: string[] } }).__e2e.rejections);
}
