// The score sheet screen against the server's sheet for a game whose
// outcomes are chosen: four scripted players (WebSocket, from Node) play a
// nines game in which seat 0 makes every bid of pulka I and the others miss
// some — a premia for seat 0, a moshla and a struck hand for each of the
// others, khishtis where a missing seat took nothing — then one hand of
// pulka II where seat 2 goes off course. Seat 0 watches in the browser and
// makes its next bid there; its sheet must show every number, mark, colour
// and strike of the server's.

import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { parseWireCard, parseWireSuit, cardCode, wireCardName, type Card, type Suit } from '../src/protocol/cards';
import { launch, newContext, newPage, shoot } from './harness';
import { planHand, type HandPlan, type Style, type Trump } from './plan';
import { compareSheet, n, readScreenSheet, type RawSheet, type ScreenSheet } from './sheet';
import { body, createTable, kindOf, newGuest, sit, tableStatus, WsSeat, type RawEvent } from './scripted';
import { rejections } from './ui';

/** A trump as the protocol's JSON names it. */
function wireSuitName(t: Trump): string {
  return { S: 'SUIT_SPADES', H: 'SUIT_HEARTS', D: 'SUIT_DIAMONDS', C: 'SUIT_CLUBS', none: 'SUIT_NONE' }[t];
}

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

const DIR = 'sheet';
const PREMIA_SEAT = 0;
// Seats 0 and 2 follow high, 1 and 3 low: some seats take many tricks, some none.
const STYLES: Style[] = ['high', 'low', 'high', 'low'];
const TRUMP_CHOICES: Trump[] = ['H', 'none', 'S', 'D', 'C'];

/** Seat s (not seat 0) misses hand h when h + s is even: each misses twice in pulka I. */
function misses(seat: number, hand: number): boolean {
  return seat !== PREMIA_SEAT && (hand + seat) % 2 === 0;
}

/**
 * Bids that make seat 0 take exactly its tricks and the scheduled seats miss
 * (khishtiSeat, which takes nothing, bids 1), within the dealer's rule.
 */
function chooseBids(plan: HandPlan, hand: number, dealer: number, cards: number, khishtiSeat: number | null): number[] {
  const bids = plan.tricks.map((t, seat) => {
    if (seat === khishtiSeat) return 1;
    if (!misses(seat, hand)) return t;
    if (t === 0) return 1; // a khishti
    return hand % 2 === 0 || t === cards ? t - 1 : t + 1;
  });
  if (bids.reduce((a, b) => a + b, 0) === cards) {
    // The dealer may not bid the number that makes the total the cards:
    // another (missing) bid for the dealer, or for the next seat when seat 0 deals.
    const seat = dealer !== PREMIA_SEAT ? dealer : (dealer + 1) % 4;
    const t = plan.tricks[seat] ?? 0;
    const now = bids[seat];
    const v = Array.from({ length: cards + 1 }, (_, i) => i).find((x) => x !== now && x !== t && (t > 0 || x > 0));
    if (v === undefined) throw new Error('no bid left for the dealer rule');
    bids[seat] = v;
  }
  return bids;
}

/** A seat other than seat 0 that takes no trick in the plan. */
function emptySeat(plan: HandPlan): number | null {
  const i = plan.tricks.findIndex((t, seat) => seat !== PREMIA_SEAT && t === 0);
  return i < 0 ? null : i;
}

/** Pulka I of nines is hands 1–4: its premia, moshla and strikes are written after hand index 3. */
const PULKA_END = 3;
const LIVE = '[data-testid="sheet-dialog"] [data-testid="score-sheet"]';

interface Marks {
  struck: string[];
  premia: string[];
  moshla: string[];
}

/** The struck cells ("hand-seat") and the premia and moshla entries ("pulka-seat") on the screen. */
function marks(screen: ScreenSheet): Marks {
  const keys = (o: Record<string, unknown>, f: (k: string) => boolean) => Object.keys(o).filter(f).sort();
  return {
    struck: keys(screen.cells, (k) => screen.cells[k]?.struck === true),
    premia: keys(screen.sigma, (k) => screen.sigma[k]?.extraKind === 'premia'),
    moshla: keys(screen.sigma, (k) => screen.sigma[k]?.extraKind === 'moshla'),
  };
}

