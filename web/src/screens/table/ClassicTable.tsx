// The classic table: four seats around the felt, the trick in the middle,
// your hand at the bottom with only legal cards playable, and the bidding,
// trump and joker choices when they are yours to make.

import { useEffect, useState } from 'preact/hooks';
import { t } from '../../i18n';
import { isJoker, sortHand, SUITS, type Card, type Suit } from '../../protocol/cards';
import type { JokerAction, Trump } from '../../protocol/types';
import type { Move } from '../../protocol/frames';
import { forbiddenBid, playableNow } from '../../game/rules';
import { seatIsBot, yourTurn, type TableState } from '../../game/state';
import { CardView } from '../../ui/Card';
import { Dialog } from '../../ui/Dialog';
import { SUIT_SYMBOL, suitName, trumpName } from '../../ui/text';
import { pulkaName } from '../../ui/text';
import { Announcer, HandView, progressKey, RejectionAlert, relative, SeatBox, seatName, TrickArea, useOneMove, useTableSounds } from './parts';

export interface TableProps {
  s: TableState;
  send: (m: Move) => boolean;
  serverNow: () => number;
  online: boolean;
  /** Premia course per seat from the score sheet (null: unknown). */
  onCourse: (boolean | null)[];
  header: preact.ComponentChildren;
}

export function ClassicTable({ s, send: sendNow, serverNow, online, onCourse, header }: TableProps) {
  const [joker, setJoker] = useState<Card | null>(null);
  const { send, waiting } = useOneMove(s, sendNow);
  useTableSounds(s);
  const n = 4;
  const me = s.yourSeat;
  const mine = yourTurn(s) && online && !waiting;
  const playable = mine ? playableNow(s) : [];
  const hand = sortHand(s.hand, s.trump);
  const seats = Array.from({ length: n }, (_, i) => i);

  const play = (c: Card) => {
    if (isJoker(c)) setJoker(c);
    else send({ type: 'play', card: c });
  };

  return (
    <div class={`table classic phase-${s.phase}`} data-testid="classic-table">
      {header}
      <div class="table-info" aria-live="off">
        <span data-testid="hand-info">{t('hand_info', { n: s.handIndex + 1, cards: t('n_cards', { n: s.cardsPerSeat }), pulka: pulkaName(s.pulkaIndex) })}</span>
        <TrumpBadge trump={s.trump} turned={s.turnedCard} />
      </div>
      <div class="felt">
        {seats.map((seat) => (
          <SeatBox key={seat} s={s} seat={seat} pos={relative(seat, me, n)} serverNow={serverNow} japanese={false} onCourse={onCourse[seat] ?? null} />
        ))}
        <TrickArea s={s} n={n} japanese={false} />
      </div>
      <RejectionAlert r={s.rejection} progress={progressKey(s)} />
      <div class="controls">
        {me !== null && seatIsBot(s, me) && (
          <div class="panel" data-testid="retake-panel">
            <p>{t('bot_plays_you')}</p>
            <button type="button" class="primary" disabled={!online} onClick={() => sendNow({ type: 'sit', seat: me })} data-testid="retake-seat">
              {t('retake_seat')}
            </button>
          </div>
        )}
        {mine && s.phase === 'bid' && <BidPanel s={s} send={send} />}
        {mine && s.phase === 'choose_trump' && <TrumpPanel send={send} japanese={false} />}
        {!mine && me !== null && s.phase !== 'game_over' && s.turnSeat !== null && s.phase !== 'none' && (
          <p class="waiting-for" data-testid="waiting-for">
            {t('waiting_for', { name: seatName(s, s.turnSeat) })}
          </p>
        )}
        {mine && s.phase === 'play' && (
          <p class="your-move" data-testid="your-move">
            {t('your_move_play')}
          </p>
        )}
      </div>
      {me !== null && <HandView cards={hand} playable={playable} onPlay={play} disabled={!mine || s.phase !== 'play'} />}
      {joker !== null && (
        <JokerDialog
          leading={s.trick.length === 0}
          japanese={false}
          onClose={() => setJoker(null)}
          onChoose={(action, suit) => {
            setJoker(null);
            send({ type: 'play', card: joker, joker: suit ? { action, suit } : { action } });
          }}
        />
      )}
      <Announcer s={s} japanese={false} />
    </div>
  );
}

export function TrumpBadge({ trump, turned, japanese = false }: { trump: Trump | null; turned: Card | null; japanese?: boolean }) {
  return (
    <span class="trump-badge" role="group" data-testid="trump" aria-label={t('trump_is', { trump: trumpName(trump, japanese) })}>
      <span aria-hidden="true">{t('trump')}: </span>
      {turned !== null && <CardView key={turned} card={turned} small label={t('turned_card')} />}
      <span aria-hidden="true" class={trump === 'H' || trump === 'D' ? 'red' : ''}>
        {trump === null ? '…' : trump === 'none' ? trumpName(trump, japanese) : SUIT_SYMBOL[trump]}
      </span>
    </span>
  );
}

