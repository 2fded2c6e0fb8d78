// Pieces both tables use: a seat, the trick in the middle, your hand, the
// refusal message, the live announcements, and the score sheet dialog.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { Move } from '../../protocol/frames';
import { t } from '../../i18n';
import type { Card } from '../../protocol/cards';
import type { LegalMoves, PlayedCard } from '../../protocol/types';
import { awaitingList, LIST_WAIT_MS, movesNow } from '../../game/moves';
import { seatIsBot, yourTurn, type Notice, type Rejection, type SeatState, type TableState } from '../../game/state';
import { Avatar } from '../../ui/Avatar';
import { CardButton, CardView, FannedBacks } from '../../ui/Card';
import { play, setSound, soundFor, soundOn } from '../../ui/sound';
import { Timer } from '../../ui/Timer';
import { botText, cardName, endText, playerName, rejectText, SUIT_SYMBOL, trumpName } from '../../ui/text';
import { formatPoints } from '../../sheet/notation';
import { useTick } from '../../ui/hooks';

/** Where a seat sits on screen, counted clockwise from yours (0 = you, at the bottom). */
export function relative(seat: number, you: number | null, n: number): number {
  return (seat - (you ?? 0) + n) % n;
}

export function seatName(s: TableState, seat: number): string {
  const p = s.seats[seat]?.player;
  if (!p) return t('seat_n', { n: seat + 1 });
  if (p.bot && !p.name) return t('bot');
  return p.name ? playerName(p.name) : t('seat_n', { n: seat + 1 });
}

/** The words under a seat's name: the bid ("bid 3", "passed", "no bid yet")
 * and the tricks taken ("took 1"), so a newcomer reads them at once. */
export function seatWords(bid: number | null, tricks: number, japanese: boolean): { bid: string | null; tricks: string } {
  if (japanese) return { bid: null, tricks: t('seat_tricks', { n: tricks }) };
  return {
    bid: bid === null ? t('seat_no_bid') : bid === 0 ? t('seat_passed') : t('seat_bid', { n: bid }),
    tricks: t('seat_took', { n: tricks }),
  };
}

export function SeatBox({
  s,
  seat,
  pos,
  serverNow,
  japanese,
  onCourse,
}: {
  s: TableState;
  seat: number;
  pos: number;
  serverNow: () => number;
  japanese: boolean;
  onCourse?: boolean | null;
}) {
  const x: SeatState | undefined = s.seats[seat];
  useTick(1000, x?.graceDeadline != null);
  if (!x) return null;
  const name = seatName(s, seat);
  const turn = s.turnSeat === seat && s.phase !== 'game_over' && s.phase !== 'none';
  const you = seat === s.yourSeat;
  const dealer = s.dealerSeat === seat && s.phase !== 'waiting';
  const graceLeft = x.graceDeadline !== null ? Math.max(0, Math.ceil((x.graceDeadline - serverNow()) / 1000)) : null;
  const words = seatWords(x.bid, x.tricks, japanese);
  const course = onCourse === true ? t('sheet_on_course') : onCourse === false ? t('sheet_off_course') : '';
  const label = [
    name,
    you ? t('you') : '',
    dealer ? (japanese ? t('declarer') : t('dealer')) : '',
    !japanese && x.bid !== null ? (x.bid === 0 ? t('seat_passed') : t('seat_bid', { n: x.bid })) : '',
    t('seat_tricks', { n: x.tricks }),
    course,
    x.away ? t('away') : '',
    x.player.bot ? t('bot') : '',
    turn ? t('their_turn') : '',
  ]
    .filter(Boolean)
    .join(', ');
  // Opponents' cards as backs (classic; the Japanese table draws its own).
  const fan = !japanese && !you && x.handSize > 0 && s.phase !== 'game_over';
  return (
    <section class={`seat pos-${pos}${turn ? ' turn' : ''}${you ? ' you' : ''}${x.away ? ' away' : ''}${x.player.bot ? ' bot' : ''}`} aria-label={label} data-testid={`seat-${seat}`}>
      <div class="seat-id">
        <Avatar name={name} id={x.player.playerId || name} bot={x.player.bot} />
        <span class={`seat-name${onCourse === false ? ' off-course' : ''}`}>{name}</span>
        {dealer && (
          <span class="chip dealer" title={japanese ? t('declarer') : t('dealer')} data-testid={`dealer-${seat}`}>
            {/* A letter of the language (the chip is round already): a symbol such as Ⓓ is missing from common fonts. */}
            {japanese ? t('declarer_chip') : t('dealer_chip')}
          </span>
        )}
      </div>
      <div class="seat-stats" aria-hidden="true">
        {words.bid !== null && (
          <span class={`bid${x.bid === null ? ' none' : ''}`} data-testid={`seat-bid-${seat}`}>
            {words.bid}
          </span>
        )}
        <span class="tricks" data-testid={`seat-tricks-${seat}`}>
          {words.tricks}
        </span>
        <span
          class={`score${onCourse === true ? ' on-course' : onCourse === false ? ' off-course' : ''}`}
          data-testid={`seat-score-${seat}`}
          title={course || undefined}
        >
          {japanese ? x.score : formatPoints(x.score)}
          {onCourse === true ? ' ✓' : onCourse === false ? ' ✗' : ''}
        </span>
      </div>
      {fan && <FannedBacks count={x.handSize} label={t('their_hand', { name, n: x.handSize })} testid={`seat-hand-${seat}`} />}
      {x.player.bot && (
        <span class="marker bot-marker" data-testid={`bot-marker-${seat}`}>
          {x.botReason && x.botReason !== 'filled' ? botText(x.botReason) : t('bot')}
        </span>
      )}
      {x.away && (
        <span class="marker away-marker" data-testid={`away-marker-${seat}`}>
          {graceLeft !== null ? t('away_for', { s: graceLeft }) : t('away')}
        </span>
      )}
      {turn && <Timer deadline={s.deadline} serverNow={serverNow} mine={you} total={s.settings?.moveTime ?? 30} />}
    </section>
  );
}

