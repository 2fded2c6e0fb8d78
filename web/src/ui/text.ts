// Words for game things, in the current language: card and suit names,
// table settings as sentences, and the server's refusal reasons and error
// codes as messages. Every key appears literally here so that the
// unused-key test can see it.

import { t, type MsgKey } from '../i18n';
import { isJoker, JOKER1, rankOf, suitOf, type Card, type Suit } from '../protocol/cards';
import type { BotLevel, BotReason, GameEndReason, Khishti, RejectReason, TableSettings, Trump } from '../protocol/types';

const SUIT_KEYS: Record<Suit, MsgKey> = { S: 'suit_S', H: 'suit_H', D: 'suit_D', C: 'suit_C' };
const SUIT_GEN_KEYS: Record<Suit, MsgKey> = { S: 'suit_gen_S', H: 'suit_gen_H', D: 'suit_gen_D', C: 'suit_gen_C' };
const RANK_KEYS: MsgKey[] = ['rank_6', 'rank_7', 'rank_8', 'rank_9', 'rank_10', 'rank_J', 'rank_Q', 'rank_K', 'rank_A'];

export const SUIT_SYMBOL: Record<Suit, string> = { S: '♠', H: '♥', D: '♦', C: '♣' };

export function suitName(s: Suit): string {
  return t(SUIT_KEYS[s]);
}

/** The trump as a word: a suit, "no trump" (classic) or "bezi" (Japanese). */
export function trumpName(tr: Trump | null, japanese: boolean): string {
  if (tr === null) return t('trump_unknown');
  if (tr === 'none') return japanese ? t('trump_bezi') : t('trump_none');
  return suitName(tr);
}

/** A player's name as people read it in their language: the names the
 * server makes up — a guest's "Guest-1234" (pkg gateway auth) and a seat's bot
 * "Bot 2" (the lobby) — are words of the player's language; a username can
 * contain neither a space nor start with "guest", so no chosen name is
 * changed. */
export function playerName(name: string): string {
  const guest = /^Guest-(\d+)$/.exec(name);
  if (guest?.[1]) return t('guest_name', { n: guest[1] });
  const bot = /^Bot (\d+)$/.exec(name);
  if (bot?.[1]) return t('bot_name', { n: bot[1] });
  return name;
}

export function cardName(c: Card): string {
  if (isJoker(c)) return c === JOKER1 ? t('joker_1') : t('joker_2');
  const s = suitOf(c);
  const r = RANK_KEYS[rankOf(c)];
  if (!s || !r) return '?';
  return t('card_name', { rank: t(r), suit: t(SUIT_GEN_KEYS[s]) });
}

const KHISHTI_KEYS: Record<Khishti, MsgKey> = {
  '200': 'khishti_200',
  '500': 'khishti_500',
  '100': 'khishti_100',
  'per-card': 'khishti_per_card',
};

export function khishtiName(k: Khishti): string {
  return t(KHISHTI_KEYS[k]);
}

export function gameName(s: TableSettings): string {
  if (s.game === 'japanese') return t('game_japanese');
  return s.variant === 'nines' ? t('variant_nines') : t('variant_standard');
}

export function stakeText(s: TableSettings): string {
  if (s.stake.kind === 'coins') return t('stake_coins', { n: s.stake.amount });
  if (s.stake.kind === 'free') return t('stake_free');
  return t('stake_unknown');
}

/** How a coin table's pot is paid out: the places' shares as the lobby
 * describes the table (pkg/payout's table for its game), then who forfeits. */
export function payoutText(s: TableSettings): string {
  if (s.stake.kind !== 'coins') return '';
  const paid = s.stake.payout.filter((p) => p > 0);
  const forfeit = s.game === 'japanese' ? t('payout_forfeit_japanese') : t('payout_forfeit_classic');
  if (paid.length === 0) return forfeit;
  const share =
    paid.length === 1
      ? t('payout_winner_takes_all')
      : t('payout_places', { places: paid.map((p, i) => t('payout_place', { n: i + 1, p })).join(', ') });
  return `${share} ${forfeit}`;
}

/** A bot level's name. */
export function botLevelName(l: BotLevel): string {
  return t(l === 'easy' ? 'bot_level_easy' : l === 'strong' ? 'bot_level_strong' : 'bot_level_normal');
}

