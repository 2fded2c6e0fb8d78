// The classic table: four seats around the felt, the trick in the middle,
// your hand at the bottom with only legal cards playable, and the bidding,
// trump and joker choices when they are yours to make.

import { useEffect, useState } from 'preact/hooks';
import { t } from '../../i18n';
import { isJoker, sortHand, SUITS, type Card, type Suit } from '../../protocol/cards';
import type { JokerAction, JokerDecl, LegalMoves, Trump } from '../../protocol/types';
import type { Move } from '../../protocol/frames';
import { bidsLeftOut, declarationsFor, playableCards, playMove } from '../../game/moves';
import { seatIsBot, yourTurn, type TableState } from '../../game/state';
import { CardView } from '../../ui/Card';
import { Dialog } from '../../ui/Dialog';
import { SUIT_SYMBOL, suitName, trumpName } from '../../ui/text';
import { pulkaName } from '../../ui/text';
import { Announcer, HandView, progressKey, RejectionAlert, relative, SeatBox, seatName, TrickArea, useMoves, useOneMove, useTableSounds } from './parts';

export interface TableProps {
  s: TableState;
  send: (m: Move) => boolean;
  serverNow: () => number;
  online: boolean;
  /** Premia course per seat from the score sheet (null: unknown). */
  onCourse: (boolean | null)[];
  header: preact.ComponentChildren;
  /** The last event was live, not replayed after a (re)join (a reload replays the game: no burst of sounds). */
  live?: boolean;
}

