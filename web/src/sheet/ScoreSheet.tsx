// The score sheet drawn like paper: a column of cards dealt, a bid and a
// score column per player, pulka headings with their state, Σ lines with the
// premia (+) or moshla (−), the "sul" line, and the foot with the rules. A
// pure function of the model (model.ts); colours always come with a mark.

import { t } from '../i18n';
import { khishtiName, playerName, pulkaName } from '../ui/text';
import type { CellModel, Course, SheetModel } from './model';
import { Avatar } from '../ui/Avatar';

const OUTCOME_KEY = {
  made: 'sheet_made',
  missed: 'sheet_missed',
  khishti: 'sheet_khishti',
  in_progress: 'sheet_in_progress',
  empty: 'sheet_empty',
} as const;

function cellLabel(name: string, hand: number, c: CellModel): string {
  const parts = [t('sheet_cell_who', { name, hand: hand + 1 })];
  if (c.bid !== '') parts.push(c.bid === '–' ? t('sheet_cell_pass') : t('sheet_cell_bid', { n: c.bid }));
  if (c.outcome === 'in_progress') {
    if (c.score !== '') parts.push(t('sheet_cell_so_far', { n: c.score }));
  } else if (c.score !== '') {
    parts.push(t('sheet_cell_score', { n: c.score }), t(OUTCOME_KEY[c.outcome]));
  }
  if (c.struck) parts.push(t('sheet_struck'));
  return parts.join(', ');
}

function courseLabel(c: Course): string {
  return c === 'on' ? t('sheet_on_course') : c === 'off' ? t('sheet_off_course') : '';
}

/** The verify view of each finished hand whose deal was revealed (FairDeal.tsx). */
export interface SheetVerify {
  can: (handIndex: number) => boolean;
  open: (handIndex: number) => void;
}

