// Reports the gzipped size of the built JavaScript and CSS and fails when
// the JavaScript passes the budget (150 KB gzipped): phones on slow networks
// are half of Pulka's players.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET = 150 * 1024;
const dir = new URL('../../services/gateway/internal/webui/dist/app/assets/', import.meta.url).pathname;
let js = 0;
let css = 0;
for (const name of readdirSync(dir)) {
  if (name.endsWith('.gz')) continue;
  const gz = gzipSync(readFileSync(join(dir, name)), { level: 9 }).length;
  if (name.endsWith('.js')) js += gz;
  else if (name.endsWith('.css')) css += gz;
}
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(`gzipped JS ${kb(js)} (budget ${kb(BUDGET)}), gzipped CSS ${kb(css)}`);
if (js > BUDGET) {
  console.error('over the JavaScript budget');
  process.exit(1);
}
