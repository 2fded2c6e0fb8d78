// The entry: play as a guest, log in, or register.

import { useState } from 'preact/hooks';
import { t } from '../i18n';
import type { Store } from '../app/store';
import { ApiError } from '../protocol/api';
import { errorText } from '../ui/text';
import { CoinNote } from '../ui/Chrome';

type Mode = 'guest' | 'login' | 'register';

export function Entry({ store }: { store: Store }) {
  const [mode, setMode] = useState<Mode>('guest');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const s =
        mode === 'guest'
          ? await store.api.guest()
          : mode === 'login'
            ? await store.api.login(name.trim(), password)
            : await store.api.register(name.trim(), password);
      store.signedIn(s);
    } catch (err) {
      setError(err instanceof ApiError ? errorText(err.code) : errorText('network'));
    } finally {
      setBusy(false);
    }
  };

  const tab = (m: Mode, label: string) => (
    <button
      type="button"
      role="tab"
      aria-selected={mode === m}
      class={mode === m ? 'tab active' : 'tab'}
      data-testid={`entry-tab-${m}`}
      onClick={() => {
        setMode(m);
        setError('');
      }}
    >
      {label}
    </button>
  );

  return (
    <main class="entry" aria-labelledby="entry-title">
      <h1 id="entry-title" class="logo">
        {t('app_name')}
      </h1>
      <p class="tagline">{t('tagline')}</p>
      <div class="tabs" role="tablist" aria-label={t('entry_how')}>
        {tab('guest', t('entry_guest'))}
        {tab('login', t('entry_login'))}
        {tab('register', t('entry_register'))}
      </div>
      <form class="entry-form" onSubmit={(e) => void submit(e)} data-testid={`entry-form-${mode}`}>
        {mode === 'guest' && <p class="hint">{t('guest_hint')}</p>}
        {mode !== 'guest' && (
          <label>
            {t('field_username')}
            <input
              name="username"
              autoComplete="username"
              value={name}
              required
              minLength={3}
              maxLength={24}
              onInput={(e) => setName((e.currentTarget).value)}
            />
          </label>
        )}
        {mode !== 'guest' && (
          <label>
            {t('field_password')}
            <input
              name="password"
              type="password"
              autoComplete={mode === 'login' ? 'current-password' : 'new-password'}
              value={password}
              required
              minLength={mode === 'register' ? 8 : undefined}
              onInput={(e) => setPassword((e.currentTarget).value)}
            />
          </label>
        )}
        {mode === 'register' && <p class="hint">{t('register_hint')}</p>}
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy} data-testid="entry-submit">
          {mode === 'guest' ? t('entry_play_guest') : mode === 'login' ? t('entry_login') : t('entry_register')}
        </button>
      </form>
      <CoinNote />
    </main>
  );
}
