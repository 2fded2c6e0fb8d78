import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { en, type MsgKey } from './en';
import { lang, LANGS, MESSAGES, setLang, t } from './index';

const KEYS = Object.keys(en) as MsgKey[];
const SRC = join(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'i18n' || name === 'testdata' ? [] : sources(p);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.tsx?$/.test(name) ? [p] : [];
  });
}

function placeholders(s: string): string[] {
  return [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();
}

describe('translations', () => {
  afterEach(() => setLang('en'));

  it.each(LANGS)('%s has every key, none empty, none extra', (l) => {
    const msgs = MESSAGES[l];
    const missing = KEYS.filter((k) => typeof msgs[k] !== 'string' || msgs[k].trim() === '');
    const extra = Object.keys(msgs).filter((k) => !(k in en));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });

  it.each(LANGS)('%s keeps the placeholders of every message', (l) => {
    const wrong = KEYS.filter((k) => placeholders(MESSAGES[l][k]).join() !== placeholders(en[k]).join());
    expect(wrong).toEqual([]);
  });

  it('uses every key somewhere in the app', () => {
    const code = sources(SRC)
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const unused = KEYS.filter((k) => !code.includes(`'${k}'`) && !code.includes(`"${k}"`));
    expect(unused).toEqual([]);
  });

  it('translates the other languages (they are not copies of English)', () => {
    for (const l of LANGS.filter((x) => x !== 'en')) {
      const same = KEYS.filter((k) => MESSAGES[l][k] === en[k] && /[a-z]{4,}/i.test(en[k]));
      // Brand and coin names stay as they are; a handful at most.
      expect(same.length, `${l}: ${same.join(', ')}`).toBeLessThanOrEqual(4);
    }
  });

  it('defaults to Georgian and remembers the choice', () => {
    localStorage.removeItem('pulka.lang');
    setLang('ru');
    expect(localStorage.getItem('pulka.lang')).toBe('ru');
    expect(lang.value).toBe('ru');
    expect(t('lobby_title')).toBe('Лобби');
    expect(document.documentElement.lang).toBe('ru');
  });

  it('fills placeholders', () => {
    setLang('en');
    expect(t('bid_forbidden', { n: 2, total: 5 })).toBe('As the dealer you may not bid 2: the bids would total 5.');
  });
});
