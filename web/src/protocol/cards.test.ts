import { describe, expect, it } from 'vitest';
import { cardCode, DECK_SIZE, isJoker, JOKER1, JOKER2, parseCode, parseWireCard, parseWireSuit, rankOf, sortHand, suitOf, wireCardName } from './cards';

const codes = (cs: number[]) => cs.map(cardCode);
const parse = (s: string) => s.split(' ').map((c) => parseCode(c) ?? -1);

describe('cards', () => {
  it('maps every card to its wire name and back (pkg/cards + 1), jokers in the black sixes’ slots', () => {
    for (let c = 0; c < DECK_SIZE; c++) {
      expect(parseWireCard(wireCardName(c))).toBe(c);
      expect(parseWireCard(c + 1)).toBe(c);
      expect(parseCode(cardCode(c))).toBe(c);
    }
    expect(wireCardName(JOKER1)).toBe('CARD_JOKER_1');
    expect(wireCardName(JOKER2)).toBe('CARD_JOKER_2');
    expect(wireCardName(8)).toBe('CARD_ACE_OF_SPADES');
    expect(parseWireCard('CARD_TEN_OF_HEARTS')).toBe(13);
    expect(parseWireCard('CARD_UNSPECIFIED')).toBeNull();
    expect(parseWireCard(0)).toBeNull();
  });

  it('writes the codes the gateway reads', () => {
    expect(codes(parse('AS 10H 7D KC JK1 JK2'))).toEqual(['AS', '10H', '7D', 'KC', 'JK1', 'JK2']);
    expect(parseCode('6S')).toBeNull(); // a joker in this deck
    expect(parseCode('6C')).toBeNull();
    expect(parseCode('6H')).toBe(9);
  });

  it('gives jokers no suit and ordinary cards their rank', () => {
    expect(isJoker(JOKER2)).toBe(true);
    expect(suitOf(JOKER1)).toBeNull();
    expect(suitOf(parseCode('QD') ?? -1)).toBe('D');
    expect(rankOf(parseCode('AC') ?? -1)).toBe(8);
  });

  it('reads wire suits, SUIT_NONE as no trump', () => {
    expect(parseWireSuit('SUIT_HEARTS')).toBe('H');
    expect(parseWireSuit('SUIT_NONE')).toBe('none');
    expect(parseWireSuit(undefined)).toBeNull();
    expect(parseWireSuit('SUIT_UNSPECIFIED')).toBeNull();
  });

  it('sorts a hand jokers first, trump next, colours alternating, high to low', () => {
    expect(codes(sortHand(parse('7S AH JK2 9C KH 10D JK1 AS'), 'D'))).toEqual(['JK1', 'JK2', '10D', 'AS', '7S', 'AH', 'KH', '9C']);
    expect(codes(sortHand(parse('7H AD 9C'), 'none'))).toEqual(['7H', '9C', 'AD']);
  });
});
