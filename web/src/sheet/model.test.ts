import { describe, expect, it } from 'vitest';
import type { Sheet, TableSettings } from '../protocol/types';
import { settingsOf, sheetUpdateFromJson } from '../protocol/view';
import { buildSheetModel, PASS, type SheetModel } from './model';
import { MINUS } from './notation';
import threeHands from './testdata/seed-3-hands.json';
import pulkasIandII from './testdata/seed-pulkas-I-II.json';
import scoringShape from './testdata/seed-pulkas-I-II.scoring.json';

// The fixtures are real server output: seed-*.json is the protojson of a
// pulka.scoring.v1.SheetUpdate built by pkg/scoring from the hands of seeds
// 000/001 (tools/cmd/pulkactl/testdata/seed_pulkas_I_II.json, per-card
// khishti), *.scoring.json is `pulkactl score` of the same hands.

const names = { settings: null, names: [] };

function model(json: unknown): SheetModel {
  return buildSheetModel(sheetUpdateFromJson(json).sheet, null, names);
}

function cell(m: SheetModel, hand: number, seat: number) {
  for (const s of m.sections) for (const r of s.rows) if (r.handIndex === hand) return r.cells[seat];
  throw new Error(`no hand ${hand}`);
}

describe('the score sheet model', () => {
  it('writes the seed totals after three hands: 2.1, 2.5, −1, −0.4', () => {
    const m = model(threeHands);
    expect(m.sul.map((s) => s.total)).toEqual(['2.1', '2.5', `${MINUS}1`, `${MINUS}0.4`]);
    expect(m.players.map((p) => p.name)).toEqual(['Giorgi', 'Ana', 'Levan', 'Nika']);
  });

  it('keeps only Ana on course after three hands (her pass counts as made)', () => {
    const m = model(threeHands);
    expect(m.sul.map((s) => s.course)).toEqual(['off', 'on', 'off', 'off']);
    expect(m.players.map((p) => p.course)).toEqual(['off', 'on', 'off', 'off']);
  });

  it('heads pulka I as in progress with the hands played so far', () => {
    const m = model(threeHands);
    expect(m.sections).toHaveLength(1);
    expect(m.sections[0]).toMatchObject({ pulkaIndex: 0, finished: false, played: 3, size: 8 });
  });

  it('writes hand cells whole, a pass as a dash, and marks every outcome', () => {
    const m = model(threeHands);
    expect(cell(m, 0, 0)).toMatchObject({ bid: '1', score: '100', outcome: 'made', mark: '✓' });
    expect(cell(m, 0, 1)).toMatchObject({ bid: PASS, score: '50', outcome: 'made' });
    expect(cell(m, 0, 3)).toMatchObject({ bid: '1', score: `${MINUS}100`, outcome: 'khishti', mark: '!' });
    expect(cell(m, 1, 0)).toMatchObject({ bid: PASS, score: '10', outcome: 'missed', mark: '✗' });
    expect(cell(m, 1, 2)).toMatchObject({ bid: '2', score: `${MINUS}200`, outcome: 'khishti' });
  });

  it('writes pulka II as 9.5 with the premia for Giorgi and 1.7 with the moshla for Nika', () => {
    const m = model(pulkasIandII);
    const p2 = m.sections[1];
    expect(p2?.finished).toBe(true);
    expect(p2?.sigma[0]).toEqual({ seat: 0, total: '9.5', extra: '+2.5', extraKind: 'premia' });
    expect(p2?.sigma[3]).toEqual({ seat: 3, total: '1.7', extra: `${MINUS}3`, extraKind: 'moshla' });
    expect(p2?.sigma[1]).toMatchObject({ total: '3.7', extra: `${MINUS}2`, extraKind: 'moshla' });
  });

  it('strikes the hand each moshla cancels and keeps its score', () => {
    const m = model(pulkasIandII);
    // Ana's 200 in hand 9, Levan's 150 in hand 10, Nika's 300 in hand 11.
    expect(cell(m, 8, 1)).toMatchObject({ struck: true, score: '200' });
    expect(cell(m, 9, 2)).toMatchObject({ struck: true, score: '150' });
    expect(cell(m, 10, 3)).toMatchObject({ struck: true, score: '300' });
    const struck = m.sections.flatMap((s) => s.rows.flatMap((r) => r.cells.filter((c) => c.struck)));
    expect(struck).toHaveLength(3);
  });

  it('writes the grand totals and the foot after two pulkas', () => {
    const m = model(pulkasIandII);
    expect(m.sul.map((s) => s.total)).toEqual(['23.8', '5.3', '3.9', `${MINUS}3.6`]);
    // Between pulkas everybody starts green again.
    expect(m.sul.every((s) => s.course === 'on')).toBe(true);
    expect(m.foot).toMatchObject({ variant: 'standard', hand: 13, hands: 24, cards: 8, pulkaIndex: 2, khishti: 'per-card', over: false });
  });

  it('reads pkg/scoring’s own sheet JSON into the same model', () => {
    const fromScoring = buildSheetModel(fromScoringSheet(scoringShape), null, { settings: null, names: ['Giorgi', 'Ana', 'Levan', 'Nika'] });
    const fromWire = model(pulkasIandII);
    expect(fromScoring.sections).toEqual(fromWire.sections);
    expect(fromScoring.sul).toEqual(fromWire.sul);
    expect(fromScoring.foot).toEqual(fromWire.foot);
  });

  it('adds the hand being played: bids as made, tricks so far, a pass as a dash', () => {
    const sheet = sheetUpdateFromJson(pulkasIandII).sheet;
    const m = buildSheetModel(sheet, { handIndex: 12, cards: 8, bids: [2, 0, null, null], tricks: [1, 0, 0, 0] }, names);
    const p3 = m.sections[2];
    expect(p3).toMatchObject({ pulkaIndex: 2, finished: false, size: 8 });
    const row = p3?.rows[0];
    expect(row?.current).toBe(true);
    expect(row?.cards).toBe(8);
    expect(row?.cells.map((c) => [c.bid, c.score, c.outcome])).toEqual([
      ['2', '1', 'in_progress'],
      [PASS, '0', 'in_progress'],
      ['', '', 'in_progress'],
      ['', '', 'in_progress'],
    ]);
  });

  it('does not repeat a hand the server’s sheet already has', () => {
    const sheet = sheetUpdateFromJson(threeHands).sheet;
    const m = buildSheetModel(sheet, { handIndex: 2, cards: 3, bids: [1, 1, 0, 2], tricks: [1, 1, 0, 1] }, names);
    expect(m.sections[0]?.rows.filter((r) => r.handIndex === 2)).toHaveLength(1);
    expect(m.sections[0]?.rows.some((r) => r.current)).toBe(false);
  });

  it('draws an empty sheet before the first hand from the table’s settings and names', () => {
    const m = buildSheetModel(null, { handIndex: 0, cards: 1, bids: [null, null, null, null], tricks: [0, 0, 0, 0] }, {
      settings: null,
      names: ['A', 'B', 'C', 'D'],
    });
    expect(m.players.map((p) => p.name)).toEqual(['A', 'B', 'C', 'D']);
    expect(m.sections[0]?.rows).toHaveLength(1);
    expect(m.sul.map((s) => s.total)).toEqual(['0', '0', '0', '0']);
    expect(m.sul.every((s) => s.course === 'on')).toBe(true);
  });

  it('leaves totals uncoloured when the premia is off', () => {
    const u = sheetUpdateFromJson(threeHands);
    u.sheet.settings.premia = false;
    const m = buildSheetModel(u.sheet, null, names);
    expect(m.sul.every((s) => s.course === 'neutral')).toBe(true);
  });
});

