// Screens drawn from fixed states, without a gateway: `npm run dev`, then
// /demo.html?screen=classic|japanese|sheet|lobby|entry|end&lang=ka|en|ru|tr.
// Only the dev server serves it; the production build contains index.html
// alone. Used to look at the layout on a phone and a desktop.

import { render } from 'preact';
import '../styles.css';
import { setLang, type Lang } from '../i18n';
import { Store } from '../app/store';
import { Api } from '../protocol/api';
import { Connection } from '../protocol/connection';
import { sheetUpdateFromJson, summaryFromJson } from '../protocol/view';
import { App } from '../App';
import { ClassicTable } from '../screens/table/ClassicTable';
import { JapaneseTable } from '../screens/table/JapaneseTable';
import { ScoreSheet } from '../sheet/ScoreSheet';
import { buildSheetModel } from '../sheet/model';
import { classicFollowing, japaneseStarted, play } from '../testing/tables';
import { Lobby } from '../screens/Lobby';
import { Entry } from '../screens/Entry';
import { Dialog } from '../ui/Dialog';
import { CardSprite } from '../ui/CardArt';
import pulkasIandII from '../sheet/testdata/seed-pulkas-I-II.json';

const q = new URLSearchParams(location.search);
setLang((q.get('lang') ?? 'ka') as Lang);
const screen = q.get('screen') ?? 'classic';

const offline = () =>
  new Store(
    new Api(() => Promise.reject(new Error('demo'))),
    new Connection({ url: 'ws://demo', socket: () => ({ readyState: 0, onopen: null, onclose: null, onmessage: null, onerror: null, send: () => undefined, close: () => undefined }) }),
  );

function header(title: string) {
  return (
    <header class="table-head">
      <button type="button" class="link">
        ← Lobby
      </button>
      <h1>{title}</h1>
      <div class="table-actions">
        <button type="button">Sheet</button>
      </div>
    </header>
  );
}

function view() {
  const send = () => true;
  const now = () => Date.now();
  switch (screen) {
    case 'japanese': {
      const s = play(japaneseStarted(), [
        { trump_chosen: { seat: 1, trump: 'SUIT_HEARTS' } },
        { dealt: { cards: ['CARD_SIX_OF_HEARTS', 'CARD_SEVEN_OF_HEARTS', 'CARD_EIGHT_OF_CLUBS', 'CARD_NINE_OF_CLUBS', 'CARD_TEN_OF_CLUBS'] } },
        { columns_dealt: { face_up: ['CARD_ACE_OF_HEARTS', 'CARD_KING_OF_DIAMONDS', 'CARD_QUEEN_OF_SPADES', 'CARD_JACK_OF_HEARTS', 'CARD_ACE_OF_DIAMONDS'] } },
        { columns_dealt: { seat: 1, face_up: ['CARD_SEVEN_OF_DIAMONDS', 'CARD_EIGHT_OF_DIAMONDS', 'CARD_NINE_OF_DIAMONDS', 'CARD_TEN_OF_DIAMONDS', 'CARD_JACK_OF_DIAMONDS'] } },
        { card_played: { seat: 1, card: 'CARD_SEVEN_OF_DIAMONDS', column: 0 } },
        { card_played: { card: 'CARD_SIX_OF_HEARTS' } },
        { trick_won: { trick_index: 0, tricks_taken: [1, 0] } },
        { card_played: { card: 'CARD_EIGHT_OF_CLUBS' } },
        { timer_started: { seat: 1, phase: 'PHASE_PLAY', deadline: new Date(Date.now() + 25000).toISOString() } },
      ]);
      return <JapaneseTable s={{ ...s, seats: s.seats.map((x, i) => ({ ...x, score: i === 0 ? 12 : 9 })) }} send={send} serverNow={now} online onCourse={[]} header={header('იაპონური')} />;
    }
    case 'sheet': {
      const model = buildSheetModel(sheetUpdateFromJson(pulkasIandII).sheet, { handIndex: 12, cards: 8, bids: [2, 0, 1, null], tricks: [1, 0, 0, 0] }, { settings: null, names: [] });
      return (
        <Dialog title="Sheet" onClose={() => undefined} wide>
          <ScoreSheet model={model} />
        </Dialog>
      );
    }
    case 'lobby': {
      const store = offline();
      store.session.value = { player: { id: 'p0', name: 'Nino', guest: true }, token: '' };
      const base = { settings: { game: 'GAME_CLASSIC', classic_variant: 'CLASSIC_VARIANT_STANDARD', khishti: 'KHISHTI_PENALTY_200', premia: true, moshla: true, rest_docked: true, visibility: 'TABLE_VISIBILITY_PUBLIC', stake: { free: {} } } };
      store.lobby.value = [
        summaryFromJson({ ...base, table_id: 'a', name: 'საღამოს ჯოკერი', status: 'TABLE_STATUS_WAITING', seats: [{ player_id: 'p1', display_name: 'Giorgi' }, { index: 1, player_id: 'p2', display_name: 'Ana' }, { index: 2 }, { index: 3 }] }),
        summaryFromJson({ table_id: 'b', name: 'Japanese', status: 'TABLE_STATUS_WAITING', settings: { game: 'GAME_JAPANESE', japanese_target: 21, visibility: 'TABLE_VISIBILITY_PUBLIC', has_password: true, stake: { coins: { amount: '20' } } }, seats: [{ player_id: 'p3', display_name: 'Levan' }, { index: 1 }] }),
        summaryFromJson({ ...base, table_id: 'c', name: 'Tskhrianebi', status: 'TABLE_STATUS_PLAYING', seats: [0, 1, 2, 3].map((i) => ({ index: i, player_id: `q${i}`, display_name: `Player ${i + 1}`, bot: i === 3 })) }),
      ];
      return <Lobby store={store} />;
    }
    case 'entry':
      return <Entry store={offline()} />;
    case 'app': {
      const store = offline();
      store.checking.value = false;
      return <App store={store} />;
    }
    default: {
      const s = classicFollowing();
      return <ClassicTable s={s} send={send} serverNow={now} online onCourse={[false, true, true, false]} header={header('საღამოს ჯოკერი')} />;
    }
  }
}

const root = document.getElementById('app');
if (root)
  render(
    <>
      <CardSprite />
      {view()}
    </>,
    root,
  );
