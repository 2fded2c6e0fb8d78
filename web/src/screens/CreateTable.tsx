// Creating a table with every setting, and its rules described as the
// players will read them before sitting down.

import { useState } from 'preact/hooks';
import { t } from '../i18n';
import type { Store } from '../app/store';
import { navigate, tablePath } from '../app/router';
import type { BotLevel, Khishti, TableSettings } from '../protocol/types';
import { ApiError } from '../protocol/api';
import { botLevelName, describeRules, errorText, khishtiName } from '../ui/text';
import { Dialog } from '../ui/Dialog';
import { CoinNote } from '../ui/Chrome';

export function defaultSettings(): TableSettings {
  return {
    game: 'classic',
    variant: 'standard',
    khishti: '200',
    premia: true,
    moshla: true,
    restDocked: true,
    japaneseTarget: 21,
    visibility: 'public',
    hasPassword: false,
    stake: { kind: 'free' },
    moveTime: null,
    reconnectGrace: null,
    botLevel: 'normal',
  };
}

const KHISHTIS: Khishti[] = ['200', '500', '100', 'per-card'];
const TARGETS = [11, 15, 21, 31];
const BOT_LEVELS: BotLevel[] = ['easy', 'normal', 'strong'];

export function CreateTable({ store, onClose }: { store: Store; onClose: () => void }) {
  const guest = store.session.value?.player.guest ?? true;
  const stakes = store.stakes.value;
  const [s, setS] = useState<TableSettings>(defaultSettings);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [sitDown, setSitDown] = useState(true);
  const [bots, setBots] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const classic = s.game === 'classic';
  const set = (patch: Partial<TableSettings>) => setS((cur) => ({ ...cur, ...patch }));
  const settings: TableSettings = { ...s, hasPassword: password !== '' };

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const id = await store.api.createTable(name.trim() || t('table_default_name'), settings, password, sitDown);
      if (bots && classic) await store.api.fillWithBots(id);
      onClose();
      navigate(tablePath(id));
    } catch (err) {
      setError(err instanceof ApiError ? errorText(err.code) : errorText('network'));
    } finally {
      setBusy(false);
    }
  };

  const radio = <T extends string | number>(group: string, value: T, current: T, label: string, onPick: (v: T) => void, disabled = false) => (
    <label class="choice">
      <input type="radio" name={group} checked={value === current} disabled={disabled} onChange={() => onPick(value)} />
      {label}
    </label>
  );

  return (
    <Dialog title={t('create_title')} onClose={onClose} wide testid="create-table">
      <form class="create-form" onSubmit={(e) => void submit(e)}>
        <label>
          {t('field_table_name')}
          <input value={name} maxLength={40} placeholder={t('table_default_name')} onInput={(e) => setName((e.currentTarget).value)} />
        </label>
        <fieldset>
          <legend>{t('field_game')}</legend>
          {radio('game', 'standard', classic ? (s.variant ?? 'standard') : 'japanese', t('variant_standard'), () => set({ game: 'classic', variant: 'standard' }))}
          {radio('game', 'nines', classic ? (s.variant ?? 'standard') : 'japanese', t('variant_nines'), () => set({ game: 'classic', variant: 'nines' }))}
          {radio('game', 'japanese', classic ? (s.variant ?? 'standard') : 'japanese', t('game_japanese'), () => set({ game: 'japanese' }))}
        </fieldset>
        {classic ? (
          <>
            <fieldset>
              <legend>{t('field_khishti')}</legend>
              {KHISHTIS.map((k) => radio('khishti', k, s.khishti ?? '200', khishtiName(k), (v) => set({ khishti: v })))}
            </fieldset>
            <fieldset>
              <legend>{t('field_premia_moshla')}</legend>
              <label class="choice">
                <input type="checkbox" checked={s.premia} onChange={(e) => set({ premia: (e.currentTarget).checked })} data-testid="opt-premia" />
                {t('opt_premia')}
              </label>
              <label class="choice">
                <input type="checkbox" checked={s.moshla} disabled={!s.premia} onChange={(e) => set({ moshla: (e.currentTarget).checked })} data-testid="opt-moshla" />
                {t('opt_moshla')}
              </label>
              <label class="choice">
                <input
                  type="checkbox"
                  checked={s.restDocked}
                  disabled={!s.premia || !s.moshla}
                  onChange={(e) => set({ restDocked: (e.currentTarget).checked })}
                  data-testid="opt-rest-docked"
                />
                {t('opt_rest_docked')}
              </label>
            </fieldset>
            <fieldset>
              <legend>{t('field_bot_level')}</legend>
              {BOT_LEVELS.map((l) => radio('bot-level', l, s.botLevel ?? 'normal', botLevelName(l), (v) => set({ botLevel: v })))}
            </fieldset>
          </>
        ) : (
          <fieldset>
            <legend>{t('field_target')}</legend>
            {TARGETS.map((n) => radio('target', n, s.japaneseTarget, String(n), (v) => set({ japaneseTarget: v })))}
          </fieldset>
        )}
        <fieldset>
          <legend>{t('field_stake')}</legend>
          {radio('stake', 'free', s.stake.kind, t('stake_free'), () => set({ stake: { kind: 'free' } }))}
          {radio('stake', 'coins', s.stake.kind, t('opt_stake_coins'), () => set({ stake: { kind: 'coins', amount: stakes[0] ?? 0, payout: [] } }), guest || stakes.length === 0)}
          {s.stake.kind === 'coins' && (
            <>
              <label>
                {t('field_coins')}
                <select
                  value={String(s.stake.amount)}
                  onChange={(e) => set({ stake: { kind: 'coins', amount: Number((e.currentTarget).value), payout: [] } })}
                  data-testid="opt-stake-amount"
                >
                  {stakes.map((n) => (
                    <option key={n} value={String(n)}>
                      {n}
                    </option>
                  ))}
                </select>
              </label>
              <CoinNote />
            </>
          )}
          {guest && <p class="hint">{t('hint_guest_coins')}</p>}
        </fieldset>
        <fieldset>
          <legend>{t('field_visibility')}</legend>
          {radio('vis', 'public', s.visibility, t('opt_public'), () => set({ visibility: 'public' }))}
          {radio('vis', 'private', s.visibility, t('opt_private'), () => set({ visibility: 'private' }))}
          <label>
            {t('field_table_password')}
            <input type="password" autoComplete="new-password" value={password} maxLength={64} onInput={(e) => setPassword((e.currentTarget).value)} />
          </label>
        </fieldset>
        <label class="choice">
          <input type="checkbox" checked={sitDown} onChange={(e) => setSitDown((e.currentTarget).checked)} />
          {t('opt_sit_down')}
        </label>
        {classic && (
          <label class="choice">
            <input type="checkbox" checked={bots} onChange={(e) => setBots((e.currentTarget).checked)} data-testid="opt-bots" />
            {t('opt_fill_bots')}
          </label>
        )}
        <section class="rules-preview" aria-label={t('rules_title')}>
          <h3>{t('rules_title')}</h3>
          <ul>
            {describeRules(settings).map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </section>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy} data-testid="create-submit">
          {t('create_submit')}
        </button>
      </form>
    </Dialog>
  );
}
