import { describe, expect, it } from 'vitest';
import { formatPoints, formatSigned, formatWhole, MINUS } from './notation';

describe('formatPoints (the /100 notation of Σ and sul)', () => {
  it.each([
    [210, '2.1'],
    [250, '2.5'],
    [-100, `${MINUS}1`],
    [-40, `${MINUS}0.4`],
    [950, '9.5'],
    [170, '1.7'],
    [900, '9'],
    [-200, `${MINUS}2`],
    [5, '0.05'],
    [-5, `${MINUS}0.05`],
    [0, '0'],
    [2380, '23.8'],
    [1430, '14.3'],
    [123456, '1234.56'],
  ])('writes %d as %s', (points, want) => {
    expect(formatPoints(points)).toBe(want);
  });

  it('writes hand cells whole and signs premia and moshla', () => {
    expect(formatWhole(-900)).toBe(`${MINUS}900`);
    expect(formatWhole(150)).toBe('150');
    expect(formatSigned(250)).toBe('+2.5');
    expect(formatSigned(-300)).toBe(`${MINUS}3`);
  });
});
