import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { en, type MsgKey } from './en';
import { isPlural, lang, LANGS, MESSAGES, pluralForms, setLang, t } from './index';

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
  return [...new Set([...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? ''))].sort();
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

  it.each(LANGS)('%s has exactly its plural categories in every plural message, each with {n}', (l) => {
    const want = [...new Intl.PluralRules(l).resolvedOptions().pluralCategories].sort().join();
    const wrong = KEYS.filter((k) => {
      const msg = MESSAGES[l][k];
      if (isPlural(en[k]) !== isPlural(msg)) return true;
      if (!isPlural(msg)) return false;
      const forms = pluralForms(msg);
      return [...forms.keys()].sort().join() !== want || [...forms.values()].some((f) => !f.includes('{n}') || placeholders(f).join() !== placeholders(en[k]).join());
    });
    expect(wrong).toEqual([]);
  });

  it('chooses the plural form by the language’s rules', () => {
    setLang('en');
    expect(t('n_cards', { n: 1 })).toBe('1 card');
    expect(t('n_cards', { n: 9 })).toBe('9 cards');
    expect(t('your_hand', { n: 1 })).toBe('Your hand, 1 card');
    expect(t('hand_info', { n: 1, cards: t('n_cards', { n: 1 }), pulka: 'Pulka 1' })).toBe('Hand 1 · 1 card · Pulka 1');
    setLang('ru');
    expect([1, 2, 5, 11, 21, 22, 25].map((n) => t('n_cards', { n }))).toEqual(['1 карта', '2 карты', '5 карт', '11 карт', '21 карта', '22 карты', '25 карт']);
    expect(t('timer_left', { n: 3 })).toBe('осталось 3 секунды');
    setLang('tr');
    expect(t('n_cards', { n: 5 })).toBe('5 kart');
    setLang('ka');
    expect(t('n_cards', { n: 5 })).toBe('5 კარტი');
  });

  it('uses every key somewhere in the app', () => {
    const code = sources(SRC)
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const unused = KEYS.filter((k) => !code.includes(`'${k}'`) && !code.includes(`"${k}"`));
    expect(unused).toEqual([]);
  });

  // Words that are the language's own and happen to be spelt as in English.
  const SAME_WORD: Partial<Record<string, MsgKey[]>> = { tr: ['joker_face'] };

  it('translates the other languages (they are not copies of English)', () => {
    for (const l of LANGS.filter((x) => x !== 'en')) {
      const same = KEYS.filter((k) => MESSAGES[l][k] === en[k] && /[a-z]{4,}/i.test(en[k]) && !SAME_WORD[l]?.includes(k));
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
