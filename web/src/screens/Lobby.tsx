// The lobby: the live list of tables with filters, creating a table, and
// joining a private table by its link.

import { useEffect, useState } from 'preact/hooks';
import { t } from '../i18n';
import type { Store } from '../app/store';
import { navigate, tablePath } from '../app/router';
import type { TableSummary } from '../protocol/types';
import { describeRules, gameName, playerName, stakeText } from '../ui/text';
import { Avatar } from '../ui/Avatar';
import { CoinNote } from '../ui/Chrome';
import { CreateTable } from './CreateTable';
import { DEFAULT_FILTER, filterTables, freeSeats, tableIdFromLink, type LobbyFilter } from './lobbyFilter';

export function Lobby({ store }: { store: Store }) {
  const [filter, setFilter] = useState<LobbyFilter>(DEFAULT_FILTER);
  const [creating, setCreating] = useState(false);
  const [link, setLink] = useState('');
  const [linkError, setLinkError] = useState(false);

  useEffect(() => {
    store.watchLobby(true);
    return () => store.watchLobby(false);
  }, [store]);

  const tables = filterTables(store.lobby.value, filter);
  const set = (patch: Partial<LobbyFilter>) => setFilter((f) => ({ ...f, ...patch }));

  return (
    <main class="lobby" aria-labelledby="lobby-title">
      <div class="lobby-head">
        <h1 id="lobby-title">{t('lobby_title')}</h1>
        <button type="button" class="primary" onClick={() => setCreating(true)} data-testid="create-table-open">
          {t('create_open')}
        </button>
      </div>
      <form
        class="join-link"
        onSubmit={(e) => {
          e.preventDefault();
          const id = tableIdFromLink(link);
          setLinkError(id === null);
          if (id) navigate(tablePath(id));
        }}
      >
        <label>
          {t('join_link_label')}
          <input value={link} placeholder={t('join_link_placeholder')} onInput={(e) => setLink((e.currentTarget).value)} data-testid="join-link" />
        </label>
        <button type="submit">{t('join_link_go')}</button>
        {linkError && (
          <p class="form-error" role="alert">
            {t('join_link_bad')}
          </p>
        )}
      </form>
      <fieldset class="filters" aria-label={t('filters')}>
        <legend>{t('filters')}</legend>
        <label>
          {t('filter_game')}
          <select value={filter.game} onChange={(e) => set({ game: (e.currentTarget).value as LobbyFilter['game'] })} data-testid="filter-game">
            <option value="all">{t('filter_all')}</option>
            <option value="standard">{t('variant_standard')}</option>
            <option value="nines">{t('variant_nines')}</option>
            <option value="japanese">{t('game_japanese')}</option>
          </select>
        </label>
        <label>
          {t('filter_stake')}
          <select value={filter.stake} onChange={(e) => set({ stake: (e.currentTarget).value as LobbyFilter['stake'] })} data-testid="filter-stake">
            <option value="any">{t('filter_all')}</option>
            <option value="free">{t('stake_free')}</option>
            <option value="coins">{t('opt_stake_coins')}</option>
          </select>
        </label>
        {filter.stake === 'coins' && (
          <label>
            {t('filter_max_stake')}
            <select value={String(filter.maxStake)} onChange={(e) => set({ maxStake: Number((e.currentTarget).value) || 0 })} data-testid="filter-max-stake">
              <option value="0">{t('filter_all')}</option>
              {store.stakes.value.map((n) => (
                <option key={n} value={String(n)}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        )}
        <label class="choice">
          <input type="checkbox" checked={filter.freeSeats} onChange={(e) => set({ freeSeats: (e.currentTarget).checked })} data-testid="filter-free-seats" />
          {t('filter_free_seats')}
        </label>
      </fieldset>
      <section aria-live="polite" aria-label={t('lobby_tables')}>
        {tables.length === 0 ? (
          <p class="empty" data-testid="lobby-empty">
            {t('lobby_empty')}
          </p>
        ) : (
          <ul class="table-list" data-testid="table-list">
            {tables.map((tb) => (
              <TableRow key={tb.tableId} table={tb} />
            ))}
          </ul>
        )}
      </section>
      <CoinNote />
      {creating && <CreateTable store={store} onClose={() => setCreating(false)} />}
    </main>
  );
}

function TableRow({ table }: { table: TableSummary }) {
  const free = freeSeats(table);
  const s = table.settings;
  return (
    <li class="table-row" data-testid={`table-${table.tableId}`}>
      <div class="table-row-head">
        <h2>{table.name || t('table_default_name')}</h2>
        <span class={`status ${table.status}`}>{table.status === 'waiting' ? t('status_waiting', { n: free }) : t('status_playing')}</span>
      </div>
      <p class="table-row-game">
        {gameName(s)} · {stakeText(s)}
        {s.hasPassword && <span aria-label={t('desc_password')}> 🔒</span>}
      </p>
      <ul class="seat-chips" aria-label={t('seats')}>
        {table.seats.map((seat) => (
          <li key={seat.index} class={seat.playerId || seat.bot ? 'taken' : 'free'}>
            {seat.playerId || seat.bot ? (
              <>
                <Avatar name={playerName(seat.name)} id={seat.playerId} bot={seat.bot} /> {seat.bot ? t('bot') : playerName(seat.name)}
              </>
            ) : (
              t('seat_free')
            )}
          </li>
        ))}
      </ul>
      <details>
        <summary>{t('rules_title')}</summary>
        <ul class="rules">
          {describeRules(s).map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      </details>
      <button type="button" onClick={() => navigate(tablePath(table.tableId))} data-testid={`open-table-${table.tableId}`}>
        {table.status === 'waiting' && free > 0 ? t('table_open_sit') : t('table_open_watch')}
      </button>
    </li>
  );
}
