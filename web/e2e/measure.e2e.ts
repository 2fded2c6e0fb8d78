// Time to a playable lobby on localhost: from the navigation's start to the
// lobby listing its first table (the performance mark the test-only probe
// sets when the list appears), five times with an empty cache (a new
// browser context each) and five reloads with a warm one. The medians go to
// out/lobby-times.json and docs/benchmarks.md.
//
// Then a table event to the screen with the animations on (the deal, cards
// travelling to the trick, the trick gathering to its winner): the first
// pulka of a classic game against bots, every event timed by the probe from
// the frame's arrival to the DOM changed and to the frame drawn; p99 of the
// DOM change under 16 ms with PULKA_E2E_MEASURE=1 on a quiet machine, under
// 100 ms in a plain run (out/apply-times-animated.json).

import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launch, median, newContext, newPage, percentile, probe, runSeed, saveJSON, seededRandom, shoot, signInAsGuest } from './harness';
import { playUntilEnd } from './ui';
import { createTable, newGuest } from './scripted';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

interface Load {
  listed: number;
  responseEnd: number;
  domContentLoaded: number;
  load: number;
}

async function timeLobby(page: Page, go: () => Promise<unknown>): Promise<Load> {
  await go();
  await page.waitForFunction(() => performance.getEntriesByName('pulka:lobby-listed').length > 0, null, { timeout: 20_000 });
  await page.waitForFunction(() => document.readyState === 'complete');
  return page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    return {
      listed: performance.getEntriesByName('pulka:lobby-listed')[0]?.startTime ?? -1,
      responseEnd: nav.responseEnd,
      domContentLoaded: nav.domContentLoadedEventEnd,
      load: nav.loadEventEnd,
    };
  });
}

function medians(loads: Load[]) {
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    runs: loads.length,
    listedMs: r(median(loads.map((l) => l.listed))),
    responseEndMs: r(median(loads.map((l) => l.responseEnd))),
    domContentLoadedMs: r(median(loads.map((l) => l.domContentLoaded))),
    loadMs: r(median(loads.map((l) => l.load))),
    listedEachMs: loads.map((l) => r(l.listed)),
  };
}

test('time from navigation start to a lobby listing tables (median of 5, cold and warm cache)', async () => {
  // A waiting public table, so the lobby has something to list.
  const host = await newGuest();
  const tableId = await createTable(host, 'Measured', {
    game: 'GAME_CLASSIC',
    classic_variant: 'CLASSIC_VARIANT_STANDARD',
    khishti: 'KHISHTI_PENALTY_200',
    premia: true,
    moshla: true,
    rest_docked: true,
    visibility: 'TABLE_VISIBILITY_PUBLIC',
    stake: { free: {} },
  });
  const viewer = await newGuest();

  const cold: Load[] = [];
  for (let i = 0; i < 5; i++) {
    const ctx = await newContext(browser, { token: viewer.token });
    const page = await ctx.newPage();
    cold.push(await timeLobby(page, () => page.goto('/')));
    expect(await page.getByTestId(`table-${tableId}`).count()).toBe(1);
    await ctx.close();
  }
  const warm: Load[] = [];
  const ctx = await newContext(browser, { token: viewer.token });
  const page = await ctx.newPage();
  await timeLobby(page, () => page.goto('/'));
  for (let i = 0; i < 5; i++) warm.push(await timeLobby(page, () => page.reload()));
  await shoot(page, 'lobby', '07-lobby-list');
  await ctx.close();

  const result = { coldCache: medians(cold), warmCache: medians(warm) };
  console.log('lobby: navigation start to the list of tables', JSON.stringify(result));
  saveJSON('lobby-times.json', result);
  // On localhost the lobby must be usable well within a second or two.
  expect(result.coldCache.listedMs).toBeLessThan(3000);
  expect(result.warmCache.listedMs).toBeLessThan(3000);
});

test('a table event reaches the screen within a frame with the animations on (p99, the first pulka against bots)', async () => {
  const seed = runSeed();
  console.log(`measure: PULKA_E2E_SEED=${String(seed)}`);
  const rnd = seededRandom(seed);
  const errors: string[] = [];
  const ctx = await newContext(browser);
  const page = await newPage(ctx, errors);
  // The animations run: the browser is not asked for reduced motion.
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  await signInAsGuest(page);
  await page.getByTestId('create-table-open').click();
  await page.getByTestId('opt-bots').check();
  await page.getByTestId('create-submit').click();
  await page.getByTestId('classic-table').waitFor();
  expect(await page.evaluate(() => matchMedia('(prefers-reduced-motion: reduce)').matches)).toBe(false);
  let animated = 0;
  const result = await playUntilEnd(page, {
    rnd,
    stopBefore: async () => {
      animated = Math.max(animated, await page.evaluate(() => document.getAnimations().filter((a) => a instanceof CSSAnimation).length));
      const hand = Number(/(\d+)/.exec((await page.getByTestId('hand-info').textContent()) ?? '')?.[1] ?? 0);
      return hand > 8;
    },
  });
  expect(result).toBe('stopped');
  // The cards did move: some CSS animation was running at some move.
  expect(animated, 'CSS animations seen').toBeGreaterThan(0);
  const drawn = (await probe(page)).applies.filter((a) => a.dom >= 0);
  const r = (x: number) => Math.round(x * 100) / 100;
  const stat = (xs: number[]) => ({ p50: r(median(xs)), p95: r(percentile(xs, 95)), p99: r(percentile(xs, 99)), max: r(Math.max(...xs)) });
  const summary = {
    animations: 'on',
    events: drawn.length,
    domUpdatedMs: stat(drawn.map((a) => a.dom)),
    nextFrameMs: stat(drawn.map((a) => a.frame)),
    frameRenderedMs: stat(drawn.map((a) => a.painted)),
    seed,
  };
  console.log('measure: event to screen with animations', JSON.stringify(summary));
  saveJSON('apply-times-animated.json', summary);
  expect(drawn.length).toBeGreaterThan(150);
  // The goal, p99 under 16 ms, is a figure of a quiet machine: measured with
  // PULKA_E2E_MEASURE=1 (docs/benchmarks.md). A plain run shares two cores
  // with everything else (CI's make test, other work), where the p99 is the
  // scheduler's: it holds the page to 100 ms, which a page that re-renders
  // more than the event's part of the table would still exceed.
  const goalMs = process.env.PULKA_E2E_MEASURE === '1' ? 16 : 100;
  expect(summary.domUpdatedMs.p99, `p99 of frame arrival → DOM changed (goal ${String(goalMs)} ms)`).toBeLessThan(goalMs);
  expect(errors).toEqual([]);
  await ctx.close();
});