function BidPanel({ s, send }: { s: TableState; send: (m: Move) => boolean }) {
  const me = s.yourSeat ?? 0;
  const forbidden = forbiddenBid(s, me);
  const bids = Array.from({ length: s.cardsPerSeat + 1 }, (_, i) => i);
  // Keyboard play: a digit bids (outside form fields).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || !/^[0-9]$/.test(e.key)) return;
      if (e.target instanceof HTMLElement && e.target.closest('input, select, textarea, [role="dialog"]')) return;
      const n = Number(e.key);
      if (n <= s.cardsPerSeat && n !== forbidden) send({ type: 'bid', tricks: n });
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [s.cardsPerSeat, forbidden, send]);
  return (
    <div class="panel bid-panel" role="group" aria-label={t('bid_prompt')} data-testid="bid-panel">
      <p>{t('bid_prompt')}</p>
      <div class="bid-buttons">
        {bids.map((b) => (
          <button
            key={b}
            type="button"
            disabled={b === forbidden}
            aria-label={b === 0 ? t('bid_pass') : t('bid_n', { n: b })}
            aria-describedby={b === forbidden ? 'forbidden-bid-why' : undefined}
            data-testid={`bid-${b === 0 ? 'pass' : b}`}
            onClick={() => send({ type: 'bid', tricks: b })}
          >
            {b === 0 ? '–' : b}
          </button>
        ))}
      </div>
      {forbidden !== null && (
        <p id="forbidden-bid-why" class="hint" data-testid="forbidden-bid">
          {t('bid_forbidden', { n: forbidden, total: s.cardsPerSeat })}
        </p>
      )}
    </div>
  );
}

export function TrumpPanel({ send, japanese }: { send: (m: Move) => boolean; japanese: boolean }) {
  return (
    <div class="panel trump-panel" role="group" aria-label={t('trump_prompt')} data-testid="trump-panel">
      <p>{japanese ? t('trump_prompt_japanese') : t('trump_prompt')}</p>
      <div class="trump-buttons">
        {SUITS.map((su) => (
          <button key={su} type="button" class={su === 'H' || su === 'D' ? 'red' : ''} aria-label={suitName(su)} data-testid={`trump-${su}`} onClick={() => send({ type: 'trump', suit: su })}>
            {SUIT_SYMBOL[su]}
          </button>
        ))}
        <button type="button" data-testid="trump-none" onClick={() => send({ type: 'trump', suit: 'none' })}>
          {japanese ? t('trump_bezi') : t('trump_none')}
        </button>
      </div>
    </div>
  );
}

/**
 * How a joker is meant. Following: take or discard. Leading (classic): the
 * others' highest of a suit, or give the trick away in a suit. Japanese
 * jokers always take; a led one names the suit.
 */
export function JokerDialog({
  leading,
  japanese,
  onChoose,
  onClose,
}: {
  leading: boolean;
  japanese: boolean;
  onChoose: (a: JokerAction, suit?: Suit) => void;
  onClose: () => void;
}) {
  const suitButtons = (action: JokerAction, label: (s: string) => string) =>
    SUITS.map((su) => (
      <button
        key={`${action}-${su}`}
        type="button"
        class={su === 'H' || su === 'D' ? 'red' : ''}
        aria-label={label(suitName(su))}
        data-testid={`joker-${action}-${su}`}
        onClick={() => onChoose(action, su)}
      >
        {SUIT_SYMBOL[su]}
      </button>
    ));
  return (
    <Dialog title={t('joker_title')} onClose={onClose} testid="joker-dialog">
      {!leading ? (
        japanese ? (
          <div class="joker-choices">
            <button type="button" class="primary" data-testid="joker-take" onClick={() => onChoose('take')}>
              {t('joker_take_long')}
            </button>
          </div>
        ) : (
          <div class="joker-choices">
            <button type="button" class="primary" data-testid="joker-take" onClick={() => onChoose('take')}>
              {t('joker_take_long')}
            </button>
            <button type="button" data-testid="joker-discard" onClick={() => onChoose('discard')}>
              {t('joker_discard_long')}
            </button>
          </div>
        )
      ) : (
        <div class="joker-choices lead">
          <p>{japanese ? t('joker_name_suit') : t('joker_highest_long')}</p>
          <div class="suit-row">{suitButtons('highest', (su) => t('joker_highest_aria', { suit: su }))}</div>
          {!japanese && (
            <>
              <p>{t('joker_give_long')}</p>
              <div class="suit-row">{suitButtons('give', (su) => t('joker_give_aria', { suit: su }))}</div>
            </>
          )}
        </div>
      )}
    </Dialog>
  );
}
