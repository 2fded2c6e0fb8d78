// Reports the gzipped size of the built JavaScript, CSS and any other
// assets (images), and fails over a budget: 150 KB of JavaScript, and
// 250 KB for all of it with the card art (issue 22). The cards are drawn
// by code (src/ui/CardArt.tsx), so their art is inside the JavaScript; an
// image file added later counts under "other". Phones on slow networks are
// half of Pulka's players.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const JS_BUDGET = 150 * 1024;
const TOTAL_BUDGET = 250 * 1024;
const dir = new URL('../../services/gateway/internal/webui/dist/app/assets/', import.meta.url).pathname;
let js = 0;
let css = 0;
let other = 0;
for (const name of readdirSync(dir)) {
  if (name.endsWith('.gz')) continue;
  const gz = gzipSync(readFileSync(join(dir, name)), { level: 9 }).length;
  if (name.endsWith('.js')) js += gz;
  else if (name.endsWith('.css')) css += gz;
  else other += gz;
}
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const total = js + css + other;
console.log(
  `gzipped JS ${kb(js)} (budget ${kb(JS_BUDGET)}; the card art is drawn by it), CSS ${kb(css)}, other assets ${kb(other)}; ` +
    `total ${kb(total)} (budget ${kb(TOTAL_BUDGET)})`,
);
if (js > JS_BUDGET) {
  console.error('over the JavaScript budget');
  process.exit(1);
}
if (total > TOTAL_BUDGET) {
  console.error('over the budget for JavaScript, CSS and card art');
  process.exit(1);
}
