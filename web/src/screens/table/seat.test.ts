import { beforeEach, describe, expect, it } from 'vitest';
import { setLang } from '../../i18n';
import { seatWords, side } from './parts';

describe('the words under a seat', () => {
  beforeEach(() => setLang('en'));

  it('say the bid and the tricks taken in words', () => {
    expect(seatWords(null, 0, false)).toEqual({ bid: 'no bid yet', tricks: 'took 0' });
    expect(seatWords(0, 0, false)).toEqual({ bid: 'passed', tricks: 'took 0' });
    expect(seatWords(3, 1, false)).toEqual({ bid: 'bid 3', tricks: 'took 1' });
    // Japanese has no bids: the tricks, with the language's plural.
    expect(seatWords(null, 1, true)).toEqual({ bid: null, tricks: '1 trick taken' });
    expect(seatWords(null, 5, true)).toEqual({ bid: null, tricks: '5 tricks taken' });
  });

  it('are translated', () => {
    setLang('ru');
    expect(seatWords(2, 5, false)).toEqual({ bid: 'заказ 2', tricks: 'взял 5' });
    expect(seatWords(null, 5, true).tricks).toBe('5 взяток');
  });
});

describe('side', () => {
  it('puts each place of the table on its side, for the motion of its cards', () => {
    expect([0, 1, 2, 3].map((p) => side(p, 4))).toEqual(['b', 'l', 't', 'r']);
    expect([0, 1].map((p) => side(p, 2))).toEqual(['b', 't']);
  });
});
