import { afterEach, describe, expect, it } from 'vitest';
import { CardFace, H, pipLayout, starPoints, W } from './CardArt';
import { cardOf, DECK_SIZE, isJoker, JOKER1, JOKER2, rankOf, SUITS } from '../protocol/cards';
import { mount } from '../testing/render';

afterEach(() => {
  document.body.innerHTML = '';
});

describe('pipLayout', () => {
  it('gives a numbered card as many pips as its number, an ace one, a court card none', () => {
    expect([0, 1, 2, 3, 4].map((r) => pipLayout(r).length)).toEqual([6, 7, 8, 9, 10]);
    expect(pipLayout(8)).toHaveLength(1);
    expect([5, 6, 7].map((r) => pipLayout(r).length)).toEqual([0, 0, 0]);
  });

  it('lays the pips out as on real cards: inside the face, no two on one spot, the lower half upside down', () => {
    for (let r = 0; r <= 8; r++) {
      const pips = pipLayout(r);
      const spots = new Set(pips.map((p) => `${String(p.x)},${String(p.y)}`));
      expect(spots.size, `rank ${String(r)}`).toBe(pips.length);
      for (const p of pips) {
        expect(p.x).toBeGreaterThan(30);
        expect(p.x).toBeLessThan(W - 30);
        expect(p.y).toBeGreaterThanOrEqual(28);
        expect(p.y).toBeLessThanOrEqual(H - 28);
        expect(p.flip).toBe(p.y > H / 2);
      }
    }
  });

  it('draws 6, 9 and 10 point-symmetric (the card reads the same turned round)', () => {
    for (const r of [0, 3, 4]) {
      const key = (x: number, y: number) => `${x.toFixed(1)},${y.toFixed(1)}`;
      const spots = new Set(pipLayout(r).map((p) => key(p.x, p.y)));
      for (const p of pipLayout(r)) expect(spots.has(key(W - p.x, H - p.y)), `rank ${String(r)}`).toBe(true);
    }
  });
});

describe('CardFace', () => {
  it('draws every card of the deck: pips and corner indices, court figures, jokers with the word', () => {
    for (let c = 0; c < DECK_SIZE; c++) {
      const { root, unmount } = mount(<CardFace card={c} jokerWord="JOKER" />);
      const svg = root.querySelector('svg.card-svg');
      expect(svg?.getAttribute('viewBox')).toBe(`0 0 ${String(W)} ${String(H)}`);
      expect(svg?.getAttribute('aria-hidden')).toBe('true');
      if (isJoker(c)) {
        expect(svg?.getAttribute('data-face')).toBe('joker');
        expect(svg?.textContent).toBe('JOKER');
        expect(svg?.querySelectorAll('polygon')).toHaveLength(2);
      } else {
        const r = rankOf(c);
        // The two corner indices each use a suit symbol, then the pips (or a court card's two small ones).
        const uses = svg?.querySelectorAll('use').length ?? 0;
        expect(uses, `card ${String(c)}`).toBe(2 + (r >= 5 && r <= 7 ? 2 : pipLayout(r).length));
        expect(svg?.querySelectorAll('text')).toHaveLength(2);
      }
      unmount();
    }
  });

  it('colours hearts and diamonds red, spades and clubs black, and the two jokers apart', () => {
    const fill = (c: number) => {
      const { root, unmount } = mount(<CardFace card={c} jokerWord="J" />);
      const f = root.querySelector('svg > g')?.getAttribute('fill');
      unmount();
      return f;
    };
    const [s, h, d, cl] = SUITS.map((su) => fill(cardOf(su, 4)));
    expect(h).toBe(d);
    expect(s).toBe(cl);
    expect(h).not.toBe(s);
    expect(fill(JOKER1)).not.toBe(fill(JOKER2));
  });

  it('makes a five-pointed star of ten points', () => {
    expect(starPoints(0, 0, 10).split(' ')).toHaveLength(10);
  });
});
