// Domino Coin: an account registered in the browser sees its sign-up grant
// in the header, the ledger page lists it, the daily bonus raises the
// header's balance live (the gateway's balance frame) and adds a ledger row
// with the balance after it, and a second claim the same day is refused.
// Then two accounts play a Japanese match for 50 coins by clicking: the
// table's rules say how the pot is paid before anyone sits, each header drops
// by the stake when its player sits down, and at the end the winner's header
// and game-end screen show the pot won, the loser's the stake lost, and the
// winner's ledger page lists the hold, the stake played and the payout with
// the balance after each.

import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { finishedGame, launch, newContext, newPage, registerAccount, runSeed, seededRandom, shoot, tableIdOf } from './harness';
import { highestCard, lowestCard, playUntilEnd, rejections } from './ui';
import { n } from './sheet';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

const DIR = 'wallet';

test('an account: the header balance, the ledger page, the daily bonus once a day', async () => {
  const errors: string[] = [];
  const ctx = await newContext(browser);
  const page = await newPage(ctx, errors);
  await registerAccount(page, 'coins');

  // The sign-up grant (the wallet's -signup-grant, 1000) in the header.
  const header = page.getByTestId('balance');
  await expect.poll(() => header.textContent(), { timeout: 15_000 }).toBe('1000 Domino Coin');
  expect(await header.getAttribute('title')).toMatch(/never money/);
  await shoot(page, DIR, '01-header');

  await header.click();
  await page.getByTestId('ledger').waitFor();
  expect(new URL(page.url()).pathname).toBe('/wallet');
  expect(await page.getByTestId('coin-note').count()).toBeGreaterThan(0);
  const grant = page.getByTestId('ledger-1');
  await expect.poll(() => grant.getAttribute('data-kind')).toBe('signup');
  expect(await grant.textContent()).toContain('+1000');
  await shoot(page, DIR, '02-ledger');

  // The bonus: the header follows live, the ledger gains a row.
  await page.getByTestId('daily-bonus').click();
  await expect.poll(() => page.getByTestId('bonus-result').textContent()).toMatch(/\+100/);
  await expect.poll(() => header.textContent()).toBe('1100 Domino Coin');
  const bonus = page.getByTestId('ledger-2');
  await expect.poll(() => bonus.getAttribute('data-kind')).toBe('bonus');
  const cells = await bonus.locator('td').allTextContents();
  expect(cells[2]).toBe('+100');
  expect(cells[3]).toBe('1100');
  await shoot(page, DIR, '03-bonus');

  // Once a day.
  await page.getByTestId('daily-bonus').click();
  await expect.poll(() => page.getByTestId('bonus-result').textContent()).toMatch(/already/);
  expect(await header.textContent()).toBe('1100 Domino Coin');

  // After a reload the ledger and the balance are read again.
  await page.reload();
  await page.getByTestId('ledger-2').waitFor();
  await expect.poll(() => header.textContent()).toBe('1100 Domino Coin');

  expect(errors).toEqual([]);
  await ctx.close();
});

/** The header's balance once it reads want. */
async function headerShows(page: Page, want: number): Promise<void> {
  await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 20_000 }).toBe(`${String(want)} Domino Coin`);
}

test('two accounts play a Japanese match for 50 coins: stakes held at sit, the pot paid to the winner, both headers and the ledger agree', async () => {
  const seed = runSeed();
  console.log(`wallet: PULKA_E2E_SEED=${String(seed)}`);
  const errors: string[] = [];
  const aCtx = await newContext(browser);
  const a = await newPage(aCtx, errors);
  await registerAccount(a, 'host');
  await headerShows(a, 1000);
  await a.getByTestId('create-table-open').click();
  const dialog = a.getByTestId('create-table');
  await dialog.locator('input[name="game"]').nth(2).check(); // Japanese joker
  await dialog.locator('input[name="target"]').nth(0).check(); // to 11
  await dialog.locator('input[name="stake"]').nth(1).check(); // Domino Coin
  await dialog.getByTestId('opt-stake-amount').selectOption('50');
  await shoot(a, DIR, '04-create-coin-table');
  await a.getByTestId('create-submit').click();
  await a.getByTestId('waiting-room').waitFor();
  const tableId = tableIdOf(a);
  await headerShows(a, 950); // the host sits at once: the stake is held

  const bCtx = await newContext(browser);
  const b = await newPage(bCtx, errors);
  await registerAccount(b, 'rival');
  await headerShows(b, 1000);
  // The lobby's description says how the pot is paid before anyone sits.
  const row = b.getByTestId(`open-table-${tableId}`).locator('xpath=..');
  await row.locator('summary').click();
  expect(await row.locator('.rules').textContent()).toContain('The winner takes the whole pot.');
  await b.getByTestId(`open-table-${tableId}`).click();
  await b.getByTestId('waiting-room').waitFor();
  await b.getByTestId('sit-1').click();
  await headerShows(b, 950);
  await a.getByTestId('japanese-table').waitFor();

  const results = await Promise.all(
    ([
      [a, highestCard, seed],
      [b, lowestCard, seed + 1],
    ] as const).map(([page, cards, s]) => playUntilEnd(page, { rnd: seededRandom(s), cards })),
  );
  expect(results).toEqual(['end', 'end']);

  const game = await finishedGame(a, tableId);
  const first = (game.standings?.standings ?? []).find((s) => n(s.place) === 1);
  expect(first).toBeDefined();
  const [winner, loser] = n(first?.seat) === 0 ? [a, b] : [b, a];
  await headerShows(winner, 1050);
  await headerShows(loser, 950);
  await expect.poll(() => winner.getByTestId('game-coins').textContent(), { timeout: 40_000 }).toContain('You won 50 Domino Coin.');
  await expect.poll(() => loser.getByTestId('game-coins').textContent(), { timeout: 40_000 }).toContain('You lost 50 Domino Coin.');
  await shoot(winner, DIR, '05-coin-game-won');
  await shoot(loser, DIR, '06-coin-game-lost');

  // The winner's ledger: the sign-up grant, the hold, the stake played into
  // the pot and the payout, each with the balance after it.
  await winner.goto('/wallet');
  await winner.getByTestId('ledger').waitFor();
  const rows = winner.locator('[data-testid^="ledger-"][data-kind]');
  await expect.poll(async () => (await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')))).sort()).toEqual(
    ['hold', 'payout', 'signup', 'stake_settled'],
  );
  const payout = winner.locator('[data-kind="payout"] td');
  expect((await payout.allTextContents())[2]).toBe('+100');
  expect((await payout.allTextContents())[3]).toBe('1050');
  await shoot(winner, DIR, '07-ledger-after-a-win');

  expect(await rejections(a)).toEqual([]);
  expect(await rejections(b)).toEqual([]);
  expect(errors).toEqual([]);
  await aCtx.close();
  await bCtx.close();
});
