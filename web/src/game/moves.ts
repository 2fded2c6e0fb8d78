// What the screens offer the player on their move: the server's list of
// legal moves (a LegalMoves event, or a view's), computed by the rules
// engine (pkg/classic, pkg/japanese). Nothing here decides what is legal:
// the follow rule, the dealer's forbidden bid and the joker's declarations
// live in the engine alone (issue 18: the rules exist once).

import { isJoker, SUITS, type Card } from '../protocol/cards';
import type { Move } from '../protocol/frames';
import type { JokerDecl, LegalMoves, Trump } from '../protocol/types';
import { yourTurn, type TableState } from './state';

/**
 * How long the screen waits for a move's list when it does not know yet
 * whether the table sends lists (the first move this page sees on a
 * table): a table that sends them sends the list right after the move's
 * timer, in the same step, so a wait this long means it sends none.
 */
export const LIST_WAIT_MS = 1000;

/**
 * The moves to offer you now; null when it is not your move, or when its
 * list is still to come (it follows the event carrying your move timer).
 *
 * Without a list the player must still be able to move. A table restored
 * from a snapshot written before legal moves existed sends none to the end
 * of its game (rare: a game in play across that upgrade), and a view of
 * such a table carries none: then everything is offered — every trump,
 * every bid, every card in hand and in face-up columns, a joker with every
 * declaration of the game — and the server refuses what the rules forbid
 * (the refusal is shown, and the player tries again). listOverdue says the
 * list did not follow your timer within LIST_WAIT_MS on a table not yet
 * known to send lists (state.sendsLegal null).
 */
export function movesNow(s: TableState, listOverdue = false): LegalMoves | null {
  if (!yourTurn(s)) return null;
  if (s.legal !== null) return s.legal;
  if (s.sendsLegal === false || (s.sendsLegal === null && s.legalDue && listOverdue)) return everything(s);
  return null;
}

/** Whether the screen is waiting for the list of your move on a table not yet known to send lists (what LIST_WAIT_MS bounds). */
export function awaitingList(s: TableState): boolean {
  return yourTurn(s) && s.legal === null && s.sendsLegal === null && s.legalDue;
}

/**
 * Everything a move of the phase can name, legal or not: what a table that
 * sends no list gets offered (movesNow). The server refuses the rest.
 */
export function everything(s: TableState): LegalMoves {
  const japanese = s.settings?.game === 'japanese';
  const seat = s.yourSeat ?? 0;
  const up = japanese ? (s.seats[seat]?.columnsUp ?? []).filter((c): c is Card => c !== null) : [];
  const trumps: Trump[] = [...SUITS, 'none'];
  return {
    seat,
    phase: s.phase,
    trumps: s.phase === 'choose_trump' ? trumps : [],
    bids: s.phase === 'bid' ? Array.from({ length: s.cardsPerSeat + 1 }, (_, i) => i) : [],
    plays: s.phase === 'play' ? [...s.hand, ...up].map((card) => ({ card, declarations: isJoker(card) ? everyDeclaration(japanese) : [] })) : [],
  };
}

/**
 * Every declaration the game's jokers have (docs/rules-classic.md, rules-japanese.md: a classic joker
 * takes or discards when following, asks for the highest of a suit or
 * gives in a suit when leading; a Japanese one takes, or names a suit when
 * leading) — the words there are, not which of them the rules allow now.
 */
export function everyDeclaration(japanese: boolean): JokerDecl[] {
  const suited = (action: 'highest' | 'give') => SUITS.map((suit): JokerDecl => ({ action, suit }));
  if (japanese) return [{ action: 'take', suit: null }, ...suited('highest')];
  return [{ action: 'take', suit: null }, { action: 'discard', suit: null }, ...suited('highest'), ...suited('give')];
}

/** The cards you may play now (none outside the play phase). */
export function playableCards(m: LegalMoves | null): Card[] {
  return m === null ? [] : m.plays.map((p) => p.card);
}

/**
 * The declarations you may play joker c with. A joker listed without any
 * (a server's list this client cannot read) gets every declaration of the
 * game: the server decides.
 */
export function declarationsFor(m: LegalMoves | null, c: Card, japanese: boolean): JokerDecl[] {
  if (m === null || !isJoker(c)) return [];
  const ds = m.plays.find((p) => p.card === c)?.declarations ?? [];
  return ds.length > 0 ? ds : everyDeclaration(japanese);
}

/** The move that plays card c (a joker as declaration d). */
export function playMove(c: Card, d?: JokerDecl): Move {
  if (!d) return { type: 'play', card: c };
  return { type: 'play', card: c, joker: d.suit ? { action: d.action, suit: d.suit } : { action: d.action } };
}

/** The bids of 0 … cards a list leaves out (the dealer's forbidden one), for saying why. */
export function bidsLeftOut(m: LegalMoves, cards: number): number[] {
  const out: number[] = [];
  for (let b = 0; b <= cards; b++) if (!m.bids.includes(b)) out.push(b);
  return out;
}
