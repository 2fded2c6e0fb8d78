// Fair deals (docs/fair-play.md): a guest plays the first hand against three
// bots; the browser sends its own random seed when the hand is committed,
// and once the hand is revealed the verify view — from the table and from
// the score sheet — recomputes the commitment, the shuffle and the guest's
// cards with Web Crypto and says "verified".

import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { fromBinary } from '@bufbuild/protobuf';
import { ClientFrameSchema } from '../src/gen/pulka/gateway/v1/frames_pb';
import { hex } from '../src/protocol/view';
import { launch, newContext, newPage, runSeed, seededRandom, shoot, signInAsGuest, tableIdOf } from './harness';
import { highestCard, lowestCard, playUntilEnd } from './ui';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

const DIR = 'fair';

test('the browser seeds each hand it plays and verifies the revealed deal itself', async () => {
  const seed = runSeed();
  console.log(`fair deal: PULKA_E2E_SEED=${seed}`);
  const errors: string[] = [];
  const ctx = await newContext(browser);
  const page = await newPage(ctx, errors);
  const seeds: { hand: number; seed: string }[] = [];
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => {
      // A binary ClientFrame (the page speaks binary protobuf).
      if (typeof f.payload === 'string') return;
      const c = fromBinary(ClientFrameSchema, f.payload).frame;
      if (c.case === 'command' && c.value.command.case === 'seed') {
        seeds.push({ hand: c.value.command.value.handIndex, seed: hex(c.value.command.value.seed) });
      }
    });
  });

  await signInAsGuest(page);
  await page.getByTestId('create-table-open').click();
  await page.getByTestId('opt-bots').check();
  await page.getByTestId('create-submit').click();
  await page.getByTestId('classic-table').waitFor();

  // Play until the first hand is over and revealed: its verify button
  // shows. (A server without the commit–reveal deal never reveals: stop
  // at the third hand and fail on the button.)
  const handNumber = async () => Number(/(\d+)/.exec((await page.getByTestId('hand-info').textContent()) ?? '')?.[1] ?? 0);
  const result = await playUntilEnd(page, {
    rnd: seededRandom(seed),
    stopBefore: async () => (await page.getByTestId('verify-last-hand').count()) > 0 || (await handNumber()) >= 3,
  });
  expect(result).toBe('stopped');
  expect(await page.getByTestId('verify-last-hand').count(), 'a revealed hand to verify (hand_revealed from the server)').toBe(1);

  // The browser sent one seed for the first hand: 32 random bytes in hex.
  expect(seeds.length).toBeGreaterThan(0);
  expect(seeds[0]?.hand).toBe(0);
  expect(seeds[0]?.seed).toMatch(/^[0-9a-f]{64}$/);
  expect(seeds[0]?.seed).not.toBe('0'.repeat(64));

  await page.getByTestId('verify-last-hand').click();
  const dialog = page.getByTestId('fair-deal');
  await dialog.waitFor();
  await expect.poll(() => page.getByTestId('verify-result').getAttribute('data-status'), { timeout: 10_000 }).toBe('verified');
  expect(await page.getByTestId('verify-result').textContent()).toMatch(/verified/i);
  for (const check of ['fair-check-commitment', 'fair-check-seed', 'fair-check-deal']) {
    expect(await page.getByTestId(check).getAttribute('data-ok'), check).toBe('true');
  }
  // The commitment shown is the one received before the deal; the guest's
  // own seed is marked among the revealed ones.
  expect(await page.getByTestId('fair-commitment').textContent()).toMatch(/^[0-9a-f]{64}$/);
  expect(await page.getByTestId('fair-server-seed').textContent()).toMatch(/^[0-9a-f]{64}$/);
  const mine = page.locator('[data-testid^="fair-seed-"].you');
  expect(await mine.count()).toBe(1);
  expect(await mine.textContent()).toContain(seeds[0]?.seed ?? 'no seed');
  await shoot(page, DIR, '01-verified');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });

  // The same check from the score sheet's row of that hand.
  await page.getByTestId('open-sheet').click();
  await page.getByTestId('verify-hand-0').click();
  await expect.poll(() => page.getByTestId('verify-result').getAttribute('data-status'), { timeout: 10_000 }).toBe('verified');
  await shoot(page, DIR, '02-verified-from-sheet');
  await page.keyboard.press('Escape');

  // After a reload the page replays the hand: it never knew the seed sent
  // before, so it checks everything but that seed, and still says verified.
  const sentBefore = seeds.length;
  await page.reload();
  await page.getByTestId('classic-table').waitFor();
  await page.getByTestId('open-sheet').click();
  await page.getByTestId('verify-hand-0').click();
  await expect.poll(() => page.getByTestId('verify-result').getAttribute('data-status'), { timeout: 10_000 }).toBe('verified');
  expect(await page.getByTestId('fair-check-commitment').getAttribute('data-ok')).toBe('true');
  expect(await page.getByTestId('fair-check-deal').getAttribute('data-ok')).toBe('true');
  expect(await page.getByTestId('fair-check-seed').getAttribute('data-ok')).toBe('null');
  expect(await page.getByTestId('fair-check-seed').textContent()).toMatch(/another device or before a reload/);
  // No seed was made for the replayed hands.
  expect(seeds.slice(sentBefore).filter((s) => s.hand === 0)).toEqual([]);
  await shoot(page, DIR, '02b-verified-after-reload');

  expect(errors).toEqual([]);
  await ctx.close();
});

