import { describe, expect, it } from 'vitest';
import { cardCode, parseCode, type Card } from '../protocol/cards';
import { classicSettings, japaneseSettings, legalCard, legalJoker, legalMoves, seatsOf, wireEvent } from '../testing/events';
import { bidsLeftOut, declarationsFor, everyDeclaration, movesNow, playableCards, playMove } from './moves';
import { applyEvent, emptyTable, type TableState } from './state';

const run = (s: TableState, bodies: Record<string, unknown>[]) => bodies.reduce((st, b) => applyEvent(st, wireEvent(b)), s);
const codes = (cs: Card[]) => cs.map(cardCode);
const deadline = '2023-11-14T22:13:50Z';
const JK1 = parseCode('JK1') ?? -1;

/** Your move to play a card in a classic hand (the list not yet come). */
function yourPlay(): TableState {
  return run({ ...emptyTable('t1'), yourSeat: 0 }, [
    { game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } },
    { hand_started: { cards_per_seat: 3, dealer_seat: 3 } },
    { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_SEVEN_OF_HEARTS', 'CARD_JOKER_1'] } },
    { trump_turned: { card: 'CARD_NINE_OF_HEARTS', trump: 'SUIT_HEARTS' } },
    { bid_made: { tricks: 1 } },
    { bid_made: { seat: 1 } },
    { bid_made: { seat: 2 } },
    { bid_made: { seat: 3 }, timer: { phase: 'PHASE_PLAY', deadline } },
  ]);
}

describe('movesNow: what the screen offers you', () => {
  it('is the server’s list of your move', () => {
    const s = run(yourPlay(), [legalMoves({ phase: 'PHASE_PLAY', plays: [legalCard('CARD_SEVEN_OF_HEARTS')] })]);
    expect(movesNow(s)).toBe(s.legal);
    expect(codes(playableCards(movesNow(s)))).toEqual(['7H']);
  });

  it('is nothing when the move is not yours, even with a list', () => {
    const s = run(yourPlay(), [legalMoves({ phase: 'PHASE_PLAY', plays: [legalCard('CARD_SEVEN_OF_HEARTS')] })]);
    expect(movesNow({ ...s, turnSeat: 1 })).toBeNull();
    // A bot plays your seat.
    expect(movesNow(run(s, [{ seat_taken_by_bot: { reason: 'BOT_REASON_GRACE_EXPIRED' } }]))).toBeNull();
  });

  it('waits for the list on a table that sends lists', () => {
    const known = run(yourPlay(), [
      legalMoves({ phase: 'PHASE_PLAY', plays: [legalCard('CARD_SEVEN_OF_HEARTS')] }),
      { card_played: { card: 'CARD_SEVEN_OF_HEARTS' } },
      { card_played: { seat: 1, card: 'CARD_EIGHT_OF_HEARTS' } },
      { card_played: { seat: 2, card: 'CARD_TEN_OF_HEARTS' } },
      { card_played: { seat: 3, card: 'CARD_JACK_OF_HEARTS' } },
      { trick_won: { trick_index: 0, tricks_taken: [1, 0, 0, 0] }, timer: { phase: 'PHASE_PLAY', deadline } },
    ]);
    expect(known.sendsLegal).toBe(true);
    expect(movesNow(known)).toBeNull();
    expect(movesNow(known, true)).toBeNull();
  });

  it('waits for the list after your timer while it is not known whether the table sends lists, then offers everything', () => {
    const s = yourPlay();
    expect(s.sendsLegal).toBeNull();
    expect(movesNow(s)).toBeNull();
    expect(codes(playableCards(movesNow(s, true)))).toEqual(['AS', '7H', 'JK1']);
  });

  // A table restored from a snapshot of before legal moves sends none to
  // the end of its game: the player must still be able to move, and the
  // server refuses what the rules forbid.
  describe('without a list, from a table that sends none', () => {
    const none = (s: TableState) => ({ ...s, sendsLegal: false });

    it('offers every card in hand, a joker with every declaration of the game', () => {
      const m = movesNow(none(yourPlay()));
      expect(m).toMatchObject({ seat: 0, phase: 'play', trumps: [], bids: [] });
      expect(codes(playableCards(m))).toEqual(['AS', '7H', 'JK1']);
      expect(declarationsFor(m, JK1, false)).toEqual(everyDeclaration(false));
      expect(everyDeclaration(false)).toHaveLength(10);
    });

    it('offers every bid from a pass to the cards dealt', () => {
      const s = run(startedClassic(), [{ hand_started: { cards_per_seat: 3, dealer_seat: 3 }, timer: { phase: 'PHASE_BID', deadline } }, { player_back: { seat: 1 } }]);
      expect(s.sendsLegal).toBe(false);
      expect(movesNow(s)).toMatchObject({ phase: 'bid', bids: [0, 1, 2, 3], trumps: [], plays: [] });
    });

    it('offers every trump, no trump included', () => {
      const s = none(run(startedClassic(), [{ hand_started: { hand_index: 8, cards_per_seat: 9, dealer_seat: 3 }, timer: { phase: 'PHASE_CHOOSE_TRUMP', deadline } }]));
      expect(movesNow(s)).toMatchObject({ phase: 'choose_trump', trumps: ['S', 'H', 'D', 'C', 'none'], bids: [], plays: [] });
    });

    it('offers a Japanese player the hand and the face-up column cards, a joker taking or naming a suit', () => {
      const s = none(
        run({ ...emptyTable('t1'), yourSeat: 0 }, [
          { game_started: { settings: japaneseSettings, seats: seatsOf(['Nino', 'Giorgi']) } },
          { hand_started: { cards_per_seat: 18, dealer_seat: 1 } },
          { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_JOKER_2'] } },
          { trump_chosen: { seat: 1, trump: 'SUIT_NONE' } },
          { columns_dealt: { face_up: ['CARD_KING_OF_DIAMONDS', 'CARD_QUEEN_OF_CLUBS'] } },
          { card_played: { seat: 1, card: 'CARD_SEVEN_OF_DIAMONDS' }, timer: { phase: 'PHASE_PLAY', deadline } },
        ]),
      );
      const m = movesNow(s);
      expect(codes(playableCards(m))).toEqual(['AS', 'JK2', 'KD', 'QC']);
      expect(declarationsFor(m, parseCode('JK2') ?? -1, true)).toEqual([
        { action: 'take', suit: null },
        { action: 'highest', suit: 'S' },
        { action: 'highest', suit: 'H' },
        { action: 'highest', suit: 'D' },
        { action: 'highest', suit: 'C' },
      ]);
    });
  });
});

function startedClassic(): TableState {
  return run({ ...emptyTable('t1'), yourSeat: 0 }, [{ game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } }]);
}

