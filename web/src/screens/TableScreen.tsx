// /t/<id>: the waiting room until the game starts (rules, seats, password,
// bots), then the classic or Japanese table, the score sheet on demand, and
// the end of the game.

import { useEffect, useState } from 'preact/hooks';
import { t } from '../i18n';
import type { Store, TableSession } from '../app/store';
import { navigate, tablePath } from '../app/router';
import { ApiError } from '../protocol/api';
import type { TableSettings, TableSummary } from '../protocol/types';
import { ownedSeat, type TableState } from '../game/state';
import { buildSheetModel, type LiveHand } from '../sheet/model';
import { ScoreSheet, type SheetVerify } from '../sheet/ScoreSheet';
import { formatPoints } from '../sheet/notation';
import { describeRules, errorText, gameName, playerName } from '../ui/text';
import { Dialog } from '../ui/Dialog';
import { Avatar } from '../ui/Avatar';
import { ClassicTable } from './table/ClassicTable';
import { JapaneseTable } from './table/JapaneseTable';
import { endSentence, leaveOffered, seatName, SoundSwitch } from './table/parts';
import { FairDealDialog } from './table/FairDeal';
import { revealedHands } from '../fairdeal/hands';
import { CoinNote } from '../ui/Chrome';
import { tableCoins } from '../wallet/wallet';

export function TableScreen({ store, tableId }: { store: Store; tableId: string }) {
  const session = store.table(tableId);
  useEffect(() => {
    store.follow(tableId);
    return () => store.unfollow(tableId);
  }, [store, tableId]);

  const raw = session.state.value;
  if (raw.settings === null) return <WaitingRoom store={store} session={session} />;
  // While a bot plays your seat the gateway counts you as a watcher; the
  // seat is still yours to take back.
  const owned = raw.yourSeat === null ? ownedSeat(raw, store.session.value?.player.id ?? '') : null;
  const s = owned !== null ? { ...raw, yourSeat: owned } : raw;
  return <Game store={store} session={session} s={s} />;
}

function liveHand(s: TableState): LiveHand | null {
  if (s.phase !== 'bid' && s.phase !== 'play' && s.phase !== 'choose_trump') return null;
  return { handIndex: s.handIndex, cards: s.cardsPerSeat, bids: s.seats.map((x) => x.bid), tricks: s.seats.map((x) => x.tricks) };
}

