// The Japanese table: your hand, both players' five columns (face-up cards
// shown, face-down ones as backs), the trump choice with bezi, the joker
// lead naming a suit, and the match score against the target.

import { t } from '../../i18n';
import { sortHand, type Card } from '../../protocol/cards';
import { playableCards } from '../../game/moves';
import { yourTurn, type TableState } from '../../game/state';
import { CardBack, CardButton, CardView } from '../../ui/Card';
import { cardName } from '../../ui/text';
import { Announcer, HandView, HiddenHand, progressKey, RejectionAlert, relative, SeatBox, seatName, TrickArea, useMoves, useOneMove, useTableSounds } from './parts';
import { JokerDialog, TrumpBadge, TrumpPanel, useJoker, type TableProps } from './ClassicTable';

function Columns({
  s,
  seat,
  playable,
  onPlay,
}: {
  s: TableState;
  seat: number;
  playable: Card[] | null;
  onPlay: (c: Card) => void;
}) {
  const x = s.seats[seat];
  if (!x) return null;
  const cols = Array.from({ length: 5 }, (_, i) => i);
  return (
    <div class="columns" role="group" aria-label={t('columns_of', { name: seatName(s, seat) })} data-testid={`columns-${seat}`}>
      {cols.map((i) => {
        const up = x.columnsUp[i] ?? null;
        const down = x.columnsDown[i] === true;
        return (
          <div key={i} class={`column${up === null && !down ? ' empty' : ''}`} data-testid={`column-${seat}-${i}`}>
            {down && <CardBack small label={t('face_down')} />}
            {up !== null &&
              (playable !== null ? (
                <CardButton card={up} playable={playable.includes(up)} dim={playable.length > 0 && !playable.includes(up)} onPlay={onPlay} />
              ) : (
                <CardView card={up} label={cardName(up)} />
              ))}
          </div>
        );
      })}
    </div>
  );
}

export function JapaneseTable({ s, send: sendNow, serverNow, online, header, live }: TableProps) {
  const { send, waiting } = useOneMove(s, sendNow);
  useTableSounds(s, live ?? true);
  const n = 2;
  const me = s.yourSeat;
  const other = me === null ? 1 : 1 - me;
  const bottom = me ?? 0;
  // What you may do comes from the server's list of your legal moves
  // (null until it has come): the cards of your hand and face-up columns
  // it names, a joker with its declarations.
  const moves = useMoves(s);
  const mine = yourTurn(s) && online && !waiting && moves !== null;
  const offer = mine ? moves : null;
  const playable = playableCards(offer);
  const { joker, play, choose, close } = useJoker(offer, send, true);
  const target = s.settings?.japaneseTarget || 21;
  const score = (seat: number) => s.seats[seat]?.score ?? 0;

  return (
    <div class={`table japanese phase-${s.phase}`} data-testid="japanese-table">
      {header}
      <div class="table-info">
        <span class="match-score" data-testid="match-score">
          {t('match_score', { a: seatName(s, bottom), sa: score(bottom), b: seatName(s, other), sb: score(other), target })}
        </span>
        <TrumpBadge trump={s.trump} turned={null} japanese />
      </div>
      <div class="felt two">
        <SeatBox s={s} seat={other} pos={relative(other, me, n) === 1 ? 2 : 0} serverNow={serverNow} japanese />
        <HiddenHand count={s.seats[other]?.handSize ?? 0} label={t('their_hand', { name: seatName(s, other), n: s.seats[other]?.handSize ?? 0 })} />
        <Columns s={s} seat={other} playable={null} onPlay={() => undefined} />
        <TrickArea s={s} n={n} japanese />
        <Columns s={s} seat={bottom} playable={me === null ? null : playable} onPlay={play} />
        <SeatBox s={s} seat={bottom} pos={0} serverNow={serverNow} japanese />
      </div>
      <RejectionAlert r={s.rejection} progress={progressKey(s)} />
      <div class="controls">
        {offer !== null && s.phase === 'choose_trump' && <TrumpPanel moves={offer} send={send} japanese />}
        {mine && s.phase === 'play' && (
          <p class="your-move" data-testid="your-move">
            {s.tricksPlayed === 0 && s.playedThisHand[bottom] !== true ? t('your_move_first_card') : t('your_move_play')}
          </p>
        )}
        {!mine && me !== null && s.turnSeat !== null && s.phase !== 'game_over' && s.phase !== 'none' && (
          <p class="waiting-for">{t('waiting_for', { name: seatName(s, s.turnSeat) })}</p>
        )}
      </div>
      {me !== null && <HandView cards={sortHand(s.hand, s.trump)} playable={playable} onPlay={play} disabled={!mine || s.phase !== 'play'} />}
      {joker !== null && <JokerDialog declarations={joker.declarations} japanese onClose={close} onChoose={choose} />}
      <Announcer s={s} japanese />
    </div>
  );
}
