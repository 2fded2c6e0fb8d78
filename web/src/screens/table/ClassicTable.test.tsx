import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setLang } from '../../i18n';
import { parseCode } from '../../protocol/cards';
import type { Move } from '../../protocol/frames';
import { LIST_WAIT_MS } from '../../game/moves';
import { emptyTable, type TableState } from '../../game/state';
import { classicSettings, legalCard, legalJoker, legalMoves, seatsOf } from '../../testing/events';
import { byTestId, click, mount } from '../../testing/render';
import { classicDealing, classicFollowing, play } from '../../testing/tables';
import { ClassicTable } from './ClassicTable';
import { endSentence, leaveOffered } from './parts';

function draw(s: TableState, online = true) {
  const send = vi.fn<(m: Move) => boolean>(() => true);
  const m = mount(<ClassicTable s={s} send={send} serverNow={() => Date.now()} online={online} onCourse={[null, null, null, null]} header={null} />);
  return { ...m, send };
}

const deadline = () => new Date(Date.now() + 20000).toISOString();
const enabled = (root: HTMLElement, panel: string) =>
  Array.from(byTestId(root, panel).querySelectorAll<HTMLButtonElement>('button'))
    .filter((b) => !b.disabled)
    .map((b) => b.dataset.testid);
const buttons = (root: ParentNode) => Array.from(root.querySelectorAll<HTMLElement>('button[data-testid]')).map((b) => b.dataset.testid);

const playable = (root: HTMLElement) =>
  Array.from(root.querySelectorAll<HTMLElement>('[data-testid="hand"] button'))
    .filter((b) => b.dataset.playable === 'true')
    .map((b) => b.dataset.testid);

