// A Japanese match between two browsers, to a target of 11: one creates the
// table, the other sits down from the lobby's list, and both play by
// clicking (hand and columns, trump or bezi, a led joker's suit) until the
// match ends. The score each screen shows is the server's.

import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { finishedGame, launch, newContext, newPage, runSeed, seededRandom, shoot, signInAsGuest, tableIdOf } from './harness';
import { highestCard, lowestCard, playUntilEnd, rejections, type Action, type PlayCount } from './ui';
import { n } from './sheet';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

const DIR = 'japanese';

async function matchScore(page: Page): Promise<[number, number]> {
  const text = (await page.getByTestId('match-score').textContent()) ?? '';
  const m = / (\d+) : (\d+) /.exec(text);
  if (!m) throw new Error(`match score not understood: ${text}`);
  return [Number(m[1]), Number(m[2])];
}

test('two browsers play a Japanese match to 11 by clicking, and both screens end on the server’s score', async () => {
  const seed = runSeed();
  console.log(`japanese: PULKA_E2E_SEED=${String(seed)}`);
  const errors: string[] = [];
  const aCtx = await newContext(browser);
  const a = await newPage(aCtx, errors);
  await signInAsGuest(a);
  await a.getByTestId('create-table-open').click();
  const dialog = a.getByTestId('create-table');
  await dialog.locator('input[name="game"]').nth(2).check(); // Japanese joker
  await dialog.locator('input[name="target"]').nth(0).check(); // to 11
  await shoot(a, DIR, '01-create-japanese');
  await a.getByTestId('create-submit').click();
  await a.getByTestId('waiting-room').waitFor();
  const tableId = tableIdOf(a);

  const bCtx = await newContext(browser);
  const b = await newPage(bCtx, errors);
  await signInAsGuest(b);
  // The other player finds the table in the lobby's live list.
  await b.getByTestId(`open-table-${tableId}`).click();
  await b.getByTestId('waiting-room').waitFor();
  await b.getByTestId('sit-1').click();
  await a.getByTestId('japanese-table').waitFor();
  await b.getByTestId('japanese-table').waitFor();

  const shots = new Set<string>();
  const shotOnce = async (page: Page, name: string) => {
    if (shots.has(name)) return;
    shots.add(name);
    await shoot(page, DIR, name);
  };
  const counts: PlayCount[] = [
    { bids: 0, trumps: 0, cards: 0, jokers: 0 },
    { bids: 0, trumps: 0, cards: 0, jokers: 0 },
  ];
  // One plays its highest cards, the other its lowest, so that hands are
  // lopsided and the match reaches 11 in a few hands.
  const players: [Page, typeof highestCard, number][] = [
    [a, highestCard, seed],
    [b, lowestCard, seed + 1],
  ];
  const started = Date.now();
  const results = await Promise.all(
    players.map(([page, cards, s], i) =>
      playUntilEnd(
        page,
        {
          rnd: seededRandom(s),
          cards,
          stopBefore: async (action: Action) => {
            if (i === 0 && action === 'trump') await shotOnce(page, '02-trump-bezi');
            if (i === 0 && action === 'play' && (await page.locator('[data-testid^="played-"]').count()) === 1) await shotOnce(page, '03-play');
            return false;
          },
          onJokerDialog: () => shotOnce(page, '04-joker-names-a-suit'),
        },
        counts[i],
      ),
    ),
  );
  expect(results).toEqual(['end', 'end']);
  console.log(`japanese: ${JSON.stringify(counts)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // Every trick of every hand had a card from each player.
  expect(counts[0]?.cards).toBe(counts[1]?.cards);
  expect((counts[0]?.cards ?? 0) % 18).toBe(0);

  const game = await finishedGame(a, tableId);
  const totals = [0, 1].map((seat) => n(game.sheet?.totals?.find((t) => n(t.seat) === seat)?.total));
  expect(Math.max(...totals)).toBeGreaterThanOrEqual(11);
  expect(totals[0]).not.toBe(totals[1]);
  // Each screen puts its own player first.
  expect(await matchScore(a)).toEqual([totals[0], totals[1]]);
  expect(await matchScore(b)).toEqual([totals[1], totals[0]]);
  const standings = game.standings?.standings ?? [];
  expect(standings).toHaveLength(2);
  for (const page of [a, b]) {
    for (const s of standings) {
      const li = page.getByTestId(`placing-${String(n(s.seat))}`);
      expect(await li.locator('.score').textContent()).toBe(String(n(s.total)));
      expect(await li.locator('.place').textContent()).toBe(`${String(n(s.place))}.`);
    }
  }
  await shoot(a, DIR, '05-game-end');
  await shoot(b, DIR, '06-game-end-other');

  expect(await rejections(a)).toEqual([]);
  expect(await rejections(b)).toEqual([]);
  expect(errors).toEqual([]);
  await aCtx.close();
  await bCtx.close();
});
