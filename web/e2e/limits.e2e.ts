// The web client's side of the limits (issue 17): a 24-character name
// without a break, as a player's and as a table's, wraps on a 360 px phone
// instead of pushing the page sideways; a table the server does not know
// sends the player back to the lobby with the reason, never a frozen page.

import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { launch, newContext, newPage, PHONE, shoot } from './harness';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

const DIR = 'limits';

/** Elements of the page wider than the viewport, or whose text overflows them. */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const vw = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > vw) out.push(`the page is ${document.documentElement.scrollWidth} px wide in ${vw}`);
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
      // Text for screen readers only is clipped on purpose.
      if (el.children.length > 0 || !el.textContent.trim() || el.closest('.sr-only')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0) continue;
      if (r.right > vw + 1 || el.scrollWidth > el.clientWidth + 1) out.push(`${el.tagName}.${el.className}: "${el.textContent.trim().slice(0, 30)}"`);
    }
    return out;
  });
}

test('a 24-character unbroken player and table name wrap at 360 px', async () => {
  const errors: string[] = [];
  const ctx = await newContext(browser, { viewport: PHONE });
  const page = await newPage(ctx, errors);
  // A registered name can be 24 characters without a break (a guest's is the server's).
  const name = `w${Date.now().toString(36)}`.padEnd(24, 'x').slice(0, 24);
  const table = 'T'.repeat(24);
  await page.goto('/');
  await page.getByTestId('entry-tab-register').click();
  await page.locator('input[name="username"]').fill(name);
  await page.locator('input[name="password"]').fill(`pw-${Date.now()}-long enough`);
  await page.getByTestId('entry-submit').click();
  await page.getByTestId('create-table-open').waitFor();
  expect(await page.getByTestId('who').textContent()).toContain(name);
  expect(await overflowing(page)).toEqual([]);

  // A waiting table with the long name: listed in the lobby, and its waiting room.
  await page.getByTestId('create-table-open').click();
  await page.getByTestId('create-table').locator('input').first().fill(table);
  await page.getByTestId('create-submit').click();
  await page.getByTestId('waiting-room').waitFor();
  expect(await page.locator('#wr-title').textContent()).toBe(table);
  expect(await overflowing(page)).toEqual([]);
  await shoot(page, DIR, '01-waiting-room-long-names');
  await page.getByTestId('leave-table').click();
  await page.getByTestId('create-table-open').waitFor();

  // At a table with bots: the seat and the heading.
  await page.getByTestId('create-table-open').click();
  await page.getByTestId('create-table').locator('input').first().fill(table);
  await page.getByTestId('opt-bots').check();
  await page.getByTestId('create-submit').click();
  await page.getByTestId('classic-table').waitFor();
  await expect.poll(() => page.locator('.seat-name').allTextContents()).toContain(name);
  expect(await overflowing(page)).toEqual([]);
  await shoot(page, DIR, '02-table-long-names');

  expect(errors).toEqual([]);
  await ctx.close();
});

test('a table that does not exist sends the player back to the lobby with the reason', async () => {
  const errors: string[] = [];
  const ctx = await newContext(browser);
  const page = await newPage(ctx, errors);
  await page.goto('/');
  await page.getByTestId('entry-submit').click();
  await page.getByTestId('create-table-open').waitFor();
  await page.goto('/t/no-such-table-' + Date.now().toString(36));
  await page.getByTestId('create-table-open').waitFor({ timeout: 15_000 });
  expect(new URL(page.url()).pathname).toBe('/');
  await expect.poll(() => page.getByTestId('toast').textContent()).toMatch(/no such table/i);
  await shoot(page, DIR, '03-table-not-found');

  // A link that cannot name a table at all (the gateway refuses the id with
  // 400): back to the lobby too, and the table is not asked for again every
  // 4 s for ever (issue 22, rough edge 7).
  const asked: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/v1/tables/')) asked.push(r.url());
  });
  await page.goto('/t/' + encodeURIComponent('не стол ' + Date.now().toString(36)));
  await page.getByTestId('create-table-open').waitFor({ timeout: 15_000 });
  expect(new URL(page.url()).pathname).toBe('/');
  await expect.poll(() => page.getByTestId('toast').textContent()).toMatch(/no such table/i);
  const soFar = asked.length;
  await page.waitForTimeout(9_000);
  expect(asked.length, asked.join('\n')).toBe(soFar);
  expect(soFar).toBeLessThanOrEqual(2);
  expect(errors).toEqual([]);
  await ctx.close();
});

test('a fresh page load, signed out and then signed in, logs no error in the console (issue 22, rough edge 11)', async () => {
  const errors: string[] = [];
  const ctx = await newContext(browser);
  const page = await newPage(ctx, errors);
  const logged: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') logged.push(m.text());
  });
  const failed: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${String(r.status())} ${r.url()}`);
  });
  await page.goto('/');
  await page.getByTestId('entry-submit').waitFor();
  await page.getByTestId('entry-submit').click();
  await page.getByTestId('create-table-open').waitFor();
  await page.reload();
  await page.getByTestId('create-table-open').waitFor();
  expect({ logged, failed }).toEqual({ logged: [], failed: [] });
  expect(errors).toEqual([]);
  await ctx.close();
});

test('a turned joker fits its trump badge and card, at 360 px and on a desktop, in every language (issue 22, rough edge 4)', async () => {
  const errors: string[] = [];
  const ctx = await newContext(browser);
  const page = await newPage(ctx, errors);
  await page.goto('/');
  await page.getByTestId('entry-submit').waitFor();
  for (const size of [PHONE, { width: 1280, height: 800 }]) {
    await page.setViewportSize(size);
    // The markup of TrumpBadge with a turned joker (ui/Card.tsx CardView,
    // its SVG face from ui/CardArt.tsx: the word is the one part that
    // changes with the language, fitted to its width by textLength),
    // drawn by the app's own stylesheet, with each language's word.
    const outside = await page.evaluate((words) => {
      const out: string[] = [];
      for (const word of words) {
        const badge = document.createElement('span');
        badge.className = 'trump-badge';
        badge.innerHTML =
          `<span>Trump: </span><span class="card small" role="img"><svg class="card-svg" viewBox="0 0 100 140" aria-hidden="true">` +
          `<rect x="1" y="1" width="98" height="138" rx="8" fill="#fff"/><text x="50" y="128" font-size="12" font-weight="700" text-anchor="middle" ` +
          `textLength="48" lengthAdjust="spacingAndGlyphs">${word}</text></svg></span><span>none</span>`;
        document.body.prepend(badge);
        const b = badge.getBoundingClientRect();
        const card = badge.querySelector('.card')?.getBoundingClientRect();
        for (const el of Array.from(badge.querySelectorAll('.card *'))) {
          const r = el.getBoundingClientRect();
          if (r.width === 0 && r.height === 0) continue;
          if (!card || r.top < card.top - 0.5 || r.bottom > card.bottom + 0.5 || r.left < card.left - 0.5 || r.right > card.right + 0.5) out.push(`${word}: ${el.className} outside its card`);
          if (r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5) out.push(`${word}: ${el.className} outside the badge`);
        }
        badge.remove();
      }
      return out;
    }, ['JOKER', 'ჯოკერი', 'ДЖОКЕР']);
    expect(outside, `${String(size.width)} px`).toEqual([]);
  }
  expect(errors).toEqual([]);
  await ctx.close();
});
