// Redis stream ids ("1700000000000-3"): the position a resume sends back.

/** Orders two stream ids; an empty id comes first. */
export function compareStreamIds(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return -1;
  if (b === '') return 1;
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const d = cmpDigits(am, bm);
  return d !== 0 ? d : cmpDigits(as, bs);
}

// Stream ids are up to 20 digits each: compare as strings of digits, since
// they may pass Number's safe range.
function cmpDigits(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  if (x.length !== y.length) return x.length < y.length ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}
