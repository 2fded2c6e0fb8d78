// The score sheet (purceli) as rows and cells ready to draw: a pure function
// of the server's sheet (pulka.scoring.v1.Sheet) and, for the hand being
// played, the bids and tricks the table has shown so far. Every number is
// written here — whole points in the hand rows, /100 notation on the Σ and
// sul lines — so the component that draws it only lays it out.

import type { HandOutcome, Khishti, Sheet, TableSettings, Variant } from '../protocol/types';
import { formatPoints, formatSigned, formatWhole } from './notation';
import { cardsInHand, handsIn, pulkaOf, pulkaSize } from './schedule';

/** The hand being played, from the table (the server's sheet has only finished hands). */
export interface LiveHand {
  handIndex: number;
  cards: number;
  bids: (number | null)[];
  tricks: number[];
}

export type CellOutcome = Exclude<HandOutcome, 'unspecified'> | 'empty';

export interface CellModel {
  seat: number;
  /** '' before the bid, '–' for a pass, else the bid. */
  bid: string;
  /** The score as written: whole points, or tricks so far in the current hand. */
  score: string;
  outcome: CellOutcome;
  struck: boolean;
  /** A mark that says the outcome without colour. */
  mark: '' | '✓' | '✗' | '!';
  points: number;
}

export interface RowModel {
  handIndex: number;
  cards: number;
  current: boolean;
  cells: CellModel[];
}

export interface SigmaModel {
  seat: number;
  total: string;
  /** The premia (+) or moshla (−) beside the total; '' when none. */
  extra: string;
  extraKind: 'premia' | 'moshla' | null;
}

export interface SectionModel {
  pulkaIndex: number;
  finished: boolean;
  played: number;
  size: number;
  rows: RowModel[];
  sigma: SigmaModel[];
}

export type Course = 'on' | 'off' | 'neutral';

export interface SheetModel {
  game: 'classic' | 'japanese';
  /** id: the player's id, which gives the avatar its colour (the same on the table, the sheet and the end screen). */
  players: { seat: number; name: string; id: string; bot: boolean; course: Course }[];
  sections: SectionModel[];
  sul: { seat: number; total: string; points: number; course: Course }[];
  foot: {
    variant: Variant;
    /** 1-based; 0 when the game is over. */
    hand: number;
    hands: number;
    cards: number;
    pulkaIndex: number;
    khishti: Khishti;
    premia: boolean;
    moshla: boolean;
    restDocked: boolean;
    japaneseTarget: number;
    over: boolean;
  };
}

export const PASS = '–';

function bidText(bid: number | null): string {
  if (bid === null) return '';
  return bid === 0 ? PASS : String(bid);
}

function markOf(o: CellOutcome): CellModel['mark'] {
  switch (o) {
    case 'made':
      return '✓';
    case 'missed':
      return '✗';
    case 'khishti':
      return '!';
    default:
      return '';
  }
}

/**
 * Builds the sheet model. sheet may be null before the server has published
 * one (the first hand); settings and names then come from the table.
 */
