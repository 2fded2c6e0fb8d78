import { describe, expect, it } from 'vitest';
import { colourOf, initials } from './Avatar';

describe('Avatar', () => {
  it('writes initials in capitals, but Georgian as written (its capitals are missing from common fonts)', () => {
    expect(initials('nino beridze')).toBe('NB');
    expect(initials('Гость-12')).toBe('ГО');
    expect(initials('სტუმარი-1637')).toBe('სტ');
    expect(initials('  ')).toBe('?');
  });

  it('gives one player one colour, from the id, for everyone looking', () => {
    expect(colourOf('p-1')).toBe(colourOf('p-1'));
    const colours = new Set(Array.from({ length: 64 }, (_, i) => colourOf(`player-${String(i)}`)));
    expect(colours.size).toBeGreaterThan(4);
  });
});