/** Waits for the verify view of the last revealed hand to finish and returns its status. */
async function verifyLastHand(page: Page): Promise<string | null> {
  await page.getByTestId('verify-last-hand').click();
  await page.getByTestId('fair-deal').waitFor();
  await expect.poll(() => page.getByTestId('verify-result').getAttribute('data-status'), { timeout: 10_000 }).not.toBe('checking');
  return page.getByTestId('verify-result').getAttribute('data-status');
}

test('both players of a Japanese match verify its first hand, their face-down column cards included', async () => {
  const seed = runSeed();
  console.log(`fair deal, Japanese: PULKA_E2E_SEED=${seed}`);
  const errors: string[] = [];
  const aCtx = await newContext(browser);
  const a = await newPage(aCtx, errors);
  await signInAsGuest(a);
  await a.getByTestId('create-table-open').click();
  await a.getByTestId('create-table').locator('input[name="game"]').nth(2).check(); // Japanese joker
  await a.getByTestId('create-submit').click();
  await a.getByTestId('waiting-room').waitFor();
  const tableId = tableIdOf(a);
  const bCtx = await newContext(browser);
  const b = await newPage(bCtx, errors);
  await signInAsGuest(b);
  await b.getByTestId(`open-table-${tableId}`).click();
  await b.getByTestId('waiting-room').waitFor();
  await b.getByTestId('sit-1').click();
  await a.getByTestId('japanese-table').waitFor();
  await b.getByTestId('japanese-table').waitFor();

  // Both play until the first hand is revealed (a hand is 18 cards each;
  // without reveals, stop after three hands' worth and fail on the button).
  const results = await Promise.all(
    (
      [
        [a, highestCard, seed],
        [b, lowestCard, seed + 1],
      ] as const
    ).map(([page, cards, s]) => {
      let actions = 0;
      return playUntilEnd(page, {
        rnd: seededRandom(s),
        cards,
        stopBefore: async () => (await page.getByTestId('verify-last-hand').count()) > 0 || ++actions > 3 * 20,
      });
    }),
  );
  expect(results).toEqual(['stopped', 'stopped']);
  for (const page of [a, b]) {
    expect(await page.getByTestId('verify-last-hand').count(), 'a revealed hand to verify (hand_revealed from the server)').toBe(1);
    expect(await verifyLastHand(page)).toBe('verified');
    for (const check of ['fair-check-commitment', 'fair-check-seed', 'fair-check-deal']) {
      expect(await page.getByTestId(check).getAttribute('data-ok'), check).toBe('true');
    }
  }
  await shoot(a, DIR, '03-japanese-verified');
  expect(errors).toEqual([]);
  await aCtx.close();
  await bCtx.close();
});
