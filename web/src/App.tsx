// The application shell: the top bar, the connection banner, error toasts,
// and the screen for the route.

import { useEffect } from 'preact/hooks';
import { t } from './i18n';
import type { Store } from './app/store';
import { navigate, route, WALLET_PATH } from './app/router';
import { ConnectionBanner, LangSwitch } from './ui/Chrome';
import { errorText, playerName } from './ui/text';
import { Entry } from './screens/Entry';
import { Lobby } from './screens/Lobby';
import { TableScreen } from './screens/TableScreen';
import { Wallet } from './screens/Wallet';
import { CardSprite } from './ui/CardArt';

function Toast({ store }: { store: Store }) {
  const toast = store.toast.value;
  useEffect(() => {
    if (!toast) return undefined;
    const h = setTimeout(() => {
      if (store.toast.value?.serial === toast.serial) store.toast.value = null;
    }, 5000);
    return () => clearTimeout(h);
  }, [toast?.serial]);
  if (!toast) return null;
  return (
    <div class={`toast ${toast.kind}`} role="alert" data-testid="toast">
      {errorText(toast.text)}
      <button type="button" aria-label={t('close')} onClick={() => (store.toast.value = null)}>
        ×
      </button>
    </div>
  );
}

export function App({ store }: { store: Store }) {
  const session = store.session.value;
  const r = route.value;
  const balance = store.balance.value;
  return (
    <div class="app">
      <CardSprite />
      <a class="skip" href="#main">
        {t('skip_to_main')}
      </a>
      <nav class="topbar" aria-label={t('app_name')}>
        <span class="brand">{t('app_name')}</span>
        <span class="spacer" />
        {session && (
          <span class="who" data-testid="who">
            {playerName(session.player.name)}
            {session.player.guest ? ` (${t('guest')})` : ''}
            {!session.player.guest && (
              <>
                {' '}·{' '}
                <a
                  href={WALLET_PATH}
                  class="balance"
                  title={t('coin_note')}
                  data-testid="balance"
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(WALLET_PATH);
                  }}
                >
                  {balance === null ? t('balance_unknown') : t('balance', { n: balance.available })}
                </a>
              </>
            )}
          </span>
        )}
        <LangSwitch />
        {session && (
          <button type="button" class="link" onClick={() => void store.signOut()} data-testid="sign-out">
            {t('sign_out')}
          </button>
        )}
      </nav>
      <ConnectionBanner status={session ? store.status.value : 'open'} />
      <Toast store={store} />
      <div id="main">
        {store.checking.value ? (
          <p class="loading">{t('loading')}</p>
        ) : !session ? (
          <Entry store={store} />
        ) : r.name === 'table' ? (
          <TableScreen key={r.tableId} store={store} tableId={r.tableId} />
        ) : r.name === 'wallet' ? (
          <Wallet store={store} />
        ) : (
          <Lobby store={store} />
        )}
      </div>
    </div>
  );
}
