// Every main screen, in all four languages, on a 360 px phone and a desktop
// (issue 22): nothing of the table, the sheet or a dialog is wider than the
// phone's screen (element boxes measured), axe-core finds no serious or
// critical accessibility violation, and a screenshot of each is saved to
// out/screens/<screen>-<lang>-{phone,desktop}.png for people to look at.
// The screens are reached on the real stack: entry, lobby, create-table
// dialog, waiting room, a classic table while bidding and while a trick is
// played, the score sheet, the leave dialog, a Japanese table and the end
// of a game. The classic table also shows that its cards animate, and that
// nothing does when the system asks for reduced motion.

import { createRequire } from 'node:module';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launch, newContext, newPage, OUT_DIR, PHONE, settled, signInAsGuest, tableIdOf } from './harness';

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

const LANGS = ['ka', 'en', 'ru', 'tr'] as const;
const DIR = join(OUT_DIR, 'screens');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Waits until no CSS animation runs (a card in flight is measured where it lands). */
async function still(page: Page): Promise<void> {
  await page.waitForFunction(() => document.getAnimations().every((a) => !(a instanceof CSSAnimation) || a.playState !== 'running'), null, {
    timeout: 5_000,
  });
  await settled(page);
}

/**
 * What sticks out of a phone's width: any element whose box passes the
 * viewport's left or right edge, any text cut by its own box, and any box
 * that scrolls sideways (a dialog, say). The score sheet's paper is the one
 * box meant to scroll sideways (its cards column stays in view): the paper
 * is measured, not what it scrolls. Text for screen readers only, the skip
 * link (off screen until focused) and the invisible card sprite are left out.
 */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const vw = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > vw) out.push(`the page is ${String(document.documentElement.scrollWidth)} px wide in ${String(vw)}`);
    const name = (el: Element) => {
      const id = el.getAttribute('data-testid');
      return `${el.tagName.toLowerCase()}${id ? `[${id}]` : ''}.${(el.getAttribute('class') ?? '').replace(/\s+/g, '.')}`;
    };
    for (const el of Array.from(document.querySelectorAll('body *'))) {
      if (el.closest('.sr-only, .skip, svg[width="0"]')) continue;
      const paper = el.classList.contains('sheet-paper');
      if (!paper && el.closest('.sheet-paper')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (r.right > vw + 1 || r.left < -1) out.push(`${name(el)} spans ${r.left.toFixed(0)}..${r.right.toFixed(0)} px`);
      const html = el as HTMLElement;
      const style = getComputedStyle(html);
      if (!paper && (style.overflowX === 'auto' || style.overflowX === 'scroll') && html.scrollWidth > html.clientWidth + 1) {
        out.push(`${name(el)} scrolls sideways (${String(html.scrollWidth)} px in ${String(html.clientWidth)})`);
      }
      if (el.children.length === 0 && el.textContent.trim() && html.scrollWidth > html.clientWidth + 1 && style.display !== 'inline') {
        out.push(`${name(el)}: text "${el.textContent.trim().slice(0, 30)}" is cut`);
      }
    }
    return out;
  });
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page (injected from web/node_modules). */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the gateway's Content-Security-Policy
  // (script-src 'self') rightly refuses an injected <script>.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target.map(String) })) }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact ?? ''}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

const problems: string[] = [];

/**
 * Checks the screen on show in every language: at phone width, overflow
 * and axe; then a screenshot at both sizes. The language is switched with
 * the top bar's switcher, so whatever is open stays open.
 */
async function check(page: Page, screen: string): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  for (const lang of LANGS) {
    await page.getByTestId('lang-switch').selectOption(lang);
    await page.setViewportSize(PHONE);
    await still(page);
    for (const o of await overflowing(page)) problems.push(`${screen} ${lang} 360px: ${o}`);
    for (const v of await axeViolations(page)) problems.push(`${screen} ${lang} axe: ${v}`);
    await page.screenshot({ path: join(DIR, `${screen}-${lang}-phone.png`) });
    await page.setViewportSize(DESKTOP);
    await still(page);
    await page.screenshot({ path: join(DIR, `${screen}-${lang}-desktop.png`) });
  }
  await page.setViewportSize(PHONE);
  await page.getByTestId('lang-switch').selectOption('en');
}