/** The same, as the server's sheet has them. */
function marksOf(sheet: RawSheet): Marks {
  const out: Marks = { struck: [], premia: [], moshla: [] };
  for (const p of sheet.pulkas ?? []) {
    for (const h of p.hands ?? []) for (const c of h.cells ?? []) if (c.struck === true) out.struck.push(`${String(n(h.hand_index))}-${String(n(c.seat))}`);
    for (const t of p.totals ?? []) {
      if (n(t.premia) !== 0) out.premia.push(`${String(n(p.pulka_index))}-${String(n(t.seat))}`);
      else if (n(t.moshla) !== 0) out.moshla.push(`${String(n(p.pulka_index))}-${String(n(t.seat))}`);
    }
  }
  return { struck: out.struck.sort(), premia: out.premia.sort(), moshla: out.moshla.sort() };
}

function cardsOf(evs: RawEvent[], seat: number): Card[] {
  const out: Card[] = [];
  for (const e of evs) {
    if (kindOf(e) !== 'dealt' || n(body(e).seat as number | undefined) !== seat) continue;
    for (const c of (body(e).cards as unknown[] | undefined) ?? []) {
      const card = parseWireCard(c);
      if (card !== null) out.push(card);
    }
  }
  return out;
}

const count = (evs: RawEvent[], kind: string) => evs.filter((e) => kindOf(e) === kind).length;

/** Plays hand h of the scripted game from the four seats; answers the plan. */
async function playHand(seats: WsSeat[], h: number, needs: { khishti: boolean }): Promise<HandPlan> {
  const [p0] = seats;
  if (!p0) throw new Error('no seats');
  await p0.until(() => p0.handEvents(h).length > 0, `hand ${String(h + 1)} to start`);
  const started = body(p0.handEvents(h)[0] as RawEvent);
  const dealer = n(started.dealer_seat as number | undefined);
  const cards = n(started.cards_per_seat as number | undefined);
  const first = (dealer + 1) % 4;

  if (cards === 9) {
    const chooser = seats[first] as WsSeat;
    await chooser.until(() => cardsOf(chooser.handEvents(h), first).length >= 3, `the trump chooser's three cards`);
    const t = TRUMP_CHOICES[h % TRUMP_CHOICES.length] ?? 'none';
    chooser.command({ trump: { trump: wireSuitName(t) } });
  }
  const trumpOf = () => {
    const e = p0.handEvents(h).find((x) => kindOf(x) === 'trump_chosen' || kindOf(x) === 'trump_turned');
    return e ? parseWireSuit(body(e).trump) : null;
  };
  await p0.until(() => trumpOf() !== null, `the trump of hand ${String(h + 1)}`);
  const trump: Trump = trumpOf() ?? 'none';
  const hands: Card[][] = [];
  for (const [i, s] of seats.entries()) {
    await s.until(() => cardsOf(s.handEvents(h), i).length === cards, `seat ${String(i)}'s ${String(cards)} cards`);
    hands.push(cardsOf(s.handEvents(h), i));
  }
  let plan = planHand(hands, trump, first, STYLES);
  // Until the sheet has a khishti, look for a way of playing in which some
  // seat takes nothing (it then bids 1).
  for (let mask = 0; needs.khishti && emptySeat(plan) === null && mask < 16; mask++) {
    plan = planHand(hands, trump, first, STYLES.map((_, i) => ((mask >> i) & 1 ? 'high' : 'low')));
  }
  const khishtiSeat = needs.khishti ? emptySeat(plan) : null;
  if (khishtiSeat !== null) needs.khishti = false;
  const bids = chooseBids(plan, h, dealer, cards, khishtiSeat);

  for (let k = 0; k < 4; k++) {
    const seat = (first + k) % 4;
    (seats[seat] as WsSeat).command({ bid: { tricks: bids[seat] } });
    await p0.until(() => count(p0.handEvents(h), 'bid_made') === k + 1, `seat ${String(seat)}'s bid ${String(bids[seat])}`);
  }
  for (const [i, play] of plan.plays.entries()) {
    const move: Record<string, unknown> = { card: wireCardName(play.card) };
    if (play.joker) {
      move.declaration = play.joker.suit
        ? { action: `JOKER_ACTION_${play.joker.action.toUpperCase()}`, suit: wireSuitName(play.joker.suit) }
        : { action: `JOKER_ACTION_${play.joker.action.toUpperCase()}` };
    }
    (seats[play.seat] as WsSeat).command({ play: move });
    await p0.until(() => count(p0.handEvents(h), 'card_played') === i + 1, `seat ${String(play.seat)} to play ${cardCode(play.card)}`);
    if (i % 4 === 3) {
      const t = Math.floor(i / 4);
      await p0.until(() => count(p0.handEvents(h), 'trick_won') === t + 1, `trick ${String(t + 1)}`);
      const won = p0.handEvents(h).filter((e) => kindOf(e) === 'trick_won')[t] as RawEvent;
      expect(n(body(won).seat as number | undefined), `the winner of trick ${String(t + 1)} of hand ${String(h + 1)}`).toBe(plan.winners[t]);
    }
  }
  await p0.until(() => count(p0.handEvents(h), 'hand_ended') === 1, `hand ${String(h + 1)} to end`);
  return plan;
}

