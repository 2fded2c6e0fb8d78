// A whole standard game (24 hands) played in the browser against three bots,
// through the screen only; the sheet it shows at the end must be the
// server's final sheet, number for number. The same run times how long a
// table event takes to reach the screen.

import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  finishedGame,
  launch,
  median,
  newContext,
  newPage,
  percentile,
  probe,
  runSeed,
  saveJSON,
  seededRandom,
  shoot,
  signInAsGuest,
  tableIdOf,
  textContrast,
  type ApplySample,
} from './harness';
import { playUntilEnd, rejections, type PlayCount } from './ui';
import { compareSheet, parseHundredths, readScreenSheet } from './sheet';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

const DIR = 'classic-game';

async function handNumber(page: Page): Promise<number> {
  const text = (await page.getByTestId('hand-info').textContent()) ?? '';
  return Number(/(\d+)/.exec(text)?.[1] ?? 0);
}

test('a guest plays a whole standard game against three bots by clicking, and the final sheet on screen is the server’s', async () => {
  const seed = runSeed();
  console.log(`classic game: PULKA_E2E_SEED=${seed}`);
  const rnd = seededRandom(seed);
  const errors: string[] = [];
  const ctx = await newContext(browser);
  const page = await newPage(ctx, errors);
  const started = Date.now();

  await signInAsGuest(page);
  await shoot(page, DIR, '01-lobby');
  await page.getByTestId('create-table-open').click();
  await page.getByTestId('opt-bots').check();
  await shoot(page, DIR, '02-create-table');
  await page.getByTestId('create-submit').click();
  await page.getByTestId('classic-table').waitFor();
  const tableId = tableIdOf(page);

  const shot = new Set<string>();
  const once = async (name: string, when: boolean, also?: () => Promise<void>) => {
    if (!when || shot.has(name)) return;
    shot.add(name);
    if (also) await also();
    else await shoot(page, DIR, name);
  };
  const count: PlayCount = { bids: 0, trumps: 0, cards: 0, jokers: 0 };
  const jokerContrast: number[] = [];
  const result = await playUntilEnd(
    page,
    {
      rnd,
      stopBefore: async (action) => {
        const hand = await handNumber(page);
        await once('03-bid', action === 'bid' && hand >= 3);
        await once('04-trump', action === 'trump');
        const trick = await page.locator('[data-testid^="played-"]').count();
        await once('05-play', action === 'play' && hand >= 7 && trick >= 2);
        await once('06-sheet-mid-game', action === 'bid' && hand >= 14, async () => {
          await page.getByTestId('open-sheet').click();
          await page.getByTestId('score-sheet').waitFor();
          await shoot(page, DIR, '06-sheet-mid-game');
          await page.keyboard.press('Escape');
          await page.getByTestId('sheet-dialog').waitFor({ state: 'detached' });
        });
        return false;
      },
      onJokerDialog: async () => {
        // The dialog opens over the green felt: its words must be readable.
        jokerContrast.push(await textContrast(page, '[data-testid="joker-dialog"] .dialog-head h2'));
        await once('07-joker', true);
      },
    },
    count,
  );
  expect(result).toBe('end');
  const playedIn = Date.now() - started;
  console.log(`classic game: ${count.bids} bids, ${count.trumps} trumps, ${count.cards} cards (${count.jokers} jokers) in ${(playedIn / 1000).toFixed(1)} s`);
  // Every one of the 24 hands asked for a bid and all 144 of the seat's cards were clicked.
  expect(count.bids).toBe(24);
  expect(count.cards).toBe(2 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8) + 8 * 9);
  // A seat holds a joker in some hand of 24 all but always; each time the
  // dialog's title had at least WCAG AA contrast (4.5:1).
  expect(jokerContrast.length, 'joker dialogs seen').toBeGreaterThan(0);
  expect(Math.min(...jokerContrast), 'contrast of the joker dialog').toBeGreaterThanOrEqual(4.5);

  const server = await finishedGame(page, tableId);
  expect(server.sheet?.pulkas?.length).toBe(4);
  const root = '[data-testid="game-end"] [data-testid="score-sheet"]';
  // The last sheet update may reach the page just after the game's end.
  await expect
    .poll(async () => compareSheet(server.sheet ?? {}, await readScreenSheet(page, root), { game: 'classic', over: true }), { timeout: 15_000, interval: 250 })
    .toEqual([]);
  expect(Object.keys((await readScreenSheet(page, root)).cells)).toHaveLength(24 * 4);

  // The placings are the server's standings.
  const standings = server.standings?.standings ?? [];
  expect(standings).toHaveLength(4);
  for (const s of standings) {
    const li = page.getByTestId(`placing-${String(s.seat ?? 0)}`);
    expect(parseHundredths((await li.locator('.score').textContent()) ?? '')).toBe(Number(s.total ?? 0));
    expect(await li.locator('.place').textContent()).toBe(`${String(s.place ?? 0)}.`);
  }
  await shoot(page, DIR, '08-game-end');

  expect(await rejections(page)).toEqual([]);
  expect(errors).toEqual([]);

  // A table event to the screen, in the real browser.
  const applies: ApplySample[] = (await probe(page)).applies;
  const drawn = applies.filter((a) => a.dom >= 0);
  const stat = (xs: number[]) => ({ p50: round(median(xs)), p95: round(percentile(xs, 95)), p99: round(percentile(xs, 99)), max: round(Math.max(...xs)) });
  const summary = {
    events: applies.length,
    eventsChangingTheDom: drawn.length,
    handlerMs: stat(applies.map((a) => a.sync)),
    domUpdatedMs: stat(drawn.map((a) => a.dom)),
    nextFrameMs: stat(drawn.map((a) => a.frame)),
    frameRenderedMs: stat(drawn.map((a) => a.painted)),
    gameSeconds: round(playedIn / 1000),
    seed,
  };
  console.log('classic game: event to screen', JSON.stringify(summary));
  saveJSON('apply-times.json', summary);
  expect(drawn.length).toBeGreaterThan(500);
  // The goal: one event applied and drawn within a frame (16 ms) — the
  // median always; the p99 when measuring on a quiet machine
  // (PULKA_E2E_MEASURE=1: on two shared cores the p99 is the scheduler's).
  expect(summary.domUpdatedMs.p50).toBeLessThan(16);
  if (process.env.PULKA_E2E_MEASURE === '1') expect(summary.domUpdatedMs.p99, 'p99 of frame arrival → DOM changed').toBeLessThan(16);
  await ctx.close();
});

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