/** The table's rules as short sentences, shown before anyone sits down. */
export function describeRules(s: TableSettings): string[] {
  const out: string[] = [];
  if (s.game === 'japanese') {
    out.push(t('desc_japanese', { target: s.japaneseTarget || 21 }));
  } else {
    out.push(s.variant === 'nines' ? t('desc_nines') : t('desc_standard'));
    out.push(t('desc_khishti', { what: khishtiName(s.khishti ?? '200') }));
    if (!s.premia) out.push(t('desc_no_premia'));
    else {
      out.push(t('desc_premia'));
      if (!s.moshla) out.push(t('desc_no_moshla'));
      else out.push(s.restDocked ? t('desc_moshla_docked') : t('desc_moshla_not_docked'));
    }
    if (s.botLevel !== null) out.push(t('desc_bot_level', { level: botLevelName(s.botLevel) }));
  }
  out.push(stakeText(s));
  if (s.stake.kind === 'coins') out.push(payoutText(s));
  out.push(s.visibility === 'public' ? t('desc_public') : t('desc_private'));
  if (s.hasPassword) out.push(t('desc_password'));
  if (s.moveTime !== null) out.push(t('desc_move_time', { n: s.moveTime }));
  return out;
}

const REJECT_KEYS: Record<RejectReason, MsgKey> = {
  MALFORMED: 'reject_malformed',
  NOT_SEATED: 'reject_not_seated',
  SEAT_UNAVAILABLE: 'reject_seat_unavailable',
  NOT_YOUR_TURN: 'reject_not_your_turn',
  WRONG_PHASE: 'reject_wrong_phase',
  INVALID_BID: 'reject_invalid_bid',
  DEALER_BID_FORBIDDEN: 'reject_dealer_bid',
  INVALID_TRUMP: 'reject_invalid_trump',
  CARD_NOT_AVAILABLE: 'reject_card_not_available',
  MUST_FOLLOW_SUIT: 'reject_must_follow',
  MUST_TRUMP: 'reject_must_trump',
  MUST_PLAY_HIGHEST: 'reject_must_highest',
  FIRST_CARD_FROM_HAND: 'reject_first_from_hand',
  INVALID_DECLARATION: 'reject_invalid_joker',
  GAME_OVER: 'reject_game_over',
  NOT_ALLOWED: 'reject_not_allowed',
  UNSPECIFIED: 'reject_unknown',
};

export function rejectText(r: RejectReason): string {
  return t(REJECT_KEYS[r]);
}

/** Error codes of the gateway (WebSocket error frames and HTTP bodies). */
const ERROR_KEYS: Record<string, MsgKey> = {
  network: 'err_network',
  rate_limited: 'err_rate_limited',
  too_many_attempts: 'err_too_many_attempts',
  session_expired: 'err_unauthorized',
  timeout: 'err_unavailable',
  unauthorized: 'err_unauthorized',
  auth_required: 'err_unauthorized',
  invalid_credentials: 'err_credentials',
  username_taken: 'err_username_taken',
  invalid_username: 'err_invalid_username',
  weak_password: 'err_weak_password',
  invalid_settings: 'err_invalid_settings',
  table_not_found: 'err_table_not_found',
  seat_unavailable: 'err_seat_unavailable',
  wrong_password: 'err_wrong_password',
  already_started: 'err_already_started',
  not_seated: 'err_not_seated',
  not_host: 'err_not_host',
  not_allowed: 'err_not_allowed',
  insufficient_funds: 'err_insufficient_funds',
  account_required: 'err_account_required',
  unavailable: 'err_unavailable',
  too_many_tables: 'err_too_many_tables',
  // The limits (docs/limits.md).
  too_many_connections: 'err_too_many_connections',
  too_many_tables_waiting: 'err_too_many_tables_waiting',
  too_many_requests: 'err_too_many_requests',
  table_gone: 'err_table_gone',
  session_revoked: 'err_session_revoked',
  too_many_password_guesses: 'err_too_many_password_guesses',
  // The wallet.
  bonus_claimed: 'err_bonus_claimed',
  wallet_opening: 'err_wallet_opening',
  wallet_refused: 'err_wallet_refused',
};

export function errorText(code: string): string {
  const k = ERROR_KEYS[code];
  return k ? t(k) : t('err_generic', { code });
}

const BOT_KEYS: Record<BotReason, MsgKey> = {
  filled: 'bot_filled',
  player_left: 'bot_player_left',
  grace_expired: 'bot_grace_expired',
  unknown: 'bot_unknown',
};

export function botText(r: BotReason): string {
  return t(BOT_KEYS[r]);
}

const END_KEYS: Record<GameEndReason, MsgKey> = {
  completed: 'end_completed',
  resigned: 'end_resigned',
  forfeited: 'end_forfeited',
  aborted: 'end_aborted',
  unknown: 'end_completed',
};

export function endText(r: GameEndReason): string {
  return t(END_KEYS[r]);
}

export function pulkaName(i: number): string {
  return t('pulka_n', { n: ['I', 'II', 'III', 'IV'][i] ?? String(i + 1) });
}
