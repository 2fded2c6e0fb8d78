// The paper sheet's /100 notation. All arithmetic stays in whole points; only
// the written form divides by a hundred, with integers alone so no rounding
// can creep in (pkg/scoring FormatPoints does the same on the server).

/** The minus sign of the sheet (U+2212), as on paper. */
export const MINUS = '\u2212';

/** 950 → "9.5", 900 → "9", −40 → "−0.4", −200 → "−2", 5 → "0.05". */
export function formatPoints(points: number): string {
  const whole = Math.trunc(points);
  const abs = Math.abs(whole);
  const int = Math.floor(abs / 100);
  const frac = abs % 100;
  let s = String(int);
  if (frac !== 0) s += '.' + String(frac).padStart(2, '0').replace(/0$/, '');
  return whole < 0 ? MINUS + s : s;
}

/** A hand's whole points as written in its cell: 150, −900. */
export function formatWhole(points: number): string {
  const whole = Math.trunc(points);
  return whole < 0 ? MINUS + String(-whole) : String(whole);
}

/** A premia or moshla beside the Σ: "+2.5", "−3". */
export function formatSigned(points: number): string {
  return points > 0 ? '+' + formatPoints(points) : formatPoints(points);
}

const ROMAN = ['I', 'II', 'III', 'IV'];

export function pulkaNumeral(index: number): string {
  return ROMAN[index] ?? String(index + 1);
}