/** Which side of the table a seat's place is on (b, l, t, r), for the motion of its cards. */
export function side(pos: number, n: number): 'b' | 'l' | 't' | 'r' {
  if (n === 2) return pos === 0 ? 'b' : 't';
  return (['b', 'l', 't', 'r'] as const)[pos % 4] ?? 'b';
}

/** The cards in the middle: the trick being played or, until the next card, the last one and who took it. */
export function TrickArea({ s, n, japanese }: { s: TableState; n: number; japanese: boolean }) {
  const showing: PlayedCard[] = s.trick.length > 0 ? s.trick : (s.lastTrick?.cards ?? []);
  const winner = s.trick.length === 0 ? (s.lastTrick?.winner ?? null) : null;
  return (
    <div class={`trick${winner !== null ? ` won-${side(relative(winner, s.yourSeat, n), n)}` : ''}`} role="group" aria-label={t('trick')} data-testid="trick">
      {showing.map((p) => (
        <div
          key={p.card}
          class={`played pos-${relative(p.seat, s.yourSeat, n)} in-${side(relative(p.seat, s.yourSeat, n), n)}${winner === p.seat ? ' winner' : ''}`}
          data-testid={`played-${p.seat}`}
        >
          <CardView card={p.card} label={`${seatName(s, p.seat)}: ${cardName(p.card)}${p.joker ? ` (${jokerText(p, japanese)})` : ''}`} />
          {p.joker && (
            <span class="joker-decl" aria-hidden="true">
              {jokerText(p, japanese)}
            </span>
          )}
        </div>
      ))}
      {winner !== null && (
        <p class="trick-winner" data-testid="trick-winner">
          {t('took_trick', { name: seatName(s, winner) })}
        </p>
      )}
    </div>
  );
}

export function jokerText(p: PlayedCard, japanese: boolean): string {
  const j = p.joker;
  if (!j) return '';
  const suit = j.suit ? SUIT_SYMBOL[j.suit] : '';
  switch (j.action) {
    case 'take':
      return t('joker_take');
    case 'discard':
      return t('joker_discard');
    case 'highest':
      return japanese ? t('joker_named', { suit }) : t('joker_highest_s', { suit });
    case 'give':
      return t('joker_give_s', { suit });
  }
}