describe('the classic table', () => {
  beforeEach(() => setLang('en'));
  afterEach(() => {
    document.body.innerHTML = '';
  });

  it('shows seats with names, the dealer, bids, the trump and whose turn it is', () => {
    const { root } = draw(classicDealing());
    expect(byTestId(root, 'seat-1').textContent).toContain('Giorgi');
    expect(byTestId(root, 'dealer-0')).toBeTruthy();
    // Bids and tricks in words a newcomer reads (issue 22: "· /0 0" was cryptic).
    expect(byTestId(root, 'seat-bid-1').textContent).toBe('bid 2');
    expect(byTestId(root, 'seat-bid-3').textContent).toBe('passed');
    expect(byTestId(root, 'seat-bid-0').textContent).toBe('no bid yet');
    expect(byTestId(root, 'seat-tricks-1').textContent).toBe('took 0');
    expect(byTestId(root, 'trump').getAttribute('aria-label')).toBe('Trump: Diamonds');
    expect(byTestId(root, 'seat-0').className).toContain('turn');
    expect(byTestId(root, 'move-timer').getAttribute('role')).toBe('timer');
    expect(byTestId(root, 'hand-info').textContent).toBe('Hand 5 · 5 cards · Pulka I');
  });

  it('keeps your hand fully readable while you bid, and shows the others’ hands as backs with their count', () => {
    const { root } = draw(classicDealing());
    const cards = Array.from(byTestId(root, 'hand').querySelectorAll('button.card'));
    expect(cards.length).toBeGreaterThan(0);
    // Nothing is dimmed while you bid: only a move of a card dims the illegal ones.
    expect(cards.filter((c) => c.classList.contains('illegal'))).toEqual([]);
    expect(cards.every((c) => c.querySelector('svg.card-svg') !== null)).toBe(true);
    for (const seat of [1, 2, 3]) {
      const fan = byTestId(root, `seat-hand-${seat}`);
      expect(fan.getAttribute('data-count')).toBe('5');
      expect(fan.querySelectorAll('.card.back')).toHaveLength(5);
      expect(fan.getAttribute('aria-label')).toMatch(/hand, 5 cards$/);
    }
    expect(root.querySelector('[data-testid="seat-hand-0"]')).toBeNull();
  });

  it('writes the dealer chip as a letter of the player’s language (issue 22, rough edge 3)', () => {
    setLang('ka');
    const { root } = draw(classicDealing());
    expect(byTestId(root, 'dealer-0').textContent).toBe('დ');
    expect(byTestId(root, 'dealer-0').getAttribute('title')).toBe('დამრიგებელი');
  });

  it('writes the joker’s face in the player’s language (issue 22, rough edge 10)', () => {
    setLang('ru');
    const { root } = draw(classicFollowing());
    expect(byTestId(root, 'card-JK1').textContent).toContain('ДЖОКЕР');
  });

  it('disables the dealer’s forbidden bid and says why', () => {
    const { root, send } = draw(classicDealing());
    // 2 + 1 + 0 bid by the others: the dealer may not bid 2 of 5.
    const two = byTestId(root, 'bid-2') as HTMLButtonElement;
    expect(two.disabled).toBe(true);
    expect(byTestId(root, 'forbidden-bid').textContent).toBe('As the dealer you may not bid 2: the bids would total 5.');
    expect((byTestId(root, 'bid-pass') as HTMLButtonElement).disabled).toBe(false);
    click(byTestId(root, 'bid-3'));
    expect(send).toHaveBeenCalledWith({ type: 'bid', tricks: 3 });
    click(two);
    expect(send).toHaveBeenCalledTimes(1);
  });

  it('bids from the keyboard with a digit, never the forbidden one', () => {
    const { send } = draw(classicDealing());
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: '2', bubbles: true }));
    expect(send).not.toHaveBeenCalled();
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: '0', bubbles: true }));
    expect(send).toHaveBeenCalledWith({ type: 'bid', tricks: 0 });
  });

  it('sorts your hand and lets only legal cards be played', () => {
    const { root, send } = draw(classicFollowing());
    expect(Array.from(root.querySelectorAll<HTMLElement>('[data-testid="hand"] button')).map((b) => b.dataset.testid)).toEqual([
      'card-JK1',
      'card-9D',
      'card-AS',
      'card-7S',
      'card-KH',
    ]);
    expect(playable(root)).toEqual(['card-JK1', 'card-AS', 'card-7S']);
    click(byTestId(root, 'card-KH'));
    expect(send).not.toHaveBeenCalled();
    click(byTestId(root, 'card-7S'));
    expect(send).toHaveBeenCalledWith({ type: 'play', card: 1 });
  });

  it('sends a double-clicked card once, and plays again once the table moved on (issue 22, rough edge 2)', () => {
    const s = classicFollowing();
    const { root, send, rerender } = draw(s);
    click(byTestId(root, 'card-7S'));
    click(byTestId(root, 'card-7S'));
    click(byTestId(root, 'card-AS'));
    expect(send).toHaveBeenCalledTimes(1);
    expect(playable(root)).toEqual([]);
    // Refused: the player may try again.
    const refused = play(s, [{ visibility: { audience: 'AUDIENCE_PLAYER' }, move_rejected: { reason: 'REJECT_REASON_MUST_FOLLOW_SUIT', message: 'x' } }]);
    rerender(<ClassicTable s={refused} send={send} serverNow={() => Date.now()} online onCourse={[null, null, null, null]} header={null} />);
    expect(byTestId(root, 'rejection')).toBeTruthy();
    click(byTestId(root, 'card-AS'));
    expect(send).toHaveBeenCalledTimes(2);
    // Taken: the refusal goes at once, not seconds later.
    const taken = play(refused, [{ card_played: { seat: 0, card: 'CARD_ACE_OF_SPADES' } }]);
    rerender(<ClassicTable s={taken} send={send} serverNow={() => Date.now()} online onCourse={[null, null, null, null]} header={null} />);
    expect(root.querySelector('[data-testid="rejection"]')).toBeNull();
  });

  it('plays again when the table comes back to the very place a move was sent from', () => {
    const s = classicFollowing();
    const { root, send, rerender } = draw(s);
    const again = (st: TableState) => {
      rerender(<ClassicTable s={st} send={send} serverNow={() => Date.now()} online onCourse={[null, null, null, null]} header={null} />);
    };
    click(byTestId(root, 'card-7S'));
    expect(send).toHaveBeenCalledTimes(1);
    // The table moves on, then (as a Japanese column card can) back to a
    // state with the same place in the game: the move was answered.
    again({ ...s, trick: [] });
    again(s);
    click(byTestId(root, 'card-7S'));
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('asks how a following joker is meant: take or discard', () => {
    const { root, send } = draw(classicFollowing());
    click(byTestId(root, 'card-JK1'));
    const dialog = byTestId(document.body, 'joker-dialog');
    expect(dialog.querySelector('[data-testid="joker-highest-S"]')).toBeNull();
    click(byTestId(dialog, 'joker-discard'));
    expect(send).toHaveBeenCalledWith({ type: 'play', card: 0, joker: { action: 'discard' } });
    expect(document.querySelector('[data-testid="joker-dialog"]')).toBeNull();
  });

  it('asks a leading joker for highest or give and a suit', () => {
    const s = play(classicDealing(), [
      { bid_made: { tricks: 1 }, timer: { phase: 'PHASE_PLAY', deadline: deadline() } },
      legalMoves({
        phase: 'PHASE_PLAY',
        plays: [
          legalJoker('CARD_JOKER_1', 'highest-S', 'highest-H', 'highest-D', 'highest-C', 'give-S', 'give-H', 'give-D', 'give-C'),
          legalCard('CARD_SEVEN_OF_SPADES'),
          legalCard('CARD_ACE_OF_SPADES'),
          legalCard('CARD_KING_OF_HEARTS'),
          legalCard('CARD_NINE_OF_DIAMONDS'),
        ],
      }),
    ]);
    const { root, send } = draw(s);
    click(byTestId(root, 'card-JK1'));
    const dialog = byTestId(document.body, 'joker-dialog');
    expect(dialog.querySelector('[data-testid="joker-take"]')).toBeNull();
    expect(buttons(dialog).filter((b) => b?.startsWith('joker-'))).toEqual([
      'joker-highest-S',
      'joker-highest-H',
      'joker-highest-D',
      'joker-highest-C',
      'joker-give-S',
      'joker-give-H',
      'joker-give-D',
      'joker-give-C',
    ]);
    click(byTestId(dialog, 'joker-give-H'));
    expect(send).toHaveBeenCalledWith({ type: 'play', card: 0, joker: { action: 'give', suit: 'H' } });
  });

  it('lets the seat after the dealer choose trump on three cards in a nine-card hand', () => {
    const s = play(classicDealing(), [
      { hand_started: { hand_index: 8, pulka_index: 1, cards_per_seat: 9, dealer_seat: 3 } },
      { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_KING_OF_SPADES', 'CARD_JOKER_1'] }, timer: { phase: 'PHASE_CHOOSE_TRUMP', deadline: deadline() } },
      legalMoves({ phase: 'PHASE_CHOOSE_TRUMP', trumps: ['SUIT_SPADES', 'SUIT_HEARTS', 'SUIT_DIAMONDS', 'SUIT_CLUBS', 'SUIT_NONE'] }),
    ]);
    const { root, send } = draw(s);
    expect(enabled(root, 'trump-panel')).toEqual(['trump-S', 'trump-H', 'trump-D', 'trump-C', 'trump-none']);
    expect(root.querySelectorAll('[data-testid="hand"] button')).toHaveLength(3);
    click(byTestId(root, 'trump-none'));
    expect(send).toHaveBeenCalledWith({ type: 'trump', suit: 'none' });
    // One choice per turn: the panel waits for the table's answer.
    expect(root.querySelector('[data-testid="trump-panel"]')).toBeNull();
    const again = draw(s);
    click(byTestId(again.root, 'trump-S'));
    expect(again.send).toHaveBeenLastCalledWith({ type: 'trump', suit: 'S' });
  });

  it('offers exactly the bids the server lists, and says why only of the dealer’s one left out', () => {
    const s = play(classicDealing(), [{ timer_started: { phase: 'PHASE_BID', deadline: deadline() } }, legalMoves({ phase: 'PHASE_BID', bids: [0, 4] })]);
    const { root, send } = draw(s);
    expect(enabled(root, 'bid-panel')).toEqual(['bid-pass', 'bid-4']);
    expect(root.querySelector('[data-testid="forbidden-bid"]')).toBeNull();
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: '3', bubbles: true }));
    expect(send).not.toHaveBeenCalled();
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: '4', bubbles: true }));
    expect(send).toHaveBeenCalledWith({ type: 'bid', tricks: 4 });
  });

  it('offers exactly the cards the server lists: the client second-guesses no rule', () => {
    // Not what the follow rule gives after a led queen of spades: the list decides.
    const { root, send } = draw(classicFollowing([legalCard('CARD_KING_OF_HEARTS')]));
    expect(playable(root)).toEqual(['card-KH']);
    click(byTestId(root, 'card-AS'));
    expect(send).not.toHaveBeenCalled();
    click(byTestId(root, 'card-KH'));
    expect(send).toHaveBeenCalledWith({ type: 'play', card: parseCode('KH') });
  });

  it('offers a joker exactly the declarations listed, and plays one with a single declaration at once', () => {
    const { root, send } = draw(classicFollowing([legalJoker('CARD_JOKER_1', 'take', 'highest-D'), legalCard('CARD_ACE_OF_SPADES')]));
    click(byTestId(root, 'card-JK1'));
    const dialog = byTestId(document.body, 'joker-dialog');
    expect(buttons(dialog).filter((b) => b?.startsWith('joker-'))).toEqual(['joker-take', 'joker-highest-D']);
    click(byTestId(dialog, 'joker-highest-D'));
    expect(send).toHaveBeenCalledWith({ type: 'play', card: 0, joker: { action: 'highest', suit: 'D' } });

    document.body.innerHTML = '';
    const one = draw(classicFollowing([legalJoker('CARD_JOKER_1', 'discard')]));
    click(byTestId(one.root, 'card-JK1'));
    expect(document.querySelector('[data-testid="joker-dialog"]')).toBeNull();
    expect(one.send).toHaveBeenCalledWith({ type: 'play', card: 0, joker: { action: 'discard' } });
  });

  it('offers nothing at your move until its list has come, on a table that sends lists', () => {
    const waiting = play(classicDealing(), [
      { bid_made: { tricks: 1 } },
      { card_played: { seat: 1, card: 'CARD_QUEEN_OF_SPADES' } },
      { card_played: { seat: 2, card: 'CARD_EIGHT_OF_SPADES' } },
      { card_played: { seat: 3, card: 'CARD_NINE_OF_SPADES' }, timer: { phase: 'PHASE_PLAY', deadline: deadline() } },
    ]);
    const { root, rerender, send } = draw(waiting);
    expect(playable(root)).toEqual([]);
    expect(root.querySelector('[data-testid="your-move"]')).toBeNull();
    const listed = play(waiting, [legalMoves({ phase: 'PHASE_PLAY', plays: [legalCard('CARD_SEVEN_OF_SPADES')] })]);
    rerender(<ClassicTable s={listed} send={send} serverNow={() => Date.now()} online onCourse={[null, null, null, null]} header={null} />);
    expect(playable(root)).toEqual(['card-7S']);
  });

  describe('on a table that sends no lists (restored from before legal moves)', () => {
    /** Your bid on such a table: its timer was followed by no list. */
    const unlisted = () =>
      play({ ...emptyTable('t1'), yourSeat: 0 }, [
        { game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } },
        { hand_started: { hand_index: 4, cards_per_seat: 5, dealer_seat: 3 } },
        { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_SEVEN_OF_SPADES', 'CARD_KING_OF_HEARTS', 'CARD_NINE_OF_DIAMONDS', 'CARD_JOKER_1'] } },
        { trump_turned: { card: 'CARD_SIX_OF_DIAMONDS', trump: 'SUIT_DIAMONDS' }, timer: { phase: 'PHASE_BID', deadline: deadline() } },
        { player_away: { seat: 2, player_id: 'p2' } },
      ]);

    it('offers every bid, every card and every declaration, and lets the server refuse', () => {
      const s = unlisted();
      expect(s.sendsLegal).toBe(false);
      const { root, send } = draw(s);
      expect(enabled(root, 'bid-panel')).toEqual(['bid-pass', 'bid-1', 'bid-2', 'bid-3', 'bid-4', 'bid-5']);
      click(byTestId(root, 'bid-2'));
      expect(send).toHaveBeenCalledWith({ type: 'bid', tricks: 2 });

      document.body.innerHTML = '';
      const playing = play(s, [
        { bid_made: { tricks: 2 } },
        { bid_made: { seat: 1, tricks: 1 } },
        { bid_made: { seat: 2 } },
        { bid_made: { seat: 3, tricks: 1 }, timer: { phase: 'PHASE_PLAY', deadline: deadline() } },
      ]);
      const p = draw(playing);
      expect(playable(p.root)).toEqual(['card-JK1', 'card-9D', 'card-AS', 'card-7S', 'card-KH']);
      click(byTestId(p.root, 'card-JK1'));
      const dialog = byTestId(document.body, 'joker-dialog');
      expect(buttons(dialog).filter((b) => b?.startsWith('joker-'))).toHaveLength(10);
    });

    it('waits a moment for the list at the first move it sees, then offers everything', () => {
      vi.useFakeTimers();
      try {
        // The first move this page sees: not yet known whether the table sends lists.
        const first = play({ ...emptyTable('t1'), yourSeat: 0 }, [
          { game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } },
          { hand_started: { hand_index: 4, cards_per_seat: 5, dealer_seat: 3 } },
          { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_SEVEN_OF_SPADES', 'CARD_KING_OF_HEARTS', 'CARD_NINE_OF_DIAMONDS', 'CARD_JOKER_1'] } },
          { trump_turned: { card: 'CARD_SIX_OF_DIAMONDS', trump: 'SUIT_DIAMONDS' }, timer: { phase: 'PHASE_BID', deadline: deadline() } },
        ]);
        expect(first.sendsLegal).toBeNull();
        const { root } = draw(first);
        expect(root.querySelector('[data-testid="bid-panel"]')).toBeNull();
        void act(() => {
          vi.advanceTimersByTime(LIST_WAIT_MS - 1);
        });
        expect(root.querySelector('[data-testid="bid-panel"]')).toBeNull();
        void act(() => {
          vi.advanceTimersByTime(1);
        });
        expect(enabled(root, 'bid-panel')).toEqual(['bid-pass', 'bid-1', 'bid-2', 'bid-3', 'bid-4', 'bid-5']);
      } finally {
        vi.useRealTimers();
      }
    });
  });

  it('shows the trick as played, then who took it', () => {
    const s = play(classicFollowing(), [
      { card_played: { card: 'CARD_ACE_OF_SPADES' } },
      { trick_won: { trick_index: 0, tricks_taken: [1, 0, 0, 0] } },
    ]);
    const { root } = draw(s);
    expect(byTestId(root, 'trick').querySelectorAll('.played')).toHaveLength(4);
    expect(byTestId(root, 'trick-winner').textContent).toBe('Nino took the trick');
    expect(byTestId(root, 'seat-tricks-0').textContent).toBe('took 1');
  });

  it('says clearly when the server refuses a move', () => {
    const s = play(classicFollowing(), [
      { visibility: { audience: 'AUDIENCE_PLAYER' }, move_rejected: { reason: 'REJECT_REASON_MUST_FOLLOW_SUIT', message: 'x' } },
    ]);
    const { root } = draw(s);
    expect(byTestId(root, 'rejection').textContent).toBe('The server refused that move: you must follow suit.');
    expect(byTestId(root, 'rejection').getAttribute('role')).toBe('alert');
  });

  it('marks away players and bots, and offers your seat back from a bot', () => {
    const s = play(classicDealing(), [
      { player_away: { seat: 2, player_id: 'p2', grace_deadline: new Date(Date.now() + 60000).toISOString() } },
      { seat_taken_by_bot: { reason: 'BOT_REASON_PLAYER_LEFT' } },
    ]);
    const { root, send } = draw(s);
    expect(byTestId(root, 'away-marker-2').textContent).toMatch(/^away · (59|60)s$/);
    expect(byTestId(root, 'bot-marker-0').textContent).toContain('bot (player left)');
    expect(root.querySelector('[data-testid="bid-panel"]')).toBeNull();
    click(byTestId(root, 'retake-seat'));
    expect(send).toHaveBeenCalledWith({ type: 'sit', seat: 0 });
  });

  it('offers Leave no more once a bot plays your seat (issue 22, rough edge 9)', () => {
    const s = classicDealing();
    expect(leaveOffered(s)).toBe(true);
    const left = play(s, [{ player_left: { seat: 0, player_id: 'p0' } }, { seat_taken_by_bot: { seat: 0, reason: 'BOT_REASON_PLAYER_LEFT' } }]);
    expect(leaveOffered({ ...left, yourSeat: 0 })).toBe(false);
    const { root } = draw({ ...left, yourSeat: 0 });
    expect(byTestId(root, 'retake-seat')).toBeTruthy();
  });

  it('ends a classic game as before: every hand played', () => {
    const s = play(classicDealing(), [{ game_ended: { reason: 'GAME_END_REASON_COMPLETED', placings: [{ place: 1, seat: 2, score: '2380' }] } }]);
    expect(endSentence(s)).toBe('Every hand has been played.');
  });

  it('keeps moves disabled while the connection is down', () => {
    const { root } = draw(classicFollowing(), false);
    expect(playable(root)).toEqual([]);
  });

  it('labels seats and cards for screen readers', () => {
    const { root } = draw(classicFollowing());
    // The name is the button's text for screen readers (the face's SVG is aria-hidden).
    expect(byTestId(root, 'card-AS').querySelector('.sr-only')?.textContent).toBe('ace of spades');
    expect(byTestId(root, 'card-AS').querySelector('svg')?.getAttribute('aria-hidden')).toBe('true');
    expect(byTestId(root, 'card-KH').getAttribute('aria-disabled')).toBe('true');
    expect(byTestId(root, 'seat-0').getAttribute('aria-label')).toBe('Nino, you, dealer, bid 1, 0 tricks taken, to move');
    expect(byTestId(root, 'played-1').querySelector('[role="img"]')?.getAttribute('aria-label')).toBe('Giorgi: queen of spades');
  });
});