export function buildSheetModel(
  sheet: Sheet | null,
  live: LiveHand | null,
  fallback: { settings: TableSettings | null; names: string[]; ids?: string[]; bots?: boolean[] },
): SheetModel {
  const settings = sheet?.settings.game ? sheet.settings : fallback.settings;
  const game = settings?.game === 'japanese' ? 'japanese' : 'classic';
  const variant: Variant = settings?.variant ?? 'standard';
  const seats = sheet && sheet.players.length > 0 ? sheet.players.length : Math.max(fallback.names.length, game === 'japanese' ? 2 : 4);
  const name = (seat: number): string =>
    sheet?.players.find((p) => p.seat === seat)?.name || fallback.names[seat] || `${seat + 1}`;
  const id = (seat: number): string => fallback.ids?.[seat] || sheet?.players.find((p) => p.seat === seat)?.playerId || '';

  const sections: SectionModel[] = [];
  for (const p of sheet?.pulkas ?? []) {
    sections.push({
      pulkaIndex: p.pulkaIndex,
      finished: p.finished,
      played: p.hands.length,
      size: game === 'japanese' ? p.hands.length : pulkaSize(variant, p.pulkaIndex),
      rows: p.hands.map((h) => ({
        handIndex: h.handIndex,
        cards: h.cards,
        current: false,
        cells: range(seats).map((seat): CellModel => {
          const c = h.cells.find((x) => x.seat === seat);
          if (!c) return { seat, bid: '', score: '', outcome: 'empty', struck: false, mark: '', points: 0 };
          const outcome: CellOutcome = c.outcome === 'unspecified' ? 'empty' : c.outcome;
          const points = c.outcome === 'khishti' ? c.penalty : c.points;
          return {
            seat,
            bid: game === 'japanese' ? String(c.tricks) : bidText(c.bid),
            score: outcome === 'in_progress' ? String(c.tricks) : formatWhole(points),
            outcome,
            struck: c.struck,
            mark: markOf(outcome),
            points,
          };
        }),
      })),
      sigma: range(seats).map((seat): SigmaModel => {
        const t = p.totals.find((x) => x.seat === seat);
        const premia = t?.premia ?? 0;
        const moshla = t?.moshla ?? 0;
        const extra = premia !== 0 ? premia : moshla;
        return {
          seat,
          total: formatPoints(t?.total ?? 0),
          extra: extra !== 0 ? formatSigned(extra) : '',
          extraKind: premia !== 0 ? 'premia' : moshla !== 0 ? 'moshla' : null,
        };
      }),
    });
  }

  // The hand in play: bids as they are made, tricks so far in the score cell.
  const onSheet = sections.some((s) => s.rows.some((r) => r.handIndex === live?.handIndex));
  if (live && game === 'classic' && !onSheet) {
    const p = pulkaOf(variant, live.handIndex);
    let sec = sections.find((s) => s.pulkaIndex === p);
    if (!sec) {
      sec = {
        pulkaIndex: p,
        finished: false,
        played: 0,
        size: pulkaSize(variant, p),
        rows: [],
        sigma: range(seats).map((seat) => ({ seat, total: formatPoints(0), extra: '', extraKind: null })),
      };
      sections.push(sec);
    }
    sec.rows.push({
      handIndex: live.handIndex,
      cards: live.cards || cardsInHand(variant, live.handIndex),
      current: true,
      cells: range(seats).map((seat) => ({
        seat,
        bid: bidText(live.bids[seat] ?? null),
        score: live.bids[seat] === null || live.bids[seat] === undefined ? '' : String(live.tricks[seat] ?? 0),
        outcome: 'in_progress',
        struck: false,
        mark: '',
        points: 0,
      })),
    });
  }
  sections.sort((a, b) => a.pulkaIndex - b.pulkaIndex);

  const hands = handsIn(variant);
  const finishedPulkas = (sheet?.pulkas ?? []).filter((p) => p.finished).length;
  const over =
    game === 'classic'
      ? finishedPulkas >= 4
      : (sheet?.pulkas[0]?.finished ?? false);
  // The colour of a total tells the premia course; with the premia off, or
  // once the game is over, there is nothing to be on course for.
  const coloured = game === 'classic' && (settings?.premia ?? true) && !over;
  const courseOf = (seat: number): Course => {
    if (!coloured) return 'neutral';
    const t = sheet?.totals.find((x) => x.seat === seat);
    if (!t) return 'on'; // before the first hand everybody is on course
    return t.onCourse ? 'on' : 'off';
  };

  const current = live?.handIndex ?? sheet?.currentHand ?? 0;
  // Japanese scores are small whole numbers (the trick difference), written as they are.
  const total = game === 'japanese' ? formatWhole : formatPoints;
  return {
    game,
    players: range(seats).map((seat) => ({ seat, name: name(seat), id: id(seat), bot: fallback.bots?.[seat] ?? false, course: courseOf(seat) })),
    sections,
    sul: range(seats).map((seat) => {
      const points = sheet?.totals.find((x) => x.seat === seat)?.total ?? 0;
      return { seat, total: total(points), points, course: courseOf(seat) };
    }),
    foot: {
      variant,
      hand: over ? 0 : Math.min(current, hands - 1) + 1,
      hands,
      cards: cardsInHand(variant, current),
      pulkaIndex: pulkaOf(variant, current),
      khishti: settings?.khishti ?? '200',
      premia: settings?.premia ?? true,
      moshla: settings?.moshla ?? true,
      restDocked: settings?.restDocked ?? true,
      japaneseTarget: settings?.japaneseTarget ?? 21,
      over,
    },
  };
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