function Game({ store, session, s }: { store: Store; session: TableSession; s: TableState }) {
  const [sheetOpen, setSheetOpen] = useState(false);
  const [confirmLeave, setConfirmLeave] = useState(false);
  const [verifying, setVerifying] = useState<number | null>(null);
  const fair = session.fair.value;
  const revealed = revealedHands(fair);
  const lastRevealed = revealed[revealed.length - 1];
  const verify = { can: (i: number) => fair.hands[i]?.revealed != null, open: setVerifying };
  const verifyHand = verifying === null ? undefined : fair.hands[verifying];
  const online = store.status.value === 'open';
  const japanese = s.settings?.game === 'japanese';
  const sheet = session.sheet.value?.sheet ?? null;
  const names = s.seats.map((_, i) => seatName(s, i));
  // The seats' player ids colour the sheet's avatars as the table's.
  const ids = s.seats.map((x) => x.player.playerId);
  const bots = s.seats.map((x) => x.player.bot);
  const model = () => buildSheetModel(sheet, liveHand(s), { settings: s.settings, names, ids, bots });
  const premia = s.settings?.premia ?? false;
  const onCourse = s.seats.map((_, i) => (premia && sheet ? (sheet.totals.find((x) => x.seat === i)?.onCourse ?? null) : null));
  const send = (m: Parameters<Store['move']>[1]) => store.move(session.id, m);
  const title = session.summary.value?.name || t('table_default_name');
  // The table's name (and stake) are the lobby's, not the game's: after a
  // reload straight into a game nothing brought them, so ask once.
  const known = session.summary.value !== null;
  useEffect(() => {
    if (known) return undefined;
    let stop = false;
    store.api
      .table(session.id)
      .then((sm) => {
        if (!stop && session.summary.value === null) session.summary.value = sm;
      })
      .catch(() => {
        // The default name stays; the game goes on.
      });
    return () => {
      stop = true;
    };
  }, [store, session, known]);

  const header = (
    <header class="table-head">
      <button type="button" class="link" onClick={() => navigate('/')} data-testid="back-to-lobby">
        ← {t('lobby_title')}
      </button>
      <h1 data-testid="table-title">{title}</h1>
      <div class="table-actions">
        <SoundSwitch />
        <button type="button" onClick={() => setSheetOpen(true)} data-testid="open-sheet" aria-haspopup="dialog">
          {t('sheet_button')}
        </button>
        {lastRevealed && (
          <button
            type="button"
            onClick={() => setVerifying(lastRevealed.handIndex)}
            data-testid="verify-last-hand"
            aria-haspopup="dialog"
            title={t('fair_verify_hand', { n: lastRevealed.handIndex + 1 })}
          >
            {t('fair_verify')}
          </button>
        )}
        {leaveOffered(s) && (
          <button type="button" class="danger" onClick={() => setConfirmLeave(true)} data-testid="leave-game">
            {japanese ? t('resign') : t('leave')}
          </button>
        )}
      </div>
    </header>
  );

  const props = { s, send, serverNow: () => store.serverNow(), online, onCourse, header, live: session.live.value };
  return (
    <>
      {japanese ? <JapaneseTable {...props} /> : <ClassicTable {...props} />}
      {sheetOpen && (
        <Dialog title={t('sheet_title')} onClose={() => setSheetOpen(false)} wide testid="sheet-dialog">
          <ScoreSheet model={model()} verify={verify} />
        </Dialog>
      )}
      {confirmLeave && (
        <Dialog title={japanese ? t('resign') : t('leave')} onClose={() => setConfirmLeave(false)} testid="confirm-leave">
          <p>{japanese ? t('resign_confirm') : t('leave_confirm')}</p>
          <div class="row">
            <button
              type="button"
              class="danger"
              data-testid="confirm-leave-yes"
              onClick={() => {
                setConfirmLeave(false);
                send(japanese ? { type: 'resign' } : { type: 'leave' });
              }}
            >
              {japanese ? t('resign') : t('leave')}
            </button>
            <button type="button" onClick={() => setConfirmLeave(false)}>
              {t('cancel')}
            </button>
          </div>
        </Dialog>
      )}
      {s.gameEnd && (
        <GameEnd
          store={store}
          s={s}
          // The lobby's description has what the game's own settings do
          // not: the stake (and so the coins, and the same stake again).
          settings={session.summary.value?.settings ?? s.settings}
          sheetModel={japanese ? null : model()}
          title={title}
          verify={verify}
        />
      )}
      {verifyHand?.revealed && <FairDealDialog hand={verifyHand} names={names} onClose={() => setVerifying(null)} />}
    </>
  );
}

