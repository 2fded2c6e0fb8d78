// The classic hand schedule (pkg/classic variant.go), for the sheet's foot
// and the in-progress row before the server's sheet has it.

import type { Variant } from '../protocol/types';

const STANDARD = [1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1, 9, 9, 9, 9];
const STANDARD_PULKA_START = [0, 8, 12, 20, 24];
const NINES_PULKA_START = [0, 4, 8, 12, 16];

export function handsIn(v: Variant): number {
  return v === 'nines' ? 16 : 24;
}

export function cardsInHand(v: Variant, hand: number): number {
  if (v === 'nines') return hand >= 0 && hand < 16 ? 9 : 0;
  return STANDARD[hand] ?? 0;
}

export function pulkaOf(v: Variant, hand: number): number {
  const starts = v === 'nines' ? NINES_PULKA_START : STANDARD_PULKA_START;
  for (let p = 0; p < 4; p++) if (hand < (starts[p + 1] ?? 0)) return p;
  return 3;
}

/** How many hands pulka p has. */
export function pulkaSize(v: Variant, p: number): number {
  const starts = v === 'nines' ? NINES_PULKA_START : STANDARD_PULKA_START;
  return (starts[p + 1] ?? 0) - (starts[p] ?? 0);
}
