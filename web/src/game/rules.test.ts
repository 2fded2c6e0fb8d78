import { describe, expect, it } from 'vitest';
import { cardCode, parseCode, type Card, type Suit } from '../protocol/cards';
import type { JokerAction, PlayedCard } from '../protocol/types';
import { classicPlayable, forbiddenBid, japaneseAvailable, japanesePlayable, playableNow } from './rules';
import { emptyTable, type TableState } from './state';

const cs = (s: string): Card[] => (s === '' ? [] : s.split(' ').map((c) => parseCode(c) ?? -1));
const names = (c: Card[]) => c.map(cardCode).sort();
const led = (code: string, joker?: { action: JokerAction; suit: Suit }): PlayedCard[] => [
  { seat: 1, card: parseCode(code) ?? -1, joker: joker ? { action: joker.action, suit: joker.suit } : null },
];

describe('classic follow rules (hints mirroring pkg/classic)', () => {
  it('lets the leader play anything', () => {
    expect(names(classicPlayable(cs('AS 7H JK1'), [], 'D'))).toEqual(names(cs('AS 7H JK1')));
  });

  it('must follow the led suit; a joker is always allowed', () => {
    expect(names(classicPlayable(cs('AS 7S KH JK1'), led('QS'), 'H'))).toEqual(names(cs('AS 7S JK1')));
  });

  it('must trump when void in the led suit', () => {
    expect(names(classicPlayable(cs('KH 9D 7D JK2'), led('AS'), 'D'))).toEqual(names(cs('9D 7D JK2')));
  });

  it('may play anything when void in the led suit and in trumps', () => {
    expect(names(classicPlayable(cs('KH 9C'), led('AS'), 'D'))).toEqual(names(cs('KH 9C')));
  });

  it('has no trump obligation in a no-trump hand', () => {
    expect(names(classicPlayable(cs('KH 9D'), led('AS'), 'none'))).toEqual(names(cs('KH 9D')));
  });

  it('must play the highest card of the suit a led joker demands', () => {
    const trick: PlayedCard[] = [{ seat: 1, card: parseCode('JK1') ?? -1, joker: { action: 'highest', suit: 'S' } }];
    expect(names(classicPlayable(cs('7S KS AH JK2'), trick, 'H'))).toEqual(names(cs('KS JK2')));
  });

  it('follows a giving joker’s suit with any card of it', () => {
    const trick: PlayedCard[] = [{ seat: 1, card: parseCode('JK1') ?? -1, joker: { action: 'give', suit: 'S' } }];
    expect(names(classicPlayable(cs('7S KS AH'), trick, 'H'))).toEqual(names(cs('7S KS')));
  });

  it('trumps a demanding joker’s suit when void in it', () => {
    const trick: PlayedCard[] = [{ seat: 1, card: parseCode('JK1') ?? -1, joker: { action: 'highest', suit: 'S' } }];
    expect(names(classicPlayable(cs('7H AH 9C'), trick, 'H'))).toEqual(names(cs('7H AH')));
  });
});

function table(patch: Partial<TableState>): TableState {
  return { ...emptyTable('t'), ...patch };
}

function seats(n: number, bids: (number | null)[]) {
  return Array.from({ length: n }, (_, i) => ({
    player: { seat: i, playerId: `p${i}`, name: `P${i}`, bot: false },
    away: false,
    graceDeadline: null,
    botReason: null,
    bid: bids[i] ?? null,
    tricks: 0,
    score: 0,
    handSize: 0,
    columnsUp: [],
    columnsDown: [],
  }));
}

describe('the dealer’s forbidden bid', () => {
  it('is the number that makes the bids total the cards dealt', () => {
    const s = table({ dealerSeat: 2, cardsPerSeat: 5, seats: seats(4, [1, 2, null, 1]) });
    expect(forbiddenBid(s, 2)).toBe(1);
  });

  it('is a pass when the others already bid every card', () => {
    const s = table({ dealerSeat: 0, cardsPerSeat: 3, seats: seats(4, [null, 1, 1, 1]) });
    expect(forbiddenBid(s, 0)).toBe(0);
  });

  it('is none once the others overbid, and never for another seat', () => {
    const s = table({ dealerSeat: 3, cardsPerSeat: 2, seats: seats(4, [2, 1, 0, null]) });
    expect(forbiddenBid(s, 3)).toBeNull();
    expect(forbiddenBid(s, 1)).toBeNull();
  });
});

describe('Japanese follow rules (hints mirroring pkg/japanese)', () => {
  const jk = (suit: Suit): PlayedCard[] => [{ seat: 1, card: parseCode('JK1') ?? -1, joker: { action: 'highest', suit } }];

  it('answers a led joker with the highest card of the named suit, face-up cards included', () => {
    expect(names(japanesePlayable(cs('7S 9S AH KS'), jk('S'), 'H'))).toEqual(names(cs('KS')));
  });

  it('must trump a led joker’s suit it lacks when that suit is not trump', () => {
    expect(names(japanesePlayable(cs('7H AH 9C JK2'), jk('S'), 'H'))).toEqual(names(cs('7H AH JK2')));
  });

  it('may play anything against a joker naming the trump suit it lacks', () => {
    expect(names(japanesePlayable(cs('7D 9C'), jk('H'), 'H'))).toEqual(names(cs('7D 9C')));
  });

  it('has no trump to play in bezi', () => {
    expect(names(japanesePlayable(cs('7D 9C'), led('AS'), 'none'))).toEqual(names(cs('7D 9C')));
  });

  it('takes the first card of a hand from the hand only, then the face-up column cards too', () => {
    const base = table({
      settings: null,
      yourSeat: 0,
      hand: cs('7S 8S'),
      seats: seats(2, [null, null]).map((x, i) => (i === 0 ? { ...x, columnsUp: [parseCode('AS'), null, parseCode('KD'), null, null] } : x)),
      playedThisHand: [false, false],
      tricksPlayed: 0,
    });
    expect(names(japaneseAvailable(base, 0))).toEqual(names(cs('7S 8S')));
    const later = { ...base, playedThisHand: [true, true], tricksPlayed: 1 };
    expect(names(japaneseAvailable(later, 0))).toEqual(names(cs('7S 8S AS KD')));
  });

  it('lets the player only play when it is their move', () => {
    const s = table({
      settings: { ...emptySettingsJapanese() },
      yourSeat: 0,
      hand: cs('7S'),
      seats: seats(2, [null, null]),
      phase: 'play',
      turnSeat: 1,
    });
    expect(playableNow(s)).toEqual([]);
    expect(names(playableNow({ ...s, turnSeat: 0 }))).toEqual(['7S']);
  });
});

function emptySettingsJapanese() {
  return {
    game: 'japanese' as const,
    variant: null,
    khishti: null,
    premia: false,
    moshla: false,
    restDocked: false,
    japaneseTarget: 21,
    visibility: 'public' as const,
    hasPassword: false,
    stake: { kind: 'free' as const },
    moveTime: null,
    reconnectGrace: null,
    botLevel: null,
  };
}
