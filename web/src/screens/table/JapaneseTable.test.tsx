import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setLang } from '../../i18n';
import type { Move } from '../../protocol/frames';
import type { TableState } from '../../game/state';
import { legalCard, legalJoker, legalMoves } from '../../testing/events';
import { byTestId, click, mount } from '../../testing/render';
import { japaneseStarted, play } from '../../testing/tables';
import { JapaneseTable } from './JapaneseTable';
import { endSentence, leaveOffered } from './parts';

function draw(s: TableState) {
  const send = vi.fn<(m: Move) => boolean>(() => true);
  const m = mount(<JapaneseTable s={s} send={send} serverNow={() => Date.now()} online onCourse={[]} header={null} />);
  return { ...m, send };
}

const deadline = () => new Date(Date.now() + 20000).toISOString();

function dealt(): TableState {
  return play(japaneseStarted(), [
    { trump_chosen: { seat: 1, trump: 'SUIT_HEARTS' } },
    { dealt: { cards: ['CARD_SIX_OF_HEARTS', 'CARD_SEVEN_OF_HEARTS', 'CARD_EIGHT_OF_CLUBS', 'CARD_NINE_OF_CLUBS', 'CARD_TEN_OF_CLUBS'] } },
    { columns_dealt: { face_up: ['CARD_ACE_OF_HEARTS', 'CARD_KING_OF_DIAMONDS', 'CARD_QUEEN_OF_SPADES', 'CARD_JACK_OF_HEARTS', 'CARD_ACE_OF_DIAMONDS'] } },
    { columns_dealt: { seat: 1, face_up: ['CARD_SEVEN_OF_DIAMONDS', 'CARD_EIGHT_OF_DIAMONDS', 'CARD_NINE_OF_DIAMONDS', 'CARD_TEN_OF_DIAMONDS', 'CARD_JACK_OF_DIAMONDS'] } },
  ]);
}

/** Every card but the joker you may lead after your first card: hand and face-up columns (dealt()). */
const leadable = [
  'CARD_ACE_OF_SPADES',
  'CARD_KING_OF_SPADES',
  'CARD_SEVEN_OF_HEARTS',
  'CARD_EIGHT_OF_CLUBS',
  'CARD_NINE_OF_CLUBS',
  'CARD_TEN_OF_CLUBS',
  'CARD_ACE_OF_HEARTS',
  'CARD_KING_OF_DIAMONDS',
  'CARD_QUEEN_OF_SPADES',
  'CARD_JACK_OF_HEARTS',
  'CARD_ACE_OF_DIAMONDS',
].map(legalCard);

