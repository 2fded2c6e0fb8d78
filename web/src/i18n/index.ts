// Interface languages: Georgian (the default), English, Russian, Turkish.
// Every language has every key (the compiler checks it, and i18n.test.ts
// also fails on a key no screen uses). The choice is kept in localStorage.

import { signal } from '@preact/signals';
import { en, type MsgKey } from './en';
import { ka } from './ka';
import { ru } from './ru';
import { tr } from './tr';

export type { MsgKey };
export type Lang = 'ka' | 'en' | 'ru' | 'tr';

export const LANGS: readonly Lang[] = ['ka', 'en', 'ru', 'tr'];
export const MESSAGES: Record<Lang, Record<MsgKey, string>> = { ka, en, ru, tr };

/** Each language's own name, for the switcher. */
export const LANG_NAMES: Record<Lang, string> = { ka: 'ქართული', en: 'English', ru: 'Русский', tr: 'Türkçe' };

const STORAGE_KEY = 'pulka.lang';

function stored(): Lang {
  try {
    const v = localStorage.getItem(STORAGE_KEY);
    if (v && (LANGS as readonly string[]).includes(v)) return v as Lang;
  } catch {
    // Storage may be blocked (private mode): the default then.
  }
  return 'ka';
}

export const lang = signal<Lang>(stored());

export function setLang(l: Lang): void {
  lang.value = l;
  try {
    localStorage.setItem(STORAGE_KEY, l);
  } catch {
    // Not remembered, but still switched.
  }
  if (typeof document !== 'undefined') document.documentElement.lang = l;
}

export type Params = Record<string, string | number>;

const PLURAL_FORM = /^(zero|one|two|few|many|other)=/;

/** Whether a message has plural forms: "one=… {n} card|other=… {n} cards",
 * one form per category Intl.PluralRules gives its language (Russian has
 * one, few, many and other), chosen by the number in {n}. */
export function isPlural(msg: string): boolean {
  return PLURAL_FORM.test(msg);
}

/** The forms of a plural message by category. */
export function pluralForms(msg: string): Map<string, string> {
  const forms = new Map<string, string>();
  for (const part of msg.split('|')) {
    const m = PLURAL_FORM.exec(part);
    if (m?.[1]) forms.set(m[1], part.slice(m[0].length));
  }
  return forms;
}

const rules = new Map<Lang, Intl.PluralRules>();

function pluralRules(l: Lang): Intl.PluralRules {
  let r = rules.get(l);
  if (!r) {
    r = new Intl.PluralRules(l);
    rules.set(l, r);
  }
  return r;
}

/** The message in the current language, with {name} placeholders filled
 * (and, for a plural message, the form for {n}). */
export function t(key: MsgKey, params?: Params): string {
  let msg: string = MESSAGES[lang.value][key];
  if (isPlural(msg)) {
    const forms = pluralForms(msg);
    const n = Number(params?.n);
    msg = forms.get(Number.isFinite(n) ? pluralRules(lang.value).select(n) : 'other') ?? forms.get('other') ?? '';
  }
  if (!params) return msg;
  return msg.replace(/\{(\w+)\}/g, (m, k: string) => {
    const v = params[k];
    return v === undefined ? m : String(v);
  });
}