/** Your hand: buttons, the legal ones playable; arrows move between cards. */
export function HandView({ cards, playable, onPlay, disabled }: { cards: Card[]; playable: Card[]; onPlay: (c: Card) => void; disabled: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight' && e.key !== 'Home' && e.key !== 'End') return;
    const btns = Array.from(ref.current?.querySelectorAll<HTMLButtonElement>('button.card') ?? []);
    const i = btns.indexOf(document.activeElement as HTMLButtonElement);
    const j = e.key === 'ArrowLeft' ? Math.max(0, i - 1) : e.key === 'ArrowRight' ? Math.min(btns.length - 1, i + 1) : e.key === 'Home' ? 0 : btns.length - 1;
    btns[j]?.focus();
    e.preventDefault();
  };
  return (
    <div class={`hand${cards.length > 9 ? ' many' : ''}`} role="group" aria-label={t('your_hand', { n: cards.length })} ref={ref} onKeyDown={onKey} data-testid="hand">
      {cards.map((c, i) => (
        <CardButton key={c} card={c} index={i} playable={!disabled && playable.includes(c)} dim={!disabled && !playable.includes(c)} onPlay={onPlay} />
      ))}
    </div>
  );
}

/** The other player's hand (Japanese): backs, fanned, with the count. */
export function HiddenHand({ count, label }: { count: number; label: string }) {
  return (
    <div class="hidden-hand" data-testid="hidden-hand">
      <FannedBacks count={count} label={label} />
    </div>
  );
}

/** Plays the sound of what just happened (when sounds are on): a card, a
 * trick taken, the game's end, and the start of your own turn; nothing for
 * the history replayed after a (re)join (live false). */
export function useTableSounds(s: TableState, live = true): void {
  const mine = yourTurn(s);
  const prev = useRef<{ notice: Notice | null; mine: boolean }>({ notice: s.notice, mine });
  useEffect(() => {
    const turnStarted = mine && !prev.current.mine;
    const fresh = s.notice !== prev.current.notice ? s.notice : null;
    if (live && (fresh || turnStarted)) play(soundFor(fresh, turnStarted));
    prev.current = { notice: s.notice, mine };
  });
}

/** The sounds switch of the table's header (off until the player turns it on; remembered). */
export function SoundSwitch() {
  const on = soundOn.value;
  return (
    <button type="button" class={`sound-switch${on ? ' on' : ''}`} aria-pressed={on} title={t('sound_toggle')} onClick={() => setSound(!on)} data-testid="sound-switch">
      <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
        <path d="M3 9h4l5-4v14l-5-4H3z" fill="currentColor" />
        {on ? <path d="M15 8c2 2 2 6 0 8M18 5c4 4 4 10 0 14" fill="none" stroke="currentColor" stroke-width="2" /> : <path d="M15 9l6 6m0-6-6 6" stroke="currentColor" stroke-width="2" />}
      </svg>
      <span class="sr-only">{t('sound_toggle')}</span>
    </button>
  );
}

/** Where the game is: it changes with every bid, trump, card and trick
 * (and a refusal is not progress). */
export function progressKey(s: TableState): string {
  return [s.handIndex, s.phase, s.turnSeat, s.trump, s.trick.length, s.hand.length, s.lastTrick?.winner].join('/');
}

/**
 * One move per turn: a move sent is not sent again until the table has
 * moved on (or refused it). A double click on a card otherwise sends the
 * card twice, and the second is refused with a false "not your turn".
 */
export function useOneMove(s: TableState, send: (m: Move) => boolean): { send: (m: Move) => boolean; waiting: boolean } {
  const key = `${progressKey(s)}#${String(s.rejection?.serial ?? 0)}`;
  // A ref, not state: both clicks of a double click run before a re-render.
  const sentAt = useRef<string | null>(null);
  const [, rerender] = useState(0);
  // Once the table moved on the move is answered. Forget it: the same place
  // can come again (a Japanese card from a column leaves the hand's size,
  // and the trick taken empties the trick as it was).
  if (sentAt.current !== null && sentAt.current !== key) sentAt.current = null;
  // A move the table neither takes nor refuses (it should not happen: a
  // move lost with the connection is sent again) frees the controls after
  // a while rather than never.
  useEffect(() => {
    if (sentAt.current !== key) return undefined;
    const h = setTimeout(() => {
      sentAt.current = null;
      rerender((x) => x + 1);
    }, ONE_MOVE_WAIT_MS);
    return () => clearTimeout(h);
  });
  return {
    waiting: sentAt.current === key,
    send: (m: Move) => {
      if (sentAt.current === key) return false;
      const ok = send(m);
      if (ok) {
        sentAt.current = key;
        rerender((x) => x + 1);
      }
      return ok;
    },
  };
}

