import { describe, expect, it } from 'vitest';
import { cardCode, parseCode } from '../protocol/cards';
import { classicSettings, japaneseSettings, legalCard, legalJoker, legalMoves, seatsOf, wireEvent } from '../testing/events';
import { applyEvent, emptyTable, yourTurn, type TableState } from './state';

const run = (s: TableState, bodies: Record<string, unknown>[], live = true) => bodies.reduce((st, b) => applyEvent(st, wireEvent(b), live), s);
const hand = (s: TableState) => s.hand.map(cardCode).sort();

function startClassic(): TableState {
  return run({ ...emptyTable('t1'), yourSeat: 0 }, [{ game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } }]);
}

describe('an event that starts a move timer', () => {
  it('applies its timer after the event, as a timer_started that followed it', () => {
    const deadline = '2023-11-14T22:13:50Z';
    const withTimer = run(startClassic(), [
      { hand_started: { cards_per_seat: 1, dealer_seat: 3 } },
      { dealt: { cards: ['CARD_ACE_OF_SPADES'] } },
      { trump_turned: { card: 'CARD_SEVEN_OF_HEARTS', trump: 'SUIT_HEARTS' }, timer: { phase: 'PHASE_BID', deadline } },
      { bid_made: { tricks: 1 }, timer: { seat: 1, phase: 'PHASE_BID', deadline } },
    ]);
    const separate = run(startClassic(), [
      { hand_started: { cards_per_seat: 1, dealer_seat: 3 } },
      { dealt: { cards: ['CARD_ACE_OF_SPADES'] } },
      { trump_turned: { card: 'CARD_SEVEN_OF_HEARTS', trump: 'SUIT_HEARTS' } },
      { timer_started: { phase: 'PHASE_BID', deadline } },
      { bid_made: { tricks: 1 } },
      { timer_started: { seat: 1, phase: 'PHASE_BID', deadline } },
    ]);
    expect(withTimer).toMatchObject({ phase: 'bid', turnSeat: 1, deadline: Date.parse(deadline) });
    // The same state but for the last event id (the separate form has more events).
    expect({ ...withTimer, lastEventId: '' }).toEqual({ ...separate, lastEventId: '' });
  });
});

