// The card art: every face and the back drawn as a small SVG generated
// here, no image files. The four suit shapes and the back are symbols of
// one sprite (CardSprite, drawn once by the app), so a card is a rectangle,
// its corner indices and <use>s of the sprite: a few hundred bytes of
// markup, sharp at any size. Faces are laid out as on real cards: the pips
// of 6–10 in two columns (the lower half upside down), one big pip for an
// ace, a double-ended figure for a jack, queen and king, a jester for a
// joker. Layout is pure (pipLayout) so it is tested without a browser.

import type { JSX } from 'preact';
import { isJoker, isRed, JOKER1, rankCode, rankOf, suitOf, type Card, type Suit } from '../protocol/cards';

/** The card's drawing box: 100 × 140 units (the ratio of a real card, 5 : 7). */
export const W = 100;
export const H = 140;
const CX = W / 2;
const CY = H / 2;

const RED = '#c0262d';
const BLACK = '#1b1b1b';
const GOLD = '#e2b33c';
const SKIN = '#f6d7b0';

/** Where a pip sits: its centre, and whether it is drawn upside down. */
export interface Pip {
  x: number;
  y: number;
  flip: boolean;
}

const LEFT = 36;
const RIGHT = 64;
const ROWS3 = [30, 70, 110];
const ROWS4 = [30, 56.7, 83.3, 110];

/**
 * The pips of a numbered card (6…10 by rank 0…4) as on real cards: two
 * columns of three (6, 7, 8) or four (9, 10), with one (7, 9) or two (8, 10)
 * more in the middle; those below the centre are upside down. An ace has
 * one pip in the centre; court cards and jokers have none.
 */
export function pipLayout(rank: number): Pip[] {
  const at = (x: number, y: number): Pip => ({ x, y, flip: y > CY });
  const sides = (rows: number[]) => rows.flatMap((y) => [at(LEFT, y), at(RIGHT, y)]);
  switch (rank) {
    case 0:
      return sides(ROWS3);
    case 1:
      return [...sides(ROWS3), at(CX, 50)];
    case 2:
      return [...sides(ROWS3), at(CX, 50), at(CX, 90)];
    case 3:
      return [...sides(ROWS4), at(CX, CY)];
    case 4:
      return [...sides(ROWS4), at(CX, 43.3), at(CX, 96.7)];
    case 8:
      return [at(CX, CY)];
    default:
      return [];
  }
}

// Functions, so each <symbol> gets elements of its own.
const SUIT_PATHS: Record<Suit, () => JSX.Element> = {
  S: () => <path d="M50 4C24 30 4 44 4 64c0 14 11 24 24 24 9 0 16-4 20-11-1 9-5 16-12 21h28c-7-5-11-12-12-21 4 7 11 11 20 11 13 0 24-10 24-24C96 44 76 30 50 4z" />,
  H: () => <path d="M50 94C22 70 2 54 2 31 2 15 14 4 28 4c10 0 18 6 22 16C54 10 62 4 72 4c14 0 26 11 26 27 0 23-20 39-48 63z" />,
  D: () => <path d="M50 2 88 50 50 98 12 50z" />,
  C: () => (
    <g>
      <circle cx="50" cy="27" r="21" />
      <circle cx="27" cy="60" r="21" />
      <circle cx="73" cy="60" r="21" />
      <path d="M44 52h12c0 20 3 34 14 46H30c11-12 14-26 14-46z" />
    </g>
  ),
};