const ONE_MOVE_WAIT_MS = 8000;

/**
 * The moves to offer you now (game/moves.ts movesNow): the server's list
 * for your move. On a table not yet known to send lists, a list that has
 * not followed your timer within LIST_WAIT_MS is taken for none, and
 * everything is offered (the server refuses what the rules forbid).
 */
export function useMoves(s: TableState): LegalMoves | null {
  const key = progressKey(s);
  const awaiting = awaitingList(s);
  const [overdueAt, setOverdueAt] = useState<string | null>(null);
  useEffect(() => {
    if (!awaiting) return undefined;
    const h = setTimeout(() => setOverdueAt(key), LIST_WAIT_MS);
    return () => clearTimeout(h);
  }, [awaiting, key]);
  return movesNow(s, overdueAt === key);
}

/** The server's refusal, in words, for a few seconds — and no longer once
 * the game has moved on (a later move of yours was taken). */
export function RejectionAlert({ r, progress }: { r: Rejection | null; progress: string }) {
  const [shown, setShown] = useState<number>(0);
  const [at, setAt] = useState<string>(progress);
  useEffect(() => {
    if (!r) return undefined;
    setShown(r.serial);
    setAt(progress);
    const h = setTimeout(() => setShown(0), 5000);
    return () => clearTimeout(h);
  }, [r?.serial]);
  if (!r || shown !== r.serial || at !== progress) return null;
  return (
    <div class="rejection" role="alert" data-testid="rejection">
      {t('rejected', { why: rejectText(r.reason) })}
    </div>
  );
}

export function noticeText(n: Notice, s: TableState, japanese: boolean): string {
  switch (n.kind) {
    case 'bid':
      return n.tricks === 0 ? t('n_pass', { name: seatName(s, n.seat) }) : t('n_bid', { name: seatName(s, n.seat), n: n.tricks });
    case 'trump':
      return n.seat === null ? t('n_trump_turned', { trump: trumpName(n.trump, japanese) }) : t('n_trump_chosen', { name: seatName(s, n.seat), trump: trumpName(n.trump, japanese) });
    case 'played':
      return t('n_played', { name: seatName(s, n.seat), card: cardName(n.card) });
    case 'trick':
      return t('took_trick', { name: seatName(s, n.seat) });
    case 'hand_ended':
      return t('n_hand_ended', { n: n.handIndex + 1 });
    case 'away':
      return t('n_away', { name: seatName(s, n.seat) });
    case 'back':
      return t('n_back', { name: seatName(s, n.seat) });
    case 'bot':
      return t('n_bot', { name: seatName(s, n.seat) });
    case 'left':
      return t('n_left', { name: seatName(s, n.seat) });
    case 'game_over':
      return t('n_game_over');
  }
}

/** A polite live region with the latest thing that happened, for screen readers. */
export function Announcer({ s, japanese }: { s: TableState; japanese: boolean }) {
  const text = s.notice ? noticeText(s.notice, s, japanese) : '';
  return (
    <p class="sr-only" aria-live="polite" data-testid="announcer">
      {text}
    </p>
  );
}

/** Why the game ended, in a sentence: a Japanese match that was played out
 * names who reached the target (every hand being played is no end there). */
export function endSentence(s: TableState): string {
  const end = s.gameEnd;
  if (!end) return '';
  const winner = end.placings.find((p) => p.place === 1);
  if (s.settings?.game === 'japanese' && (end.reason === 'completed' || end.reason === 'unknown') && winner) {
    return t('end_target_reached', { name: seatName(s, winner.seat), target: s.settings.japaneseTarget });
  }
  return endText(end.reason);
}

/** Whether the header offers Leave (or Resign): only to a player whose seat
 * is theirs to leave — not once a bot plays it (after Leave, or when the
 * player did not come back), when the offer is to take the seat back. */
export function leaveOffered(s: TableState): boolean {
  return s.yourSeat !== null && s.phase !== 'game_over' && s.gameEnd === null && !seatIsBot(s, s.yourSeat);
}
