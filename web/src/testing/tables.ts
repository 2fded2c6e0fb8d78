// Table states built from wire events, for screen tests.

import { applyEvent, emptyTable, type TableState } from '../game/state';
import { classicSettings, japaneseSettings, legalCard, legalJoker, legalMoves, seatsOf, wireEvent } from './events';

export function play(s: TableState, bodies: Record<string, unknown>[], live = true): TableState {
  return bodies.reduce((st, b) => applyEvent(st, wireEvent(b), live), s);
}

/**
 * A classic table where you (seat 0) deal a hand of five cards and bid:
 * the others bid 2, 1 and 0, so the table's list of your bids leaves 2 out.
 */
export function classicDealing(): TableState {
  return play({ ...emptyTable('t1'), yourSeat: 0 }, [
    { game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } },
    { hand_started: { hand_index: 4, cards_per_seat: 5 } },
    { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_SEVEN_OF_SPADES', 'CARD_KING_OF_HEARTS', 'CARD_NINE_OF_DIAMONDS', 'CARD_JOKER_1'] } },
    { trump_turned: { card: 'CARD_SIX_OF_DIAMONDS', trump: 'SUIT_DIAMONDS' } },
    { bid_made: { seat: 1, tricks: 2 } },
    { bid_made: { seat: 2, tricks: 1 } },
    { bid_made: { seat: 3, tricks: 0 } },
    { timer_started: { phase: 'PHASE_BID', deadline: new Date(Date.now() + 20000).toISOString() } },
    legalMoves({ phase: 'PHASE_BID', bids: [0, 1, 3, 4, 5] }),
  ]);
}

/** What the table lists for you to answer a led queen of spades (classicFollowing): a spade or the joker. */
export const answersToQueen = [legalJoker('CARD_JOKER_1', 'take', 'discard'), legalCard('CARD_SEVEN_OF_SPADES'), legalCard('CARD_ACE_OF_SPADES')];

/**
 * Bidding done; seat 1 leads the queen of spades and it is then your move
 * to follow, with plays the table's list of your moves.
 */
export function classicFollowing(plays: Record<string, unknown>[] = answersToQueen): TableState {
  return play(classicDealing(), [
    { bid_made: { tricks: 1 } },
    { card_played: { seat: 1, card: 'CARD_QUEEN_OF_SPADES' } },
    { card_played: { seat: 2, card: 'CARD_EIGHT_OF_SPADES' } },
    { card_played: { seat: 3, card: 'CARD_NINE_OF_SPADES' } },
    { timer_started: { phase: 'PHASE_PLAY', deadline: new Date(Date.now() + 20000).toISOString() } },
    legalMoves({ phase: 'PHASE_PLAY', plays }),
  ]);
}

export function japaneseStarted(): TableState {
  return play({ ...emptyTable('t1'), yourSeat: 0 }, [
    { game_started: { settings: japaneseSettings, seats: seatsOf(['Nino', 'Giorgi']) } },
    { hand_started: { cards_per_seat: 18 } },
    { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_KING_OF_SPADES', 'CARD_JOKER_1'] } },
  ]);
}