export function ScoreSheet({ model, verify }: { model: SheetModel; verify?: SheetVerify }) {
  const japanese = model.game === 'japanese';
  const cols = model.players.length * 2 + 1;
  return (
    // Focusable: on a phone the paper scrolls sideways, and a keyboard must be able to scroll it too.
    <div class="sheet-paper" data-testid="score-sheet" tabIndex={0} role="region" aria-label={t('sheet_title')}>
      <table class="sheet">
        <caption class="sr-only">{t('sheet_title')}</caption>
        <thead>
          <tr>
            <th scope="col" rowSpan={2} class="cards-col">
              {japanese ? t('sheet_hand') : t('sheet_cards')}
            </th>
            {model.players.map((p) => (
              <th key={p.seat} scope="colgroup" colSpan={2} class={`player course-${p.course}`} data-testid={`sheet-player-${p.seat}`}>
                <Avatar name={playerName(p.name)} id={p.id || p.name} bot={p.bot} /> <span class="name">{playerName(p.name)}</span>
                {p.course === 'off' && (
                  <span class="course-mark" title={courseLabel(p.course)}>
                    {' '}✗<span class="sr-only">{courseLabel(p.course)}</span>
                  </span>
                )}
              </th>
            ))}
          </tr>
          <tr>
            {model.players.map((p) => [
              <th key={`b${p.seat}`} scope="col" class="sub">
                {japanese ? t('sheet_tricks') : t('sheet_bid')}
              </th>,
              <th key={`s${p.seat}`} scope="col" class="sub">
                {japanese ? t('sheet_points') : t('sheet_score')}
              </th>,
            ])}
          </tr>
        </thead>
        {model.sections.map((sec) => (
          <tbody key={sec.pulkaIndex} data-testid={`sheet-pulka-${sec.pulkaIndex}`}>
            {!japanese && (
              <tr class="pulka-head">
                <th colSpan={cols} scope="rowgroup">
                  {pulkaName(sec.pulkaIndex)}{' '}
                  <span class={sec.finished ? 'state finished' : 'state progress'}>
                    {sec.finished ? t('sheet_finished') : t('sheet_progress', { played: sec.played, size: sec.size })}
                  </span>
                </th>
              </tr>
            )}
            {sec.rows.map((r) => (
              <tr key={r.handIndex} class={r.current ? 'sheet-row current' : 'sheet-row'} data-testid={`sheet-hand-${r.handIndex}`}>
                <th scope="row" class="cards-col">
                  {japanese ? r.handIndex + 1 : r.cards}
                  {verify && !r.current && verify.can(r.handIndex) && (
                    <button
                      type="button"
                      class="verify-hand"
                      title={t('fair_verify_hand', { n: r.handIndex + 1 })}
                      aria-label={t('fair_verify_hand', { n: r.handIndex + 1 })}
                      onClick={() => verify.open(r.handIndex)}
                      data-testid={`verify-hand-${r.handIndex}`}
                    >
                      ✓
                    </button>
                  )}
                </th>
                {r.cells.map((c) => {
                  const name = playerName(model.players[c.seat]?.name ?? '');
                  return [
                    <td key={`b${c.seat}`} class="bid" data-testid={`sheet-bid-${r.handIndex}-${c.seat}`}>
                      {c.bid}
                    </td>,
                    <td
                      key={`s${c.seat}`}
                      class={`score ${c.outcome}${c.struck ? ' struck' : ''}`}
                      data-testid={`sheet-score-${r.handIndex}-${c.seat}`}
                      data-outcome={c.outcome}
                      aria-label={cellLabel(name, r.handIndex, c)}
                    >
                      {c.struck ? <s>{c.score}</s> : c.score}
                      {c.mark && (
                        <span class="mark" aria-hidden="true">
                          {c.mark}
                        </span>
                      )}
                    </td>,
                  ];
                })}
              </tr>
            ))}
            {!japanese && (
              <tr class="sigma">
                <th scope="row" class="cards-col" aria-label={t('sheet_sigma')}>
                  Σ
                </th>
                {sec.sigma.map((g) => (
                  <td key={g.seat} colSpan={2} class="sigma-cell" data-testid={`sheet-sigma-${sec.pulkaIndex}-${g.seat}`}>
                    <span class="total">{g.total}</span>
                    {g.extra && (
                      <span class={`extra ${g.extraKind ?? ''}`} aria-label={g.extraKind === 'premia' ? t('sheet_premia_n', { n: g.extra }) : t('sheet_moshla_n', { n: g.extra })}>
                        {' '}({g.extra})
                      </span>
                    )}
                  </td>
                ))}
              </tr>
            )}
          </tbody>
        ))}
        <tfoot>
          <tr class="sul">
            <th scope="row" class="cards-col">
              {t('sheet_sul')}
            </th>
            {model.sul.map((s) => (
              <td key={s.seat} colSpan={2} class={`sul-cell course-${s.course}`} data-testid={`sheet-sul-${s.seat}`} data-course={s.course}>
                {s.total}
                {s.course !== 'neutral' && <span class="sr-only"> {courseLabel(s.course)}</span>}
              </td>
            ))}
          </tr>
        </tfoot>
      </table>
      <p class="sheet-foot" data-testid="sheet-foot">
        {japanese
          ? t('sheet_foot_japanese', { target: model.foot.japaneseTarget })
          : [
              model.foot.variant === 'nines' ? t('variant_nines') : t('variant_standard'),
              model.foot.over
                ? t('sheet_foot_over')
                : t('sheet_foot_hand', { n: model.foot.hand, of: model.foot.hands, cards: model.foot.cards, pulka: pulkaName(model.foot.pulkaIndex) }),
              t('sheet_foot_khishti', { what: khishtiName(model.foot.khishti) }),
              model.foot.premia ? (model.foot.moshla ? (model.foot.restDocked ? t('sheet_foot_pm_docked') : t('sheet_foot_pm_not_docked')) : t('sheet_foot_premia_only')) : t('sheet_foot_no_premia'),
            ].join(' · ')}
      </p>
      {!japanese && <p class="sheet-legend">{t('sheet_legend')}</p>}
    </div>
  );
}