describe('the Japanese table', () => {
  beforeEach(() => setLang('en'));
  afterEach(() => {
    document.body.innerHTML = '';
  });

  it('offers the declarer the four suits and bezi', () => {
    const s = play(japaneseStarted(), [
      { timer_started: { phase: 'PHASE_CHOOSE_TRUMP', deadline: deadline() } },
      legalMoves({ phase: 'PHASE_CHOOSE_TRUMP', trumps: ['SUIT_SPADES', 'SUIT_HEARTS', 'SUIT_DIAMONDS', 'SUIT_CLUBS', 'SUIT_NONE'] }),
    ]);
    const { root, send } = draw(s);
    expect(byTestId(root, 'trump-panel').textContent).toContain('Choose the trump, or bezi.');
    const enabled = Array.from(byTestId(root, 'trump-panel').querySelectorAll<HTMLButtonElement>('button:not([disabled])')).map((b) => b.dataset.testid);
    expect(enabled).toEqual(['trump-S', 'trump-H', 'trump-D', 'trump-C', 'trump-none']);
    click(byTestId(root, 'trump-none'));
    expect(send).toHaveBeenCalledWith({ type: 'trump', suit: 'none' });
  });

  it('marks the declarer with a letter every font has, in the player’s language (issue 22, rough edge 3)', () => {
    const { root } = draw({ ...dealt(), dealerSeat: 1 });
    const chip = byTestId(root, 'dealer-1');
    expect(chip.textContent).toBe('T');
    expect(chip.getAttribute('title')).toBe('declarer');
    setLang('ru');
    expect(draw({ ...dealt(), dealerSeat: 1 }).root.querySelector('[data-testid="dealer-1"]')?.textContent).toBe('К');
  });

  it('ends a played-out match saying who reached the target (issue 22, rough edge 6)', () => {
    const s = play(dealt(), [
      { game_ended: { reason: 'GAME_END_REASON_COMPLETED', placings: [{ place: 1, seat: 1, score: '21' }, { place: 2, seat: 0, score: '14' }] } },
    ]);
    expect(endSentence(s)).toBe('Giorgi reached 21 points and wins the match.');
    const resigned = play(dealt(), [
      { game_ended: { reason: 'GAME_END_REASON_RESIGNED', placings: [{ place: 1, seat: 1, score: '3' }, { place: 2, seat: 0, score: '5' }] } },
    ]);
    expect(endSentence(resigned)).toBe('A player resigned.');
    expect(leaveOffered(s)).toBe(false);
  });

  it('shows both players’ columns: face-up cards and face-down backs', () => {
    const { root } = draw(dealt());
    const theirs = byTestId(root, 'columns-1');
    expect(theirs.querySelectorAll('.card.back')).toHaveLength(5);
    expect(byTestId(theirs, 'table-card-7D').getAttribute('aria-label')).toBe('seven of diamonds');
    expect(byTestId(root, 'columns-0').querySelectorAll('button.card')).toHaveLength(5);
    expect(byTestId(root, 'match-score').textContent).toBe('Nino 0 : 0 Giorgi · to 21');
  });

  it('keeps the first card of the hand in the hand, then lets face-up column cards follow suit', () => {
    let s = play(dealt(), [
      { card_played: { seat: 1, card: 'CARD_SEVEN_OF_DIAMONDS', column: 0 } },
      { timer_started: { phase: 'PHASE_PLAY', deadline: deadline() } },
      // The engine's answer to a led diamond: no diamond in the hand, whose
      // first card this is, so a trump (or the joker).
      legalMoves({ phase: 'PHASE_PLAY', plays: [legalJoker('CARD_JOKER_1', 'take'), legalCard('CARD_SIX_OF_HEARTS'), legalCard('CARD_SEVEN_OF_HEARTS')] }),
    ]);
    let view = draw(s);
    // No diamond in the hand, trump (hearts) in the hand: the column's diamonds may not be used yet.
    expect(byTestId(view.root, 'card-KD').dataset.playable).toBe('false');
    expect(byTestId(view.root, 'card-6H').dataset.playable).toBe('true');
    expect(byTestId(view.root, 'your-move').textContent).toBe('Your move: your first card comes from your hand.');
    view.unmount();

    s = play(s, [
      { card_played: { card: 'CARD_SIX_OF_HEARTS' } },
      { trick_won: { trick_index: 0, tricks_taken: [1, 0] } },
      { card_played: { card: 'CARD_EIGHT_OF_CLUBS' } },
      { card_played: { seat: 1, card: 'CARD_JOKER_2', declaration: { action: 'JOKER_ACTION_TAKE' } } },
      { trick_won: { trick_index: 1, seat: 1, tricks_taken: [1, 1] } },
      { card_played: { seat: 1, card: 'CARD_EIGHT_OF_DIAMONDS', column: 1 } },
      { timer_started: { phase: 'PHASE_PLAY', deadline: deadline() } },
      // Now the face-up column diamonds follow suit.
      legalMoves({ phase: 'PHASE_PLAY', plays: [legalJoker('CARD_JOKER_1', 'take'), legalCard('CARD_KING_OF_DIAMONDS'), legalCard('CARD_ACE_OF_DIAMONDS')] }),
    ]);
    view = draw(s);
    expect(byTestId(view.root, 'card-KD').dataset.playable).toBe('true');
    expect(byTestId(view.root, 'card-AD').dataset.playable).toBe('true');
    expect(byTestId(view.root, 'card-7H').dataset.playable).toBe('false');
    click(byTestId(view.root, 'card-AD'));
    expect(view.send).toHaveBeenCalledWith({ type: 'play', card: 26 });
  });

  it('answers a lead with a joker at once when its list gives it one declaration (take)', () => {
    const s = play(dealt(), [
      { card_played: { seat: 1, card: 'CARD_SEVEN_OF_DIAMONDS', column: 0 } },
      { card_played: { card: 'CARD_SIX_OF_HEARTS' } },
      { trick_won: { trick_index: 0, tricks_taken: [1, 0] } },
      { card_played: { card: 'CARD_EIGHT_OF_CLUBS' } },
      { card_played: { seat: 1, card: 'CARD_NINE_OF_DIAMONDS', column: 2 } },
      { trick_won: { trick_index: 1, seat: 1, tricks_taken: [1, 1] } },
      { card_played: { seat: 1, card: 'CARD_TEN_OF_DIAMONDS', column: 3 }, timer: { phase: 'PHASE_PLAY', deadline: deadline() } },
      legalMoves({ phase: 'PHASE_PLAY', plays: [legalJoker('CARD_JOKER_1', 'take'), legalCard('CARD_KING_OF_DIAMONDS'), legalCard('CARD_ACE_OF_DIAMONDS')] }),
    ]);
    const { root, send } = draw(s);
    click(byTestId(root, 'card-JK1'));
    expect(document.querySelector('[data-testid="joker-dialog"]')).toBeNull();
    expect(send).toHaveBeenCalledWith({ type: 'play', card: 0, joker: { action: 'take' } });
  });

  it('names a suit when leading a joker', () => {
    const s = play(dealt(), [
      { card_played: { seat: 1, card: 'CARD_SEVEN_OF_DIAMONDS', column: 0 } },
      { card_played: { card: 'CARD_SIX_OF_HEARTS' } },
      { trick_won: { trick_index: 0, tricks_taken: [1, 0] }, timer: { phase: 'PHASE_PLAY', deadline: deadline() } },
      legalMoves({ phase: 'PHASE_PLAY', plays: [legalJoker('CARD_JOKER_1', 'highest-S', 'highest-H', 'highest-D', 'highest-C'), ...leadable] }),
    ]);
    const { root, send } = draw(s);
    click(byTestId(root, 'card-JK1'));
    const dialog = byTestId(document.body, 'joker-dialog');
    expect(dialog.querySelector('[data-testid="joker-give-S"]')).toBeNull();
    expect(dialog.querySelector('[data-testid="joker-take"]')).toBeNull();
    expect(dialog.textContent).toContain('Name the suit');
    click(byTestId(dialog, 'joker-highest-C'));
    expect(send).toHaveBeenCalledWith({ type: 'play', card: 0, joker: { action: 'highest', suit: 'C' } });
  });
});