test('every classic screen fits a 360 px phone and passes axe in ka, en, ru and tr', async () => {
  const errors: string[] = [];
  const ctx = await newContext(browser, { viewport: PHONE });
  const page = await newPage(ctx, errors);
  await page.goto('/');
  await page.getByTestId('entry-submit').waitFor();
  await check(page, '01-entry');
  await signInAsGuest(page);
  await check(page, '02-lobby');
  await page.getByTestId('create-table-open').click();
  await page.getByTestId('create-table').waitFor();
  await check(page, '03-create-table');
  await page.getByTestId('opt-bots').check();
  await page.getByTestId('create-submit').click();
  await page.getByTestId('classic-table').waitFor();
  // The first hand: one card each, and the bid is ours sooner or later.
  await page.getByTestId('bid-panel').waitFor({ timeout: 30_000 });
  await check(page, '04-classic-bid');
  await page.locator('[data-testid="bid-panel"] button:not([disabled])').first().click();
  await page.getByTestId('bid-panel').waitFor({ state: 'detached' });

  await page.getByTestId('open-sheet').click();
  await page.getByTestId('score-sheet').waitFor();
  await check(page, '05-sheet');
  await page.keyboard.press('Escape');
  await page.getByTestId('sheet-dialog').waitFor({ state: 'detached' });

  // A trick on the felt: wait for our card to be asked for, then for a played card on show.
  await page.waitForFunction(() => document.querySelector('[data-testid^="played-"]') !== null || document.querySelector('button[data-playable="true"]') !== null, null, {
    timeout: 30_000,
  });
  await check(page, '06-classic-play');

  // Motion: a reload draws the table anew, and its cards animate in (the
  // turned trump turns over, the hand is dealt); under prefers-reduced-motion
  // nothing animates at all.
  await ctx.addInitScript(() => {
    const w = window as unknown as { __animations: number };
    w.__animations = 0;
    document.addEventListener('animationstart', () => w.__animations++, true);
  });
  const animations = () => page.evaluate(() => (window as unknown as { __animations: number }).__animations);
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  await page.reload();
  await page.getByTestId('trump').waitFor();
  await expect.poll(animations, { timeout: 5_000 }).toBeGreaterThan(0);
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.reload();
  await page.getByTestId('trump').waitFor();
  await page.waitForTimeout(1_000);
  expect(await animations(), 'CSS animations under prefers-reduced-motion').toBe(0);
  await page.emulateMedia({ reducedMotion: 'no-preference' });

  await page.getByTestId('leave-game').click();
  await page.getByTestId('confirm-leave').waitFor();
  await check(page, '07-leave-dialog');
  await page.keyboard.press('Escape');

  expect(problems).toEqual([]);
  expect(errors).toEqual([]);
  await ctx.close();
});

test('the waiting room, a Japanese table and the end of a game fit a 360 px phone and pass axe in every language', async () => {
  problems.length = 0;
  const errors: string[] = [];
  const aCtx = await newContext(browser, { viewport: PHONE });
  const a = await newPage(aCtx, errors);
  await signInAsGuest(a);
  await a.getByTestId('create-table-open').click();
  await a.getByTestId('create-table').locator('input[name="game"]').nth(2).check(); // Japanese joker
  await a.getByTestId('create-submit').click();
  await a.getByTestId('waiting-room').waitFor();
  await check(a, '08-waiting-room');
  const tableId = tableIdOf(a);

  const bCtx = await newContext(browser, { viewport: PHONE });
  const b = await newPage(bCtx, errors);
  await signInAsGuest(b);
  await b.goto(`/t/${tableId}`);
  await b.getByTestId('sit-1').click();
  await a.getByTestId('japanese-table').waitFor();
  await b.getByTestId('japanese-table').waitFor();
  // Whoever chooses the trump shows the choice with their first cards; the other waits.
  const chooser = await (async () => {
    for (let i = 0; i < 300; i++) {
      if ((await a.getByTestId('trump-panel').count()) > 0) return a;
      if ((await b.getByTestId('trump-panel').count()) > 0) return b;
      await a.waitForTimeout(100);
    }
    throw new Error('neither player was asked for the trump within 30 s');
  })();
  await check(chooser, '09-japanese-trump');
  // The trump cards stay on screen at 360 px: the hand is in view, whole.
  const hand = await chooser.getByTestId('hand').boundingBox();
  expect(hand, 'the hand while choosing the trump').not.toBeNull();
  expect(hand?.y ?? -1).toBeGreaterThanOrEqual(0);
  expect((hand?.y ?? 0) + (hand?.height ?? 0)).toBeLessThanOrEqual(PHONE.height);
  await chooser.getByTestId('trump-H').click();
  await chooser.getByTestId('trump-panel').waitFor({ state: 'detached' });
  await a.waitForFunction(() => document.querySelectorAll('[data-testid^="column-"] .card').length > 0, null, { timeout: 15_000 });
  await check(a, '10-japanese-play');

  await a.getByTestId('leave-game').click();
  await a.getByTestId('confirm-leave-yes').click();
  await a.getByTestId('game-end').waitFor({ timeout: 15_000 });
  await check(a, '11-game-end');

  expect(problems).toEqual([]);
  expect(errors).toEqual([]);
  await aCtx.close();
  await bCtx.close();
});