describe('the Japanese sheet', () => {
  it('writes match totals whole, not in /100 notation, and colours no course', () => {
    const sheet = sheetUpdateFromJson({
      version: '5',
      sheet: {
        settings: { game: 'GAME_JAPANESE', japanese_target: 21 },
        players: [{ display_name: 'Nino' }, { seat: 1, display_name: 'Giorgi' }],
        pulkas: [
          {
            hands: [
              { cards: 18, cells: [{ tricks: 10, points: '2', outcome: 'HAND_OUTCOME_MADE' }, { seat: 1, tricks: 8, outcome: 'HAND_OUTCOME_MISSED' }] },
              { hand_index: 1, cards: 18, cells: [{ tricks: 12, points: '6', outcome: 'HAND_OUTCOME_MADE' }, { seat: 1, tricks: 6, outcome: 'HAND_OUTCOME_MISSED' }] },
            ],
            totals: [{ total: '8' }, { seat: 1 }],
          },
        ],
        totals: [{ total: '8' }, { seat: 1 }],
        current_hand: 2,
      },
    }).sheet;
    const m = buildSheetModel(sheet, null, { settings: null, names: [] });
    expect(m.game).toBe('japanese');
    expect(m.sul.map((s) => [s.total, s.course])).toEqual([
      ['8', 'neutral'],
      ['0', 'neutral'],
    ]);
    expect(m.sections[0]?.rows.map((r) => r.cells.map((c) => [c.bid, c.score]))).toEqual([
      [
        ['10', '2'],
        ['8', '0'],
      ],
      [
        ['12', '6'],
        ['6', '0'],
      ],
    ]);
    expect(m.foot.japaneseTarget).toBe(21);
  });
});

