// What every screen shares: the language switcher, the connection banner
// and the Domino Coin note.

import { lang, LANG_NAMES, LANGS, setLang, t, type Lang } from '../i18n';
import type { Status } from '../protocol/connection';

export function LangSwitch() {
  return (
    <label class="lang-switch">
      <span class="sr-only">{t('language')}</span>
      <select
        value={lang.value}
        data-testid="lang-switch"
        onChange={(e) => setLang((e.currentTarget).value as Lang)}
      >
        {LANGS.map((l) => (
          <option key={l} value={l} lang={l}>
            {LANG_NAMES[l]}
          </option>
        ))}
      </select>
    </label>
  );
}

export function ConnectionBanner({ status }: { status: Status }) {
  if (status === 'open' || status === 'closed') return null;
  const text = status === 'unauthorized' ? t('conn_unauthorized') : status === 'connecting' ? t('conn_connecting') : t('conn_down');
  return (
    <div class={`banner ${status}`} role="status" aria-live="polite" data-testid="connection-banner">
      {text}
    </div>
  );
}

export function CoinNote() {
  return (
    <p class="coin-note" data-testid="coin-note">
      {t('coin_note')}
    </p>
  );
}