/** The symbols every card uses; drawn once, invisible, at the top of the app. */
export function CardSprite() {
  return (
    <svg width="0" height="0" style={{ position: 'absolute' }} aria-hidden="true">
      <defs>
        {(Object.keys(SUIT_PATHS) as Suit[]).map((s) => (
          <symbol key={s} id={`pk-${s}`} viewBox="0 0 100 100">
            {SUIT_PATHS[s]()}
          </symbol>
        ))}
        <pattern id="pk-lattice" width="12" height="12" patternUnits="userSpaceOnUse">
          <rect width="12" height="12" fill="#23406e" />
          <path d="M6 0 12 6 6 12 0 6z" fill="#2f5597" />
          <circle cx="6" cy="6" r="1.4" fill="#9fb6e0" />
        </pattern>
        <symbol id="pk-back" viewBox={`0 0 ${W} ${H}`}>
          <rect x="1" y="1" width={W - 2} height={H - 2} rx="8" fill="#fff" stroke="#1a2f52" stroke-width="2" />
          <rect x="7" y="7" width={W - 14} height={H - 14} rx="5" fill="url(#pk-lattice)" />
          <path d={`M${CX} ${CY - 22} ${CX + 16} ${CY} ${CX} ${CY + 22} ${CX - 16} ${CY}z`} fill={GOLD} stroke="#fff" stroke-width="2" />
        </symbol>
      </defs>
    </svg>
  );
}

function suitUse(s: Suit, x: number, y: number, size: number, flip = false) {
  return (
    <use
      href={`#pk-${s}`}
      x={x - size / 2}
      y={y - size / 2}
      width={size}
      height={size}
      transform={flip ? `rotate(180 ${x} ${y})` : undefined}
    />
  );
}

/** The five points of a star around (cx, cy). */
export function starPoints(cx: number, cy: number, r: number): string {
  const out: string[] = [];
  for (let i = 0; i < 10; i++) {
    const a = (Math.PI / 5) * i - Math.PI / 2;
    const rr = i % 2 === 0 ? r : r * 0.45;
    out.push(`${(cx + rr * Math.cos(a)).toFixed(1)},${(cy + rr * Math.sin(a)).toFixed(1)}`);
  }
  return out.join(' ');
}

/** Rank and suit in the top-left corner (the part of a card a fanned hand shows), again upside down bottom-right. */
function Corner({ rank, suit }: { rank: string; suit: Suit }) {
  // A function, not one element used twice: Preact keeps state on each element.
  const index = () => (
    <g>
      <text x="14" y="29" font-size="29" font-weight="700" text-anchor="middle" font-family="system-ui, 'Noto Sans', sans-serif" textLength={rank.length > 1 ? 25 : undefined} lengthAdjust="spacingAndGlyphs">
        {rank}
      </text>
      {suitUse(suit, 14, 44, 20)}
    </g>
  );
  return (
    <>
      {index()}
      <g transform={`rotate(180 ${CX} ${CY})`}>{index()}</g>
    </>
  );
}

/** Half of a court card's figure (the other half is it turned around). */
function CourtHalf({ rank, suit, colour }: { rank: number; suit: Suit; colour: string }) {
  // 5 = jack, 6 = queen, 7 = king.
  const hat =
    rank === 7 ? (
      <path d="M39 37V25l5.5 5.5L50 22l5.5 8.5L61 25v12z" fill={GOLD} stroke={BLACK} stroke-width="1.2" />
    ) : rank === 6 ? (
      <>
        <path d="M40 38c2-9 18-9 20 0z" fill={GOLD} stroke={BLACK} stroke-width="1.2" />
        <circle cx="50" cy="29" r="2.5" fill={colour} />
      </>
    ) : (
      <>
        <path d="M39 39c1-11 18-14 24-5l6-4-4 8z" fill={colour} stroke={BLACK} stroke-width="1.2" />
        <path d="M63 33c3-6 6-7 8-6" fill="none" stroke={GOLD} stroke-width="2.5" stroke-linecap="round" />
      </>
    );
  return (
    <g>
      {rank === 6 && <path d="M40 42c-3 8-2 14 1 18h18c3-4 4-10 1-18z" fill="#6d4c2f" />}
      <path d="M30 70c1-12 8-17 20-17s19 5 20 17z" fill={colour} stroke={BLACK} stroke-width="1.2" />
      <path d="M41 55l9 9 9-9" fill="none" stroke={GOLD} stroke-width="3" />
      <circle cx="50" cy="45" r="9" fill={SKIN} stroke={BLACK} stroke-width="1.2" />
      {rank === 7 && <path d="M43 49c2 8 12 8 14 0-4 2-10 2-14 0z" fill="#8d6e63" />}
      <circle cx="46.5" cy="44" r="1.1" fill={BLACK} />
      <circle cx="53.5" cy="44" r="1.1" fill={BLACK} />
      {hat}
      {suitUse(suit, 34, 28, 11)}
    </g>
  );
}