test('the sheet screen shows the server’s numbers, colours, strikes, premia, moshla and /100 totals for a scripted game', async () => {
  const guests = await Promise.all([newGuest(), newGuest(), newGuest(), newGuest()]);
  const [host] = guests;
  const table = await createTable(host, 'Scripted sheet', {
    game: 'GAME_CLASSIC',
    classic_variant: 'CLASSIC_VARIANT_NINES',
    khishti: 'KHISHTI_PENALTY_200',
    premia: true,
    moshla: true,
    rest_docked: true,
    visibility: 'TABLE_VISIBILITY_PRIVATE',
    stake: { free: {} },
    move_time: '60s',
  });
  for (const [i, g] of guests.entries()) if (i > 0) await sit(g, table, i);
  for (let i = 0; i < 100 && (await tableStatus(host, table)) !== 'TABLE_STATUS_PLAYING'; i++) await new Promise((r) => setTimeout(r, 100));

  // Seat 0 follows the game in the browser as it is played.
  const errors: string[] = [];
  const ctx = await newContext(browser, { token: host.token });
  const page = await newPage(ctx, errors);
  await page.goto(`/t/${encodeURIComponent(table)}`);
  await page.getByTestId('classic-table').waitFor();

  const seats = await Promise.all(guests.map((g) => WsSeat.open(g, table)));
  try {
    const needs = { khishti: true };
    const p0 = seats[0] as WsSeat;
    for (let h = 0; h < 5; h++) {
      if (h === PULKA_END) {
        // The sheet is opened before pulka I's last hand and stays open:
        // no premia, moshla or strike yet (they are written when the pulka ends).
        await p0.until(() => (p0.sheet?.sheet.pulkas?.[0]?.hands?.length ?? 0) === PULKA_END, `the sheet after hand ${String(PULKA_END)}`);
        await page.getByTestId('open-sheet').click();
        await page.locator(LIVE).waitFor();
        await expect.poll(async () => compareSheet(p0.sheet?.sheet ?? {}, await readScreenSheet(page, LIVE), { game: 'classic', over: false }), { timeout: 10_000 }).toEqual([]);
        expect(marks(await readScreenSheet(page, LIVE)), 'the sheet before pulka I ends').toEqual({ struck: [], premia: [], moshla: [] });
      }
      const plan = await playHand(seats, h, needs);
      if (h === PULKA_END) {
        // Live, on the sheet left open: the premia, the moshla and the struck
        // hands appear as the pulka ends, without reopening anything.
        await p0.until(() => p0.sheet?.sheet.pulkas?.[0]?.finished === true, 'pulka I to be finished on the sheet');
        const want = marksOf(p0.sheet?.sheet ?? {});
        // What the scripted pulka I is for: otherwise agreeing would prove little.
        expect(want.premia).toEqual(['0-0']);
        expect(want.moshla).toEqual(['0-1', '0-2', '0-3']);
        expect(want.struck).toHaveLength(3);
        await expect.poll(async () => marks(await readScreenSheet(page, LIVE)), { timeout: 10_000 }).toEqual(want);
        expect(compareSheet(p0.sheet?.sheet ?? {}, await readScreenSheet(page, LIVE), { game: 'classic', over: false })).toEqual([]);
        await shoot(page, DIR, '00-sheet-live-premia');
        await page.keyboard.press('Escape');
        await page.getByTestId('sheet-dialog').waitFor({ state: 'detached' });
      }
      const ended = body(seats[0]?.handEvents(h).find((e) => kindOf(e) === 'hand_ended') as RawEvent);
      const results = (ended.results as { seat?: number; tricks?: number }[] | undefined) ?? [];
      for (const r of results) expect(n(r.tricks), `hand ${String(h + 1)} seat ${String(n(r.seat))}'s tricks`).toBe(plan.tricks[n(r.seat)]);
    }
    // Hand 6: its trump is chosen first (by the seat after the dealer), then
    // the seats before seat 0 bid from Node and seat 0 bids on its screen.
    await p0.until(() => p0.handEvents(5).length > 0, 'hand 6');
    const dealer = n(body(p0.handEvents(5)[0] as RawEvent).dealer_seat as number | undefined);
    const chooser = (dealer + 1) % 4;
    if (chooser !== 0) {
      const s = seats[chooser] as WsSeat;
      await s.until(() => cardsOf(s.handEvents(5), chooser).length >= 3, 'the chooser’s cards');
      s.command({ trump: { trump: wireSuitName('C' satisfies Suit) } });
    } else {
      await page.getByTestId('trump-C').click();
    }
    await p0.until(() => count(p0.handEvents(5), 'trump_chosen') === 1, 'the trump of hand 6');
    let k = 0;
    for (let seat = chooser; seat !== 0; seat = (seat + 1) % 4) {
      (seats[seat] as WsSeat).command({ bid: { tricks: 1 } });
      const want = ++k;
      await p0.until(() => count(p0.handEvents(5), 'bid_made') === want, `seat ${String(seat)}'s bid in hand 6`);
    }
    await page.getByTestId('bid-panel').waitFor();
    await shoot(page, DIR, '01-table-bidding');
    await page.getByTestId('bid-2').click();
    await page.getByTestId('bid-panel').waitFor({ state: 'detached' });
    await p0.until(() => p0.handEvents(5).some((e) => kindOf(e) === 'bid_made' && n(body(e).seat as number | undefined) === 0), 'seat 0’s bid from the browser');
    await p0.until(() => (p0.sheet?.sheet.pulkas?.[1]?.hands?.length ?? 0) === 1, 'the sheet after hand 5');
  } finally {
    for (const s of seats) s.close();
  }

  const server: RawSheet = seats[0]?.sheet?.sheet ?? {};
  // The scripted game has what the test is about; otherwise agreeing would prove little.
  const pulka1 = server.pulkas?.[0];
  expect(pulka1?.finished).toBe(true);
  expect(n(pulka1?.totals?.find((t) => n(t.seat) === 0)?.premia)).toBeGreaterThan(0);
  for (const seat of [1, 2, 3]) expect(n(pulka1?.totals?.find((t) => n(t.seat) === seat)?.moshla), `seat ${String(seat)}'s moshla`).toBeLessThan(0);
  const cells = (server.pulkas ?? []).flatMap((p) => (p.hands ?? []).flatMap((h) => h.cells ?? []));
  expect(cells.filter((c) => c.struck === true)).toHaveLength(3);
  for (const o of ['HAND_OUTCOME_MADE', 'HAND_OUTCOME_MISSED', 'HAND_OUTCOME_KHISHTI']) expect(cells.some((c) => c.outcome === o), o).toBe(true);
  expect(server.totals?.find((t) => n(t.seat) === 0)?.on_course).toBe(true);
  expect(server.totals?.find((t) => n(t.seat) === 2)?.on_course ?? false).toBe(false);

  await page.getByTestId('open-sheet').click();
  const root = '[data-testid="sheet-dialog"] [data-testid="score-sheet"]';
  await page.locator(root).waitFor();
  await expect.poll(async () => compareSheet(server, await readScreenSheet(page, root), { game: 'classic', over: false }), { timeout: 10_000 }).toEqual([]);
  const screen = await readScreenSheet(page, root);
  // The hand being played is drawn as the current row, with seat 0's bid.
  expect(screen.rows.filter((r) => r.current).map((r) => r.hand)).toEqual([5]);
  expect(screen.cells['5-0']?.bid).toBe('2');
  await shoot(page, DIR, '02-sheet');
  await page.keyboard.press('Escape');
  // The table's own totals carry the course too.
  await expect.poll(async () => page.getByTestId('seat-score-2').getAttribute('class')).toContain('off-course');
  expect(await page.getByTestId('seat-score-0').getAttribute('class')).toContain('on-course');

  expect(await rejections(page)).toEqual([]);
  expect(errors).toEqual([]);
  await ctx.close();
});