describe('applying classic events', () => {
  it('plays a one-card hand from the deal to the score', () => {
    let s = startClassic();
    expect(s.seats.map((x) => x.player.name)).toEqual(['Nino', 'Giorgi', 'Ana', 'Levan']);
    expect(s.seats[0]?.player.seat).toBe(0);
    s = run(s, [
      { hand_started: { cards_per_seat: 1, dealer_seat: 3 } },
      { dealt: { cards: ['CARD_ACE_OF_SPADES'] } },
      { trump_turned: { card: 'CARD_SEVEN_OF_HEARTS', trump: 'SUIT_HEARTS' } },
      { timer_started: { phase: 'PHASE_BID', deadline: '2023-11-14T22:13:50Z' } },
    ]);
    expect(hand(s)).toEqual(['AS']);
    expect(s.trump).toBe('H');
    expect(s.turnedCard).toBe(parseCode('7H'));
    expect(s).toMatchObject({ phase: 'bid', turnSeat: 0, handIndex: 0, cardsPerSeat: 1, dealerSeat: 3 });
    expect(s.deadline).toBe(Date.parse('2023-11-14T22:13:50Z'));
    expect(yourTurn(s)).toBe(true);
    expect(s.seats.map((x) => x.handSize)).toEqual([1, 1, 1, 1]);

    s = run(s, [
      { bid_made: { tricks: 1 } },
      { bid_made: { seat: 1 } },
      { bid_made: { seat: 2 } },
      { bid_made: { seat: 3, tricks: 1, by_server: true } },
    ]);
    expect(s.seats.map((x) => x.bid)).toEqual([1, 0, 0, 1]);
    expect(s).toMatchObject({ phase: 'play', turnSeat: 0, deadline: null });
    expect(s.notice).toEqual({ kind: 'bid', seat: 3, tricks: 1, byServer: true });

    s = run(s, [
      { card_played: { card: 'CARD_ACE_OF_SPADES' } },
      { card_played: { seat: 1, card: 'CARD_SEVEN_OF_SPADES' } },
      { card_played: { seat: 2, card: 'CARD_JOKER_2', declaration: { action: 'JOKER_ACTION_DISCARD' } } },
    ]);
    expect(s.hand).toEqual([]);
    expect(s.trick.map((p) => [p.seat, cardCode(p.card), p.joker?.action ?? null])).toEqual([
      [0, 'AS', null],
      [1, '7S', null],
      [2, 'JK2', 'discard'],
    ]);
    expect(s.turnSeat).toBe(3);
    s = run(s, [
      { card_played: { seat: 3, card: 'CARD_NINE_OF_SPADES' } },
      { trick_won: { tricks_taken: [1, 0, 0, 0] } },
    ]);
    expect(s.trick).toEqual([]);
    expect(s.lastTrick?.winner).toBe(0);
    expect(s.lastTrick?.cards).toHaveLength(4);
    expect(s.seats.map((x) => x.tricks)).toEqual([1, 0, 0, 0]);

    s = run(s, [
      {
        hand_ended: {
          results: [
            { bid: 1, tricks: 1, points: '100' },
            { seat: 1, points: '50' },
            { seat: 2, points: '50' },
            { seat: 3, bid: 1, penalty: '-200' },
          ],
        },
      },
    ]);
    expect(s.seats.map((x) => x.score)).toEqual([100, 50, 50, -200]);
    expect(s.phase).toBe('none');
    expect(s.lastHand?.results[3]).toEqual({ seat: 3, bid: 1, tricks: 0, points: 0, penalty: -200 });
  });

  it('lets the seat after the dealer choose trump in a nine-card hand, on three cards', () => {
    let s = run(startClassic(), [
      { hand_started: { hand_index: 8, pulka_index: 1, cards_per_seat: 9 } },
      { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_KING_OF_SPADES', 'CARD_JOKER_1'] } },
    ]);
    expect(s).toMatchObject({ phase: 'choose_trump', turnSeat: 1, dealerSeat: 0, pulkaIndex: 1, trump: null });
    expect(s.seats.map((x) => x.handSize)).toEqual([3, 3, 0, 0]);
    s = run(s, [
      { trump_chosen: { seat: 1, trump: 'SUIT_NONE' } },
      { dealt: { cards: ['CARD_SIX_OF_HEARTS', 'CARD_SEVEN_OF_HEARTS', 'CARD_EIGHT_OF_HEARTS', 'CARD_NINE_OF_HEARTS', 'CARD_TEN_OF_HEARTS', 'CARD_JACK_OF_HEARTS'] } },
    ]);
    expect(s.trump).toBe('none');
    expect(s).toMatchObject({ phase: 'bid', turnSeat: 1 });
    expect(s.hand).toHaveLength(9);
    expect(s.seats.map((x) => x.handSize)).toEqual([9, 9, 9, 9]);
  });

  it('adds the premia and moshla of a pulka to the scores', () => {
    let s = startClassic();
    s = run(s, [{ pulka_ended: { results: [{ premia: '250', total: '950' }, { seat: 1, moshla: '-300', total: '170' }, { seat: 2 }, { seat: 3 }] } }]);
    expect(s.seats.map((x) => x.score)).toEqual([250, -300, 0, 0]);
  });

  it('marks away players, bots and returns', () => {
    let s = run(startClassic(), [{ player_away: { seat: 2, player_id: 'p2', grace_deadline: '2023-11-14T22:15:00Z' } }]);
    expect(s.seats[2]).toMatchObject({ away: true, graceDeadline: Date.parse('2023-11-14T22:15:00Z') });
    s = run(s, [{ seat_taken_by_bot: { seat: 2, reason: 'BOT_REASON_GRACE_EXPIRED' } }]);
    expect(s.seats[2]).toMatchObject({ away: false, botReason: 'grace_expired' });
    expect(s.seats[2]?.player.bot).toBe(true);
    s = run(s, [{ player_seated: { seat: { seat: 2, player_id: 'p2', display_name: 'Ana' } } }]);
    expect(s.seats[2]?.player.bot).toBe(false);
    expect(s.seats[2]?.botReason).toBeNull();
  });

  it('shows a refusal only when it arrives live, not when replayed', () => {
    const rej = { visibility: { audience: 'AUDIENCE_PLAYER', player_id: 'p0' }, move_rejected: { reason: 'REJECT_REASON_MUST_FOLLOW_SUIT', message: 'follow suit' } };
    expect(run(startClassic(), [rej], false).rejection).toBeNull();
    const s = run(startClassic(), [rej, rej]);
    expect(s.rejection).toEqual({ reason: 'MUST_FOLLOW_SUIT', message: 'follow suit', serial: 2 });
  });

  it('replaces everything with a synced view and keeps your hand', () => {
    const s = run(startClassic(), [
      {
        view_synced: {
          view: {
            settings: classicSettings,
            seats: [
              { player: { player_id: 'p0', display_name: 'Nino' }, bid: 0, tricks: 1, score: '350', hand_size: 3 },
              { player: { seat: 1, display_name: 'bot', bot: true }, hand_size: 4 },
              { player: { seat: 2, player_id: 'p2', display_name: 'Ana' }, away: true, bid: 2, hand_size: 4 },
              { player: { seat: 3, player_id: 'p3', display_name: 'Levan' }, hand_size: 4 },
            ],
            your_seat: 0,
            your_hand: ['CARD_ACE_OF_CLUBS', 'CARD_JOKER_1', 'CARD_SIX_OF_DIAMONDS'],
            phase: 'PHASE_PLAY',
            hand_index: 4,
            cards_per_seat: 5,
            dealer_seat: 1,
            trump: 'SUIT_CLUBS',
            turned_card: 'CARD_SEVEN_OF_CLUBS',
            trick: [{ seat: 2, card: 'CARD_KING_OF_DIAMONDS' }],
            turn_seat: 3,
          },
        },
      },
    ]);
    expect(hand(s)).toEqual(['6D', 'AC', 'JK1']);
    expect(s.seats.map((x) => [x.bid, x.tricks, x.score, x.away, x.player.bot])).toEqual([
      [0, 1, 350, false, false],
      [null, 0, 0, false, true],
      [2, 0, 0, true, false],
      [null, 0, 0, false, false],
    ]);
    expect(s).toMatchObject({ phase: 'play', turnSeat: 3, handIndex: 4, trump: 'C', dealerSeat: 1, yourSeat: 0, tricksPlayed: 1 });
    expect(s.trick.map((p) => cardCode(p.card))).toEqual(['KD']);
  });

  it('records the end of the game', () => {
    const s = run(startClassic(), [{ game_ended: { reason: 'GAME_END_REASON_COMPLETED', placings: [{ place: 1, seat: 2, score: '2380' }, { place: 2, score: '530' }] } }]);
    expect(s.phase).toBe('game_over');
    expect(s.gameEnd?.placings[0]).toEqual({ place: 1, seat: 2, playerId: '', score: 2380 });
    expect(yourTurn(s)).toBe(false);
  });

  it('remembers the last event id for the resume', () => {
    const s = applyEvent(startClassic(), wireEvent({ player_back: { seat: 1 } }, '1700000000123-7'));
    expect(s.lastEventId).toBe('1700000000123-7');
  });
});

describe('applying Japanese events', () => {
  function start(): TableState {
    return run({ ...emptyTable('t1'), yourSeat: 0 }, [
      { game_started: { settings: japaneseSettings, seats: seatsOf(['Nino', 'Giorgi']) } },
      { hand_started: { cards_per_seat: 18, dealer_seat: 1 } },
      { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_KING_OF_SPADES', 'CARD_JOKER_1'] } },
    ]);
  }

  it('lets the declarer choose trump (bezi included) and lays out the columns', () => {
    let s = start();
    expect(s).toMatchObject({ phase: 'choose_trump', turnSeat: 1 });
    expect(s.seats.map((x) => x.handSize)).toEqual([3, 3]);
    s = run(s, [
      { trump_chosen: { seat: 1, trump: 'SUIT_NONE' } },
      { dealt: { cards: ['CARD_SIX_OF_HEARTS', 'CARD_SEVEN_OF_HEARTS', 'CARD_EIGHT_OF_HEARTS', 'CARD_NINE_OF_HEARTS', 'CARD_TEN_OF_HEARTS'] } },
      { columns_dealt: { face_up: ['CARD_ACE_OF_HEARTS', 'CARD_KING_OF_HEARTS', 'CARD_QUEEN_OF_HEARTS', 'CARD_JACK_OF_HEARTS', 'CARD_ACE_OF_DIAMONDS'] } },
      { columns_dealt: { seat: 1, face_up: ['CARD_SEVEN_OF_CLUBS', 'CARD_EIGHT_OF_CLUBS', 'CARD_NINE_OF_CLUBS', 'CARD_TEN_OF_CLUBS', 'CARD_JACK_OF_CLUBS'] } },
    ]);
    expect(s).toMatchObject({ trump: 'none', phase: 'play', turnSeat: 1 });
    expect(s.hand).toHaveLength(8);
    expect(s.seats.map((x) => x.handSize)).toEqual([8, 8]);
    expect(s.seats[1]?.columnsUp.map((c) => (c === null ? null : cardCode(c)))).toEqual(['7C', '8C', '9C', '10C', 'JC']);
    expect(s.seats[1]?.columnsDown).toEqual([true, true, true, true, true]);
  });

  it('moves a column’s face-down card into its owner’s hand when its face-up card is played', () => {
    let s = run(start(), [
      { trump_chosen: { seat: 1, trump: 'SUIT_HEARTS' } },
      { columns_dealt: { face_up: ['CARD_ACE_OF_HEARTS', 'CARD_KING_OF_HEARTS', 'CARD_QUEEN_OF_HEARTS', 'CARD_JACK_OF_HEARTS', 'CARD_ACE_OF_DIAMONDS'] } },
      { columns_dealt: { seat: 1, face_up: ['CARD_SEVEN_OF_CLUBS', 'CARD_EIGHT_OF_CLUBS', 'CARD_NINE_OF_CLUBS', 'CARD_TEN_OF_CLUBS', 'CARD_JACK_OF_CLUBS'] } },
      { card_played: { seat: 1, card: 'CARD_NINE_OF_CLUBS', column: 2 } },
    ]);
    // The opponent's face-down card went to their hand: one more card there.
    expect(s.seats[1]?.columnsUp[2]).toBeNull();
    expect(s.seats[1]?.columnsDown[2]).toBe(false);
    expect(s.seats[1]?.handSize).toBe(9);
    s = run(s, [
      { card_played: { card: 'CARD_ACE_OF_DIAMONDS', column: 4 } },
      { visibility: { audience: 'AUDIENCE_SEAT' }, column_card_revealed: { column: 4, card: 'CARD_SIX_OF_DIAMONDS' } },
    ]);
    expect(s.hand.map(cardCode)).toContain('6D');
    expect(s.seats[0]?.columnsUp[4]).toBeNull();
    expect(s.seats[0]?.columnsDown[4]).toBe(false);
    expect(s.playedThisHand).toEqual([true, true]);
  });

  it('clears the table into the hand when only one column would be left', () => {
    let s = run(start(), [
      { trump_chosen: { seat: 1, trump: 'SUIT_HEARTS' } },
      { columns_dealt: { seat: 1, face_up: ['CARD_SEVEN_OF_CLUBS', 'CARD_EIGHT_OF_CLUBS', 'CARD_UNSPECIFIED', 'CARD_UNSPECIFIED', 'CARD_UNSPECIFIED'] } },
    ]);
    s = { ...s, seats: s.seats.map((x, i) => (i === 1 ? { ...x, columnsDown: [true, true, false, false, false] } : x)) };
    const before = s.seats[1]?.handSize ?? 0;
    s = run(s, [
      { card_played: { seat: 1, card: 'CARD_SEVEN_OF_CLUBS', column: 0 } },
      { columns_to_hand: { seat: 1, columns: [1] } },
    ]);
    // +1 for column 0's face-down, +2 for the whole of column 1.
    expect(s.seats[1]?.handSize).toBe(before + 3);
    expect(s.seats[1]?.columnsUp.every((c) => c === null)).toBe(true);
    expect(s.seats[1]?.columnsDown.every((d) => !d)).toBe(true);
  });

  it('scores the hand’s trick difference for the winner', () => {
    const s = run(start(), [{ hand_ended: { results: [{ tricks: 11, points: '4' }, { seat: 1, tricks: 7 }] } }]);
    expect(s.seats.map((x) => x.score)).toEqual([4, 0]);
  });
});

describe('seat ownership', () => {
  it('keeps your seat yours while a bot plays it, until someone else sits there', async () => {
    const { ownedSeat } = await import('./state');
    let s = run({ ...emptyTable('t1'), yourSeat: null }, [
      { game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } },
      { player_left: { seat: 2, player_id: 'p2' } },
      { seat_taken_by_bot: { seat: 2, reason: 'BOT_REASON_PLAYER_LEFT' } },
    ]);
    expect(ownedSeat(s, 'p2')).toBe(2);
    expect(ownedSeat(s, 'p9')).toBeNull();
    s = run(s, [{ player_seated: { seat: { seat: 2, player_id: 'p2', display_name: 'Ana' } } }]);
    expect(ownedSeat(s, 'p2')).toBe(2);
  });
});

describe('finding your seat', () => {
  it('takes it from the game’s seating when the table was joined before the game began', () => {
    const s = run(emptyTable('t1', 'p2'), [
      { game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } },
      { hand_started: { cards_per_seat: 1, dealer_seat: 1 } },
      { visibility: { audience: 'AUDIENCE_SEAT', seat: 2 }, dealt: { seat: 2, cards: ['CARD_ACE_OF_SPADES'] } },
    ]);
    expect(s.yourSeat).toBe(2);
    expect(s.hand.map(cardCode)).toEqual(['AS']);
    expect(yourTurn(s)).toBe(true);
  });

  it('stays a watcher when the seating does not name you', () => {
    const s = run(emptyTable('t1', 'p9'), [{ game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } }]);
    expect(s.yourSeat).toBeNull();
  });
});

