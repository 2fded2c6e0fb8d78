import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sheetUpdateFromJson } from '../protocol/view';
import { setLang } from '../i18n';
import { buildSheetModel } from './model';
import { ScoreSheet } from './ScoreSheet';
import { MINUS } from './notation';
import { byTestId, mount } from '../testing/render';
import { Avatar } from '../ui/Avatar';
import threeHands from './testdata/seed-3-hands.json';
import pulkasIandII from './testdata/seed-pulkas-I-II.json';

function draw(json: unknown, live: Parameters<typeof buildSheetModel>[1] = null) {
  const model = buildSheetModel(sheetUpdateFromJson(json).sheet, live, { settings: null, names: [] });
  return mount(<ScoreSheet model={model} />);
}

describe('ScoreSheet', () => {
  beforeEach(() => setLang('en'));
  afterEach(() => {
    document.body.innerHTML = '';
  });

  it('draws the sul line in /100 notation, coloured by the premia course, with a non-colour cue', () => {
    const { root } = draw(threeHands);
    const sul = [0, 1, 2, 3].map((s) => byTestId(root, `sheet-sul-${s}`));
    expect(sul.map((c) => c.firstChild?.textContent)).toEqual(['2.1', '2.5', `${MINUS}1`, `${MINUS}0.4`]);
    expect(sul.map((c) => c.dataset.course)).toEqual(['off', 'on', 'off', 'off']);
    expect(sul[0]?.textContent).toContain('lost this pulka’s premia');
    // The name of a player who lost the premia is red too, and marked.
    expect(byTestId(root, 'sheet-player-0').className).toContain('course-off');
    expect(byTestId(root, 'sheet-player-0').textContent).toContain('✗');
    expect(byTestId(root, 'sheet-player-1').className).toContain('course-on');
  });

  it('colours made, missed and khishti cells and marks them with a symbol too', () => {
    const { root } = draw(threeHands);
    const made = byTestId(root, 'sheet-score-0-0');
    const khishti = byTestId(root, 'sheet-score-0-3');
    const missed = byTestId(root, 'sheet-score-1-0');
    expect([made.dataset.outcome, missed.dataset.outcome, khishti.dataset.outcome]).toEqual(['made', 'missed', 'khishti']);
    expect(made.className).toContain('made');
    expect(made.textContent).toBe('100✓');
    expect(missed.textContent).toBe('10✗');
    expect(khishti.textContent).toBe(`${MINUS}100!`);
    expect(khishti.getAttribute('aria-label')).toBe('Nika, hand 1, bid 1, scored −100, khishti');
    expect(byTestId(root, 'sheet-bid-0-1').textContent).toBe('–');
  });

  it('heads each pulka with its state and writes Σ with the premia or moshla beside it', () => {
    const { root } = draw(pulkasIandII);
    expect(byTestId(root, 'sheet-pulka-0').querySelector('.pulka-head')?.textContent).toBe('Pulka I finished');
    expect(byTestId(root, 'sheet-sigma-1-0').textContent).toBe('9.5 (+2.5)');
    expect(byTestId(root, 'sheet-sigma-1-3').textContent).toBe(`1.7 (${MINUS}3)`);
    expect(byTestId(root, 'sheet-sigma-0-0').textContent).toBe('14.3');
  });

  it('strikes through the hands cancelled by a moshla', () => {
    const { root } = draw(pulkasIandII);
    const struck = byTestId(root, 'sheet-score-10-3');
    expect(struck.className).toContain('struck');
    expect(struck.querySelector('s')?.textContent).toBe('300');
    expect(struck.getAttribute('aria-label')).toContain('struck by a moshla');
    expect(root.querySelectorAll('td.struck')).toHaveLength(3);
  });

  it('shows the current hand’s bids and tricks so far, and the foot', () => {
    const { root } = draw(pulkasIandII, { handIndex: 12, cards: 8, bids: [2, 0, 1, null], tricks: [1, 0, 0, 0] });
    expect(byTestId(root, 'sheet-hand-12').className).toContain('current');
    expect(byTestId(root, 'sheet-bid-12-1').textContent).toBe('–');
    expect(byTestId(root, 'sheet-score-12-0').textContent).toBe('1');
    expect(byTestId(root, 'sheet-score-12-0').getAttribute('aria-label')).toBe('Giorgi, hand 13, bid 2, tricks so far: 1');
    expect(byTestId(root, 'sheet-pulka-2').querySelector('.pulka-head')?.textContent).toBe('Pulka III in progress, 0 of 8');
    expect(byTestId(root, 'sheet-foot').textContent).toBe(
      'Classic joker (24 hands) · hand 13 of 24 (8 cards, Pulka III) · khishti −100 per card dealt · premia and moshla, the rest docked',
    );
  });

  it('speaks the current language', () => {
    setLang('ka');
    const { root } = draw(pulkasIandII);
    expect(root.querySelector('tfoot th')?.textContent).toBe('სულ');
    expect(byTestId(root, 'sheet-pulka-1').querySelector('.pulka-head')?.textContent).toBe('ფულკა II დასრულდა');
  });

  it('offers the verify view on the finished hands whose deal was revealed, and opens it', () => {
    const model = buildSheetModel(sheetUpdateFromJson(threeHands).sheet, null, { settings: null, names: [] });
    const opened: number[] = [];
    const { root } = mount(<ScoreSheet model={model} verify={{ can: (i) => i !== 1, open: (i) => opened.push(i) }} />);
    expect(root.querySelector('[data-testid="verify-hand-1"]')).toBeNull();
    const b = byTestId(root, 'verify-hand-0');
    expect(b.getAttribute('aria-label')).toBe('Check the deal of hand 1');
    b.click();
    expect(opened).toEqual([0]);
  });

  it('colours each player’s avatar from their id, as the table and the end screen do, and bots grey', () => {
    const model = buildSheetModel(sheetUpdateFromJson(threeHands).sheet, null, {
      settings: null,
      names: [],
      ids: ['p-giorgi', 'p-ana', 'p-levan', ''],
      bots: [false, false, false, true],
    });
    const { root } = mount(<ScoreSheet model={model} />);
    const avatar = (seat: number) => byTestId(root, `sheet-player-${String(seat)}`).querySelector<HTMLElement>('.avatar');
    for (const [seat, id] of [
      [0, 'p-giorgi'],
      [1, 'p-ana'],
      [2, 'p-levan'],
    ] as const) {
      const want = mount(<Avatar name="x" id={id} />).root.querySelector<HTMLElement>('.avatar')?.style.background;
      expect(avatar(seat)?.style.background, `seat ${String(seat)}`).toBe(want);
    }
    expect(avatar(3)?.className).toContain('bot');
  });
});