function GameEnd({
  store,
  s,
  settings,
  sheetModel,
  title,
  verify,
}: {
  store: Store;
  s: TableState;
  settings: TableSettings | null;
  sheetModel: ReturnType<typeof buildSheetModel> | null;
  title: string;
  verify: SheetVerify;
}) {
  const [busy, setBusy] = useState(false);
  const end = s.gameEnd;
  if (!end) return null;
  const japanese = s.settings?.game === 'japanese';
  const again = async () => {
    if (!settings) return;
    setBusy(true);
    try {
      const id = await store.api.createTable(title, { ...settings, hasPassword: false }, '', true);
      navigate(tablePath(id));
    } catch (e) {
      store.showApiError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={t('game_over')} onClose={() => navigate('/')} wide testid="game-end" focusSelf>
      <p data-testid="end-reason">{endSentence(s)}</p>
      <ol class="placings" data-testid="placings">
        {end.placings.map((p) => (
          <li key={p.seat} class={p.seat === s.yourSeat ? 'you' : ''} data-testid={`placing-${p.seat}`}>
            <span class="place">{t('place_n', { n: p.place })}</span> <Avatar name={seatName(s, p.seat)} id={p.playerId || seatName(s, p.seat)} bot={s.seats[p.seat]?.player.bot} />{' '}
            <span class="name">{seatName(s, p.seat)}</span> <span class="score">{japanese ? p.score : formatPoints(p.score)}</span>
          </li>
        ))}
      </ol>
      {settings?.stake.kind === 'coins' && s.yourSeat !== null && <GameCoins store={store} tableId={s.tableId} />}
      {sheetModel && <ScoreSheet model={sheetModel} verify={verify} />}
      <div class="row">
        <button type="button" class="primary" disabled={busy} onClick={() => void again()} data-testid="play-again">
          {t('play_again')}
        </button>
        <button type="button" onClick={() => navigate('/')}>
          {t('lobby_title')}
        </button>
      </div>
    </Dialog>
  );
}

/**
 * The coins the game won or lost, from the account's ledger entries of the
 * table (the balance frames bring them live; after a reload the newest
 * ledger page is read, again while the pot is not paid yet).
 */
function GameCoins({ store, tableId }: { store: Store; tableId: string }) {
  const coins = tableCoins(store.coinEntries.value, tableId);
  const settled = coins?.settled ?? false;
  useEffect(() => {
    if (settled) return undefined;
    // A bounded number of reads: a pot the wallet never pays (no stake was
    // held) must not be polled for as long as the dialog stays open.
    let tries = 0;
    void store.loadRecentCoins();
    const h = setInterval(() => {
      if (++tries >= 10) clearInterval(h);
      else void store.loadRecentCoins();
    }, 3000);
    return () => clearInterval(h);
  }, [store, settled]);
  let text: string;
  if (!coins || !coins.settled) text = t('game_coins_pending');
  else if (coins.net > 0) text = t('game_coins_won', { n: coins.net });
  else if (coins.net < 0) text = t('game_coins_lost', { n: -coins.net });
  else text = t('game_coins_even');
  return (
    <div class="game-coins" data-testid="game-coins">
      <p>
        <strong>{text}</strong>
      </p>
      <CoinNote />
    </div>
  );
}

function WaitingRoom({ store, session }: { store: Store; session: TableSession }) {
  const [error, setError] = useState('');
  const [askPassword, setAskPassword] = useState<number | null>(null);
  const [password, setPassword] = useState('');
  const [passwordError, setPasswordError] = useState('');
  const [copied, setCopied] = useState(false);
  const summary = session.summary.value;
  const me = store.session.value?.player.id ?? '';
  const status = summary?.status;

  // A table that had no history yet may have refused the first join: follow
  // it again once its game is under way.
  useEffect(() => {
    if (status === 'playing' && !session.joined.value) store.follow(session.id);
  }, [status, store, session]);

  useEffect(() => {
    let stop = false;
    const load = async () => {
      try {
        const sm = await store.api.table(session.id);
        if (!stop) session.summary.value = sm;
      } catch (e) {
        if (stop || !(e instanceof ApiError)) return;
        // Nothing to wait for: no such table, or a link that cannot name one
        // (400: the gateway refuses the id itself). Back to the lobby, which
        // says why, rather than asking again every few seconds for ever.
        if (e.code === 'table_not_found' || e.status === 400 || e.status === 404) {
          stop = true;
          clearInterval(h);
          store.tableGone(session.id);
          store.showError('table_not_found', e.message);
          return;
        }
        setError(errorText(e.code));
      }
    };
    void load();
    // Private tables are not in the lobby's live list: look again now and then.
    const h = setInterval(() => void load(), 4000);
    return () => {
      stop = true;
      clearInterval(h);
    };
  }, [store, session]);

  const act = async (f: () => Promise<void>) => {
    setError('');
    try {
      await f();
      session.summary.value = await store.api.table(session.id);
    } catch (e) {
      setError(e instanceof ApiError ? errorText(e.code) : errorText('network'));
    }
  };

  if (!summary) {
    return (
      <main class="waiting-room">
        <p>{error || t('loading')}</p>
        <button type="button" onClick={() => navigate('/')}>
          {t('lobby_title')}
        </button>
      </main>
    );
  }
  const mySeat = summary.seats.find((x) => x.playerId === me) ?? null;
  const host = summary.hostPlayerId === me;
  const classic = summary.settings.game === 'classic';
  const hasFree = summary.seats.some((x) => !x.playerId && !x.bot);
  const sit = (seat: number) => {
    if (summary.settings.hasPassword && !host) setAskPassword(seat);
    else void act(() => store.api.sit(session.id, seat, ''));
  };
  const link = typeof location === 'undefined' ? tablePath(session.id) : `${location.origin}${tablePath(session.id)}`;

  return (
    <main class="waiting-room" aria-labelledby="wr-title" data-testid="waiting-room">
      <button type="button" class="link" onClick={() => navigate('/')}>
        ← {t('lobby_title')}
      </button>
      <h1 id="wr-title">{summary.name || t('table_default_name')}</h1>
      <p class="game-name">{gameName(summary.settings)}</p>
      <section aria-label={t('rules_title')} class="rules-box">
        <h2>{t('rules_title')}</h2>
        <ul data-testid="table-rules">
          {describeRules(summary.settings).map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
        {summary.settings.stake.kind === 'coins' && <CoinNote />}
      </section>
      <section aria-label={t('seats')}>
        <h2>{t('seats')}</h2>
        <ul class="wr-seats">
          {summary.seats.map((seat) => (
            <li key={seat.index} data-testid={`wr-seat-${seat.index}`}>
              {seat.playerId || seat.bot ? (
                <>
                  <Avatar name={playerName(seat.name)} id={seat.playerId} bot={seat.bot} /> {seat.bot ? t('bot') : playerName(seat.name)}
                  {seat.playerId === me && <strong> ({t('you')})</strong>}
                </>
              ) : (
                <>
                  <span class="free">{t('seat_free')}</span>
                  {!mySeat && summary.status === 'waiting' && (
                    <button type="button" onClick={() => sit(seat.index)} data-testid={`sit-${seat.index}`}>
                      {t('sit_here')}
                    </button>
                  )}
                </>
              )}
            </li>
          ))}
        </ul>
      </section>
      <div class="row">
        {host && classic && hasFree && (
          <button type="button" onClick={() => void act(() => store.api.fillWithBots(session.id))} data-testid="fill-bots">
            {t('opt_fill_bots')}
          </button>
        )}
        {mySeat && (
          <button type="button" onClick={() => void act(() => store.api.stand(session.id))} data-testid="stand-up">
            {t('stand_up')}
          </button>
        )}
        <button
          type="button"
          onClick={() => {
            void act(() => store.api.leave(session.id)).then(() => navigate('/'));
          }}
          data-testid="leave-table"
        >
          {t('leave_table')}
        </button>
        <button
          type="button"
          onClick={() => {
            // The clipboard exists only on secure origins.
            if ('clipboard' in navigator) void navigator.clipboard.writeText(link).then(() => setCopied(true));
          }}
          data-testid="copy-link"
        >
          {copied ? t('link_copied') : t('copy_link')}
        </button>
      </div>
      <p class="hint">{t('waiting_hint')}</p>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {askPassword !== null && (
        <Dialog
          title={t('password_title')}
          onClose={() => {
            setAskPassword(null);
            setPassword('');
            setPasswordError('');
          }}
          testid="password-prompt"
        >
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const seat = askPassword;
              setPasswordError('');
              // The prompt stays open until the table answers: a refusal is
              // said here, where the player is looking (on a phone the
              // waiting room's message is below the fold), and the refused
              // password is cleared for the next try.
              void store.api
                .sit(session.id, seat, password)
                .then(async () => {
                  setAskPassword(null);
                  setPassword('');
                  session.summary.value = await store.api.table(session.id);
                })
                .catch((err: unknown) => {
                  setPassword('');
                  setPasswordError(err instanceof ApiError ? errorText(err.code) : errorText('network'));
                });
            }}
          >
            {passwordError && (
              <p class="form-error" role="alert" data-testid="password-error">
                {passwordError}
              </p>
            )}
            <label>
              {t('field_table_password')}
              <input type="password" autoComplete="off" value={password} onInput={(e) => setPassword(e.currentTarget.value)} data-testid="password-input" />
            </label>
            <button type="submit" class="primary">
              {t('sit_here')}
            </button>
          </form>
        </Dialog>
      )}
    </main>
  );
}

export type { TableSummary };