describe('declarationsFor', () => {
  const s = run(yourPlay(), [legalMoves({ phase: 'PHASE_PLAY', plays: [legalJoker('CARD_JOKER_1', 'take', 'discard'), legalCard('CARD_ACE_OF_SPADES')] })]);

  it('gives a joker exactly the declarations listed', () => {
    expect(declarationsFor(s.legal, JK1, false)).toEqual([
      { action: 'take', suit: null },
      { action: 'discard', suit: null },
    ]);
  });

  it('gives no other card any, and nothing without a move', () => {
    expect(declarationsFor(s.legal, parseCode('AS') ?? -1, false)).toEqual([]);
    expect(declarationsFor(null, JK1, false)).toEqual([]);
  });

  it('gives a listed joker whose declarations it could not read every declaration: the server decides', () => {
    const unreadable = run(yourPlay(), [legalMoves({ phase: 'PHASE_PLAY', plays: [{ card: 'CARD_JOKER_1', declarations: [{ action: 'JOKER_ACTION_UNSPECIFIED' }] }] })]);
    expect(unreadable.legal?.plays).toEqual([{ card: JK1, declarations: [] }]);
    expect(declarationsFor(unreadable.legal, JK1, false)).toEqual(everyDeclaration(false));
  });
});

describe('playMove and bidsLeftOut', () => {
  it('plays a card, a joker with its declaration (a suit only when it names one)', () => {
    expect(playMove(3)).toEqual({ type: 'play', card: 3 });
    expect(playMove(JK1, { action: 'take', suit: null })).toEqual({ type: 'play', card: JK1, joker: { action: 'take' } });
    expect(playMove(JK1, { action: 'give', suit: 'C' })).toEqual({ type: 'play', card: JK1, joker: { action: 'give', suit: 'C' } });
  });

  it('names the bids a list leaves out of a pass to the cards dealt', () => {
    const m = { seat: 0, phase: 'bid' as const, trumps: [], plays: [], bids: [0, 1, 3] };
    expect(bidsLeftOut(m, 3)).toEqual([2]);
    expect(bidsLeftOut({ ...m, bids: [0, 1, 2, 3] }, 3)).toEqual([]);
  });
});