export function ClassicTable({ s, send: sendNow, serverNow, online, onCourse, header, live }: TableProps) {
  const { send, waiting } = useOneMove(s, sendNow);
  useTableSounds(s, live ?? true);
  const n = 4;
  const me = s.yourSeat;
  // What you may do comes from the server's list of your legal moves
  // (null until it has come): nothing is offered without it.
  const moves = useMoves(s);
  const mine = yourTurn(s) && online && !waiting && moves !== null;
  const offer = mine ? moves : null;
  const { joker, play, choose, close } = useJoker(offer, send, false);
  const hand = sortHand(s.hand, s.trump);
  const seats = Array.from({ length: n }, (_, i) => i);

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
        {offer !== null && s.phase === 'bid' && <BidPanel s={s} moves={offer} send={send} />}
        {offer !== null && s.phase === 'choose_trump' && <TrumpPanel moves={offer} send={send} japanese={false} />}
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
      {me !== null && <HandView cards={hand} playable={playableCards(offer)} onPlay={play} disabled={!mine || s.phase !== 'play'} />}
      {joker !== null && <JokerDialog declarations={joker.declarations} japanese={false} onClose={close} onChoose={choose} />}
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

/**
 * The bids: 0 to the cards dealt, those the list of your legal moves
 * leaves out disabled (the dealer's forbidden bid), with why.
 */
function BidPanel({ s, moves, send }: { s: TableState; moves: LegalMoves; send: (m: Move) => boolean }) {
  const bids = Array.from({ length: s.cardsPerSeat + 1 }, (_, i) => i);
  const allowed = (b: number) => moves.bids.includes(b);
  // The engine leaves one bid out, the dealer's forbidden one: say why.
  const out = bidsLeftOut(moves, s.cardsPerSeat);
  const forbidden = out.length === 1 ? (out[0] ?? null) : null;
  // Keyboard play: a digit bids (outside form fields).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || !/^[0-9]$/.test(e.key)) return;
      if (e.target instanceof HTMLElement && e.target.closest('input, select, textarea, [role="dialog"]')) return;
      const n = Number(e.key);
      if (moves.bids.includes(n)) send({ type: 'bid', tricks: n });
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [moves, send]);
  return (
    <div class="panel bid-panel" role="group" aria-label={t('bid_prompt')} data-testid="bid-panel">
      <p>{t('bid_prompt')}</p>
      <div class="bid-buttons">
        {bids.map((b) => (
          <button
            key={b}
            type="button"
            disabled={!allowed(b)}
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

/** The trumps (four suits and no trump, or bezi), those the list of your legal moves leaves out disabled. */
export function TrumpPanel({ moves, send, japanese }: { moves: LegalMoves; send: (m: Move) => boolean; japanese: boolean }) {
  return (
    <div class="panel trump-panel" role="group" aria-label={t('trump_prompt')} data-testid="trump-panel">
      <p>{japanese ? t('trump_prompt_japanese') : t('trump_prompt')}</p>
      <div class="trump-buttons">
        {SUITS.map((su) => (
          <button
            key={su}
            type="button"
            class={su === 'H' || su === 'D' ? 'red' : ''}
            disabled={!moves.trumps.includes(su)}
            aria-label={suitName(su)}
            data-testid={`trump-${su}`}
            onClick={() => send({ type: 'trump', suit: su })}
          >
            {SUIT_SYMBOL[su]}
          </button>
        ))}
        <button type="button" disabled={!moves.trumps.includes('none')} data-testid="trump-none" onClick={() => send({ type: 'trump', suit: 'none' })}>
          {japanese ? t('trump_bezi') : t('trump_none')}
        </button>
      </div>
    </div>
  );
}

/**
 * Playing a card: a joker with more than one declaration allowed asks
 * which (the dialog), one with a single declaration (a Japanese joker
 * answering a lead takes) is played with it at once. The dialog closes when
 * the move stops being yours.
 */
export function useJoker(
  moves: LegalMoves | null,
  send: (m: Move) => boolean,
  japanese: boolean,
): { joker: { card: Card; declarations: JokerDecl[] } | null; play: (c: Card) => void; choose: (d: JokerDecl) => void; close: () => void } {
  const [card, setCard] = useState<Card | null>(null);
  useEffect(() => {
    if (moves === null) setCard(null);
  }, [moves]);
  const declarations = card === null ? [] : declarationsFor(moves, card, japanese);
  return {
    joker: card !== null && declarations.length > 0 ? { card, declarations } : null,
    play: (c: Card) => {
      if (!isJoker(c)) {
        send(playMove(c));
        return;
      }
      const ds = declarationsFor(moves, c, japanese);
      const only = ds.length === 1 ? ds[0] : undefined;
      if (only) send(playMove(c, only));
      else setCard(c);
    },
    choose: (d: JokerDecl) => {
      const c = card;
      setCard(null);
      if (c !== null) send(playMove(c, d));
    },
    close: () => setCard(null),
  };
}

/**
 * How a joker is meant, among the declarations the list of your legal
 * moves gives it: following, take or discard (a Japanese joker only
 * takes); leading, the others' highest of a suit, or give the trick away
 * in a suit (a Japanese one names the suit).
 */
export function JokerDialog({
  declarations,
  japanese,
  onChoose,
  onClose,
}: {
  declarations: JokerDecl[];
  japanese: boolean;
  onChoose: (d: JokerDecl) => void;
  onClose: () => void;
}) {
  const plain = (action: JokerAction) => declarations.find((d) => d.action === action && d.suit === null);
  const suited = (action: JokerAction) => declarations.filter((d): d is JokerDecl & { suit: Suit } => d.action === action && d.suit !== null);
  const take = plain('take');
  const discard = plain('discard');
  const highest = suited('highest');
  const give = suited('give');
  const suitButtons = (ds: (JokerDecl & { suit: Suit })[], label: (s: string) => string) =>
    ds.map((d) => (
      <button
        key={`${d.action}-${d.suit}`}
        type="button"
        class={d.suit === 'H' || d.suit === 'D' ? 'red' : ''}
        aria-label={label(suitName(d.suit))}
        data-testid={`joker-${d.action}-${d.suit}`}
        onClick={() => onChoose(d)}
      >
        {SUIT_SYMBOL[d.suit]}
      </button>
    ));
  return (
    <Dialog title={t('joker_title')} onClose={onClose} testid="joker-dialog">
      {(take || discard) && (
        <div class="joker-choices">
          {take && (
            <button type="button" class="primary" data-testid="joker-take" onClick={() => onChoose(take)}>
              {t('joker_take_long')}
            </button>
          )}
          {discard && (
            <button type="button" data-testid="joker-discard" onClick={() => onChoose(discard)}>
              {t('joker_discard_long')}
            </button>
          )}
        </div>
      )}
      {(highest.length > 0 || give.length > 0) && (
        <div class="joker-choices lead">
          {highest.length > 0 && (
            <>
              <p>{japanese ? t('joker_name_suit') : t('joker_highest_long')}</p>
              <div class="suit-row">{suitButtons(highest, (su) => t('joker_highest_aria', { suit: su }))}</div>
            </>
          )}
          {give.length > 0 && (
            <>
              <p>{t('joker_give_long')}</p>
              <div class="suit-row">{suitButtons(give, (su) => t('joker_give_aria', { suit: su }))}</div>
            </>
          )}
        </div>
      )}
    </Dialog>
  );
}
