// A generated avatar: the name's initials on a colour drawn from the
// player's id, so the same player always looks the same; bots are grey
// and square (shapes and text only: no emoji font is needed).

const COLOURS = ['#8e3b46', '#2d6a4f', '#1d4e89', '#7b2cbf', '#a0561a', '#006d77', '#6a4c93', '#9c6644'];

export function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const first = parts[0] ?? '';
  const last = parts.length > 1 ? (parts[parts.length - 1] ?? '') : '';
  const chars = Array.from(first).slice(0, last ? 1 : 2).join('') + Array.from(last).slice(0, 1).join('');
  // Georgian stays as written: its capitals (Mtavruli) are missing from
  // common fonts and would draw as empty boxes.
  return Array.from(chars, (c) => (/[\u10A0-\u10FF\u1C90-\u1CBF\u2D00-\u2D2F]/.test(c) ? c : c.toUpperCase())).join('') || '?';
}

export function colourOf(key: string): string {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) >>> 0;
  return COLOURS[h % COLOURS.length] ?? '#555';
}

export function Avatar({ name, id, bot }: { name: string; id: string; bot?: boolean }) {
  return (
    <span class={`avatar${bot ? ' bot' : ''}`} style={{ background: colourOf(id || name) }} aria-hidden="true">
      {initials(name)}
    </span>
  );
}
