// Optional sounds (issue 22): off by default, on with the table's switch,
// and the switch remembered across a reload. The app makes its tones with
// WebAudio oscillators (src/ui/sound.ts); an init script of this test
// counts every oscillator started in the page (the app is not changed), and
// a guest plays a classic game against three bots by clicking, so the bots'
// cards and the guest's own turns are the happenings that would sound.

import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launch, newContext, newPage, runSeed, seededRandom, signInAsGuest } from './harness';
import { playUntilEnd, rejections, type PlayOptions } from './ui';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

/** Test-only: counts oscillators started (window.__sounds), from the page's first script on. */
function countSounds(): void {
  const w = window as unknown as { __sounds: number };
  w.__sounds = 0;
  const proto = AudioScheduledSourceNode.prototype;
  const start = Object.getOwnPropertyDescriptor(proto, 'start')?.value as (this: AudioScheduledSourceNode, when?: number) => void;
  proto.start = function (this: AudioScheduledSourceNode, when?: number) {
    if (this instanceof OscillatorNode) w.__sounds++;
    start.call(this, when);
  };
}

const sounds = (page: Page) => page.evaluate(() => (window as unknown as { __sounds: number }).__sounds);

/** The cards on the felt and in the guest's hand, and the hand: changes with every card played. */
const tableKey = (page: Page) =>
  page.evaluate(() =>
    [document.querySelector('[data-testid="hand-info"]')?.textContent ?? '', document.querySelectorAll('[data-testid^="played-"]').length, document.querySelectorAll('button.card').length].join('/'),
  );

/** Plays `moves` of the guest's moves by clicking (the bots play in between). */
async function playMoves(page: Page, moves: number, opts: PlayOptions): Promise<void> {
  let left = moves;
  const r = await playUntilEnd(page, { ...opts, stopBefore: () => Promise.resolve(left-- <= 0) });
  expect(r, 'the game went on').toBe('stopped');
}

test('sounds are off by default, a move sounds once the switch is on, and the switch is remembered across a reload', async () => {
  const seed = runSeed();
  console.log(`sound: PULKA_E2E_SEED=${seed}`);
  const opts: PlayOptions = { rnd: seededRandom(seed), waitMs: 30_000 };
  const errors: string[] = [];
  const ctx = await newContext(browser);
  await ctx.addInitScript(countSounds);
  const page = await newPage(ctx, errors);
  await signInAsGuest(page);
  await page.getByTestId('create-table-open').click();
  await page.getByTestId('opt-bots').check();
  await page.getByTestId('create-submit').click();
  await page.getByTestId('classic-table').waitFor();
  const sw = page.getByTestId('sound-switch');

  // Off by default: hands 1 and 2 (a bid and a card each) go by in silence,
  // the bots' cards and the guest's turns included.
  expect(await sw.getAttribute('aria-pressed')).toBe('false');
  const before = await tableKey(page);
  await playMoves(page, 4, opts);
  expect(await tableKey(page), 'cards were played while the sounds were off').not.toBe(before);
  expect(await sounds(page), 'oscillators started with the sounds off').toBe(0);

  // On: the next moves sound (a card played, a trick taken, the guest's turn).
  await sw.click();
  expect(await sw.getAttribute('aria-pressed')).toBe('true');
  await playMoves(page, 2, opts);
  await expect.poll(() => sounds(page), { timeout: 10_000 }).toBeGreaterThan(0);

  // Remembered: after a reload the switch is still on, and moves still sound.
  await page.reload();
  await page.getByTestId('classic-table').waitFor();
  expect(await sw.getAttribute('aria-pressed'), 'the switch after a reload').toBe('true');
  expect(await sounds(page), 'the counter starts again with the page').toBe(0);
  await playMoves(page, 2, opts);
  await expect.poll(() => sounds(page), { timeout: 10_000 }).toBeGreaterThan(0);

  // Off again: silence again, also after a reload.
  await sw.click();
  expect(await sw.getAttribute('aria-pressed')).toBe('false');
  await page.reload();
  await page.getByTestId('classic-table').waitFor();
  expect(await sw.getAttribute('aria-pressed'), 'the switch off after a reload').toBe('false');
  await playMoves(page, 2, opts);
  expect(await sounds(page), 'oscillators started after switching the sounds off').toBe(0);

  expect(await rejections(page)).toEqual([]);
  expect(errors).toEqual([]);
  await ctx.close();
});