describe('your legal moves (LegalMoves: the server’s list, what the screens offer)', () => {
  const deadline = '2023-11-14T22:13:50Z';
  const toMe = { phase: 'PHASE_BID', deadline };
  const bidding = (): TableState =>
    run(startClassic(), [
      { hand_started: { cards_per_seat: 3, dealer_seat: 0 } },
      { dealt: { cards: ['CARD_ACE_OF_SPADES', 'CARD_SEVEN_OF_HEARTS', 'CARD_JOKER_1'] } },
      { trump_turned: { card: 'CARD_SIX_OF_HEARTS', trump: 'SUIT_HEARTS' }, timer: { seat: 1, phase: 'PHASE_BID', deadline } },
      { bid_made: { seat: 1, tricks: 1 }, timer: { seat: 2, phase: 'PHASE_BID', deadline } },
      { bid_made: { seat: 2, tricks: 1 }, timer: { seat: 3, phase: 'PHASE_BID', deadline } },
      { bid_made: { seat: 3 }, timer: toMe },
    ]);
  const bids = legalMoves({ phase: 'PHASE_BID', bids: [0, 2, 3] });

  it('are set by the list of your move, decoded', () => {
    const s = run(bidding(), [bids]);
    expect(s.legal).toEqual({ seat: 0, phase: 'bid', trumps: [], bids: [0, 2, 3], plays: [] });
    expect(s.sendsLegal).toBe(true);
    const playing = run(s, [
      { bid_made: { tricks: 2 }, timer: { phase: 'PHASE_PLAY', deadline } },
      legalMoves({
        phase: 'PHASE_PLAY',
        plays: [legalJoker('CARD_JOKER_1', 'highest-S', 'give-H'), legalCard('CARD_SEVEN_OF_HEARTS')],
      }),
    ]);
    expect(playing.legal).toEqual({
      seat: 0,
      phase: 'play',
      trumps: [],
      bids: [],
      plays: [
        {
          card: parseCode('JK1'),
          declarations: [
            { action: 'highest', suit: 'S' },
            { action: 'give', suit: 'H' },
          ],
        },
        { card: parseCode('7H'), declarations: [] },
      ],
    });
    const trumps = run(startClassic(), [
      { hand_started: { hand_index: 8, cards_per_seat: 9, dealer_seat: 3 } },
      { dealt: { cards: ['CARD_ACE_OF_SPADES'] }, timer: { phase: 'PHASE_CHOOSE_TRUMP', deadline } },
      legalMoves({ phase: 'PHASE_CHOOSE_TRUMP', trumps: ['SUIT_SPADES', 'SUIT_NONE'] }),
    ]);
    expect(trumps.legal).toMatchObject({ phase: 'choose_trump', trumps: ['S', 'none'] });
  });

  it('are set by a replayed list as by a live one', () => {
    expect(run(bidding(), [bids], false).legal).toEqual(run(bidding(), [bids]).legal);
  });

  it('take no list of another seat', () => {
    const s = run(bidding(), [{ visibility: { audience: 'AUDIENCE_SEAT', seat: 2 }, legal_moves: { seat: 2, phase: 'PHASE_BID', bids: [1] } }]);
    expect(s.legal).toBeNull();
  });

  it('end with the next move or move timer, whoever makes it', () => {
    const listed = run(bidding(), [bids]);
    const ends: [string, Record<string, unknown>][] = [
      ['your bid taken', { bid_made: { tricks: 2 } }],
      ['a bid the server made for you', { bid_made: { tricks: 2, by_server: true } }],
      ['a move timer for another seat', { timer_started: { seat: 1, phase: 'PHASE_BID', deadline } }],
      ['a move timer for you', { timer_started: { phase: 'PHASE_BID', deadline } }],
      ['a trump chosen', { trump_chosen: { seat: 1, trump: 'SUIT_SPADES' } }],
      ['a card played', { card_played: { seat: 1, card: 'CARD_EIGHT_OF_SPADES' } }],
      ['a trick taken', { trick_won: { trick_index: 0, seat: 1, tricks_taken: [0, 1, 0, 0] } }],
      ['the hand’s end', { hand_ended: { results: [] } }],
      ['a new hand', { hand_started: { hand_index: 1, cards_per_seat: 4, dealer_seat: 1 } }],
      ['the game’s end', { game_ended: { reason: 'GAME_END_REASON_RESIGNED' } }],
      ['an event that carries a move timer', { player_seated: { seat: { seat: 1, player_id: 'p1', display_name: 'Giorgi' } }, timer: { seat: 1, phase: 'PHASE_BID', deadline } }],
    ];
    for (const [what, body] of ends) expect(run(listed, [body]).legal, what).toBeNull();
  });

  it('stay through what does not change whose move it is: a refusal, presence, the deal’s seeds', () => {
    const listed = run(bidding(), [bids]);
    const stays: [string, Record<string, unknown>][] = [
      ['a refusal', { visibility: { audience: 'AUDIENCE_PLAYER' }, move_rejected: { reason: 'REJECT_REASON_DEALER_BID_FORBIDDEN', message: 'x' } }],
      ['a player away', { player_away: { seat: 2, player_id: 'p2', grace_deadline: deadline } }],
      ['a player back', { player_back: { seat: 2, player_id: 'p2' } }],
      ['a bot for another seat', { seat_taken_by_bot: { seat: 2, reason: 'BOT_REASON_PLAYER_LEFT' } }],
      ['a hand committed ahead', { hand_committed: { hand_index: 1, commitment: 'AAAA' } }],
      ['a seed accepted', { client_seed_accepted: { hand_index: 1, seat: 2 } }],
    ];
    for (const [what, body] of stays) {
      const s = run(listed, [body]);
      expect(s.legal, what).toEqual(listed.legal);
      expect(s.sendsLegal, what).toBe(true);
    }
  });

  it('are set again by a view’s resync, and only by it', () => {
    const view = (legal: Record<string, unknown> | undefined, turn = 0) => ({
      visibility: { audience: 'AUDIENCE_SEAT' },
      view_synced: {
        view: {
          settings: classicSettings,
          seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']).map((player) => ({ player })),
          your_seat: 0,
          your_hand: ['CARD_ACE_OF_SPADES', 'CARD_SEVEN_OF_HEARTS', 'CARD_JOKER_1'],
          phase: 'PHASE_BID',
          cards_per_seat: 3,
          turn_seat: turn,
          ...(legal ? { legal } : {}),
        },
      },
    });
    const synced = run(bidding(), [view({ phase: 'PHASE_BID', bids: [1, 3] })]);
    expect(synced.legal).toEqual({ seat: 0, phase: 'bid', trumps: [], bids: [1, 3], plays: [] });
    expect(synced.sendsLegal).toBe(true);
    // A view replaces the list: one without a list at another seat's move
    // leaves none, and says nothing of whether the table sends lists.
    const others = run(run(bidding(), [bids]), [view(undefined, 2)]);
    expect(others.legal).toBeNull();
    expect(others.sendsLegal).toBe(true);
    // At your move a table that sends lists puts yours in the view: one
    // without is from a table that sends none.
    expect(run(bidding(), [view(undefined)]).sendsLegal).toBe(false);
  });

  it('learn that a table sends no lists when your move timer is followed by anything else', () => {
    // A table restored from a snapshot of before legal moves.
    const s = bidding();
    expect(s).toMatchObject({ legal: null, sendsLegal: null, legalDue: true });
    expect(run(s, [{ player_away: { seat: 2, player_id: 'p2', grace_deadline: deadline } }]).sendsLegal).toBe(false);
    expect(run(s, [{ bid_made: { tricks: 2 } }]).sendsLegal).toBe(false);
    // A refusal is no history: it says nothing.
    expect(run(s, [{ visibility: { audience: 'AUDIENCE_PLAYER' }, move_rejected: { reason: 'REJECT_REASON_WRONG_PHASE' } }])).toMatchObject({ sendsLegal: null, legalDue: true });
    // Another seat's timer is followed by no list of yours.
    const theirs = run(startClassic(), [{ hand_started: { cards_per_seat: 1, dealer_seat: 3 } }, { timer_started: { seat: 2, phase: 'PHASE_BID', deadline } }]);
    expect(theirs.legalDue).toBe(false);
    expect(run(theirs, [{ bid_made: { seat: 2 } }]).sendsLegal).toBeNull();
    // A table known to send lists keeps doing so, in its next game too.
    const known = run(run(s, [bids]), [{ bid_made: { tricks: 2 }, timer: { seat: 1, phase: 'PHASE_PLAY', deadline } }]);
    expect(run(known, [{ timer_started: { phase: 'PHASE_PLAY', deadline } }, { player_back: { seat: 1, player_id: 'p1' } }]).sendsLegal).toBe(true);
    const again = { game_started: { settings: classicSettings, seats: seatsOf(['Nino', 'Giorgi', 'Ana', 'Levan']) } };
    expect(run(known, [again]).sendsLegal).toBe(true);
    // One that sent none did so to the end of its game: the next may send them.
    const none = run(s, [{ bid_made: { tricks: 2 } }]);
    expect(run(none, [again]).sendsLegal).toBeNull();
  });
});