// pkg/scoring's own sheet JSON (what `pulkactl score` prints), read into the
// model of the wire's Sheet: the test checks both give the same score sheet.
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);
const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v !== '' ? Number(v) : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const bool = (v: unknown): boolean => v === true;
function fromScoringSheet(json: unknown): Sheet {
  const o = obj(json);
  const set = obj(o.settings);
  const hands = arr(o.hands).map(obj);
  const kh = str(set.khishti) || String(num(set.khishti) || 200);
  const settings: TableSettings = {
    ...settingsOf(undefined),
    game: 'classic',
    variant: set.variant === 'nines' ? 'nines' : 'standard',
    khishti: kh === '500' || kh === '100' || kh === 'per-card' ? kh : '200',
    premia: set.premia !== false,
    moshla: set.moshla !== false,
    restDocked: set.restDocked !== false,
  };
  const seatsOf = (a: unknown): number[] => arr(a).map(num);
  return {
    tableId: '',
    gameId: '',
    settings,
    players: [],
    pulkas: arr(o.pulkas).map((pv) => {
      const p = obj(pv);
      const first = num(p.first);
      const played = num(p.played);
      const premia = seatsOf(p.premia);
      const moshla = seatsOf(p.moshla);
      const total = seatsOf(p.total);
      return {
        pulkaIndex: num(p.index),
        finished: bool(p.finished),
        hands: hands.slice(first, first + played).map((h, i) => {
          const bids = seatsOf(h.bids);
          const tricks = seatsOf(h.tricks);
          const points = seatsOf(h.points);
          const results = arr(h.result).map(str);
          const struck = arr(h.struck).map(bool);
          return {
            handIndex: first + i,
            cards: num(h.cards),
            cells: bids.map((bid, seat) => {
              const r = results[seat];
              const khishti = r === 'khishti';
              return {
                seat,
                bid,
                tricks: tricks[seat] ?? 0,
                points: khishti ? 0 : (points[seat] ?? 0),
                penalty: khishti ? (points[seat] ?? 0) : 0,
                outcome: r === 'made' || r === 'missed' || r === 'khishti' ? r : 'unspecified',
                struck: struck[seat] ?? false,
              };
            }),
          };
        }),
        totals: total.map((t, seat) => ({ seat, premia: premia[seat] ?? 0, moshla: moshla[seat] ?? 0, total: t })),
      };
    }),
    totals: seatsOf(o.total).map((t, seat) => ({ seat, total: t, onCourse: arr(o.onCourse)[seat] === true })),
    currentHand: num(o.next),
  };
}
