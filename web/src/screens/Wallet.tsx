// The ledger page (/wallet): the account's Domino Coin balance, the daily
// bonus, and the ledger, newest first — date, what, amount, balance after.
// Domino Coin is a virtual coin: the note says so.

import { useEffect, useState } from 'preact/hooks';
import { lang, t, type MsgKey } from '../i18n';
import type { Store } from '../app/store';
import { navigate, tablePath } from '../app/router';
import { ApiError } from '../protocol/api';
import { CoinNote } from '../ui/Chrome';
import { errorText } from '../ui/text';
import { entryAmount, mergeEntries, type EntryKind, type LedgerItem } from '../wallet/wallet';

const KIND_KEYS: Record<EntryKind, MsgKey> = {
  hold: 'kind_hold',
  release: 'kind_release',
  stake_settled: 'kind_stake_settled',
  payout: 'kind_payout',
  signup: 'kind_signup',
  bonus: 'kind_bonus',
  forfeit: 'kind_forfeit',
  other: 'kind_other',
};

export function entryWhat(e: LedgerItem): string {
  return t(KIND_KEYS[e.kind]);
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

export function Wallet({ store }: { store: Store }) {
  const session = store.session.value;
  const balance = store.balance.value;
  const [entries, setEntries] = useState<LedgerItem[]>([]);
  const [next, setNext] = useState('');
  const [loading, setLoading] = useState(false);
  const [bonusMsg, setBonusMsg] = useState('');
  const [busy, setBusy] = useState(false);
  const guest = session?.player.guest ?? true;

  const load = async (before: string) => {
    setLoading(true);
    try {
      const page = await store.api.ledger(before);
      setEntries((cur) => mergeEntries(before ? cur : [], page.entries, 10_000));
      setNext(page.nextBefore);
      store.noteCoins(null, page.entries);
    } catch (e) {
      store.showApiError(e);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    if (!guest) void load('');
  }, [guest]);

  // Entries that come live (the balance frames) join the page's newest end.
  const live = store.coinEntries.value;
  useEffect(() => {
    const newest = entries[0]?.seq ?? 0;
    const fresh = live.filter((e) => e.seq > newest);
    if (fresh.length > 0 && !loading) setEntries((cur) => mergeEntries(cur, fresh, 10_000));
  }, [live]);

  const claim = async () => {
    setBusy(true);
    setBonusMsg('');
    try {
      const r = await store.api.claimDailyBonus();
      store.noteCoins(r.balance, [r.entry]);
      setBonusMsg(t('bonus_received', { n: r.entry.availableDelta }));
    } catch (e) {
      if (e instanceof ApiError) setBonusMsg(errorText(e.code));
      else store.showApiError(e);
    } finally {
      setBusy(false);
    }
  };

  if (guest) {
    return (
      <main class="wallet" aria-labelledby="wallet-title">
        <h1 id="wallet-title">{t('wallet_title')}</h1>
        <p>{t('hint_guest_coins')}</p>
        <CoinNote />
      </main>
    );
  }
  const date = new Intl.DateTimeFormat(lang.value, { dateStyle: 'medium', timeStyle: 'short' });
  return (
    <main class="wallet" aria-labelledby="wallet-title">
      <div class="lobby-head">
        <h1 id="wallet-title">{t('wallet_title')}</h1>
        <button type="button" onClick={() => navigate('/')}>
          {t('lobby_title')}
        </button>
      </div>
      <p class="wallet-balance" data-testid="wallet-balance">
        {balance === null ? t('balance_unknown') : t('wallet_available', { n: balance.available })}
        {balance !== null && balance.held > 0 && <> · {t('wallet_held', { n: balance.held })}</>}
      </p>
      <div class="row">
        <button type="button" class="primary" disabled={busy} onClick={() => void claim()} data-testid="daily-bonus">
          {t('bonus_claim')}
        </button>
        {bonusMsg && (
          <span role="status" data-testid="bonus-result">
            {bonusMsg}
          </span>
        )}
      </div>
      <CoinNote />
      <h2>{t('ledger_title')}</h2>
      {entries.length === 0 && !loading ? (
        <p>{t('ledger_empty')}</p>
      ) : (
        <table class="ledger" data-testid="ledger">
          <thead>
            <tr>
              <th scope="col">{t('ledger_date')}</th>
              <th scope="col">{t('ledger_what')}</th>
              <th scope="col">{t('ledger_amount')}</th>
              <th scope="col">{t('ledger_after')}</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.seq} data-testid={`ledger-${e.seq}`} data-kind={e.kind}>
                <td>{e.at ? date.format(e.at) : ''}</td>
                <td>
                  {entryWhat(e)}
                  {e.tableId && (
                    <>
                      {' '}
                      <a
                        href={tablePath(e.tableId)}
                        onClick={(ev) => {
                          ev.preventDefault();
                          navigate(tablePath(e.tableId));
                        }}
                      >
                        {t('ledger_table')}
                      </a>
                    </>
                  )}
                </td>
                <td class={entryAmount(e) < 0 ? 'minus' : 'plus'}>{signed(entryAmount(e))}</td>
                <td>
                  {e.availableAfter}
                  {e.heldAfter > 0 && ` (${t('wallet_held', { n: e.heldAfter })})`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" disabled={loading} onClick={() => void load(next)} data-testid="ledger-more">
          {t('ledger_more')}
        </button>
      )}
    </main>
  );
}