function Court({ rank, suit, colour }: { rank: number; suit: Suit; colour: string }) {
  const half = () => <CourtHalf rank={rank} suit={suit} colour={colour} />;
  return (
    <g>
      <rect x="28" y="19" width="44" height="102" rx="3" fill="#fdf3d8" stroke={colour} stroke-width="1.5" />
      {half()}
      <g transform={`rotate(180 ${CX} ${CY})`}>{half()}</g>
      <path d={`M28 ${CY}h44`} stroke={colour} stroke-width="1" />
    </g>
  );
}

function Jester({ colour, word }: { colour: string; word: string }) {
  const other = colour === RED ? BLACK : RED;
  return (
    <g>
      <path d="M50 48 26 32c3 11 5 20 6 30z" fill={colour} />
      <path d="M50 48 50 16c-8 10-14 24-16 36z" fill={other} />
      <path d="M50 48 50 16c8 10 14 24 16 36z" fill={colour} />
      <path d="M50 48 74 32c-3 11-5 20-6 30z" fill={other} />
      <circle cx="26" cy="32" r="4" fill={GOLD} />
      <circle cx="50" cy="15" r="4" fill={GOLD} />
      <circle cx="74" cy="32" r="4" fill={GOLD} />
      <path d="M30 63c4-8 36-8 40 0z" fill={GOLD} />
      <circle cx="50" cy="74" r="13" fill={SKIN} stroke={BLACK} stroke-width="1.2" />
      <circle cx="45" cy="71" r="1.5" fill={BLACK} />
      <circle cx="55" cy="71" r="1.5" fill={BLACK} />
      <path d="M43 78c4 5 10 5 14 0" fill="none" stroke={RED} stroke-width="2" stroke-linecap="round" />
      <path d="M29 98l7-10 7 10 7-10 7 10 7-10 7 10v14H29z" fill={colour} stroke={BLACK} stroke-width="1" />
      <text x={CX} y="128" font-size="12" font-weight="700" text-anchor="middle" textLength="48" lengthAdjust="spacingAndGlyphs" font-family="system-ui, 'Noto Sans', 'Noto Sans Georgian', sans-serif">
        {word}
      </text>
    </g>
  );
}

/** A card's face as an SVG (aria-hidden: the element around it names the card). */
export function CardFace({ card, jokerWord }: { card: Card; jokerWord: string }) {
  const s = suitOf(card);
  const frame = <rect x="1" y="1" width={W - 2} height={H - 2} rx="8" fill="#fff" stroke="#666" stroke-width="1.5" />;
  if (isJoker(card) || s === null) {
    const colour = card === JOKER1 ? BLACK : RED;
    const star = () => <polygon points={starPoints(14, 17, 11)} />;
    return (
      <svg class="card-svg" viewBox={`0 0 ${W} ${H}`} aria-hidden="true" data-face="joker">
        {frame}
        <g fill={colour}>
          {star()}
          <g transform={`rotate(180 ${CX} ${CY})`}>{star()}</g>
          <Jester colour={colour} word={jokerWord} />
        </g>
      </svg>
    );
  }
  const colour = isRed(s) ? RED : BLACK;
  const rank = rankOf(card);
  const pips = pipLayout(rank);
  return (
    <svg class="card-svg" viewBox={`0 0 ${W} ${H}`} aria-hidden="true" data-face={rankCode(card)}>
      {frame}
      <g fill={colour}>
        <Corner rank={rankCode(card)} suit={s} />
        {rank >= 5 && rank <= 7 ? <Court rank={rank} suit={s} colour={colour} /> : pips.map((p) => suitUse(s, p.x, p.y, rank === 8 ? 46 : 19, p.flip))}
      </g>
    </svg>
  );
}

/** A card's back: the lattice every hidden card shows. */
export function CardBackArt() {
  return (
    <svg class="card-svg" viewBox={`0 0 ${W} ${H}`} aria-hidden="true">
      <use href="#pk-back" width={W} height={H} />
    </svg>
  );
}
