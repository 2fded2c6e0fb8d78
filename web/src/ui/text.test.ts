import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setLang } from '../i18n';
import type { TableSettings } from '../protocol/types';
import { describeRules, payoutText, playerName } from './text';

function settings(over: Partial<TableSettings>): TableSettings {
  return {
    game: 'classic', variant: 'standard', khishti: '200', premia: true, moshla: true, restDocked: false,
    japaneseTarget: 0, visibility: 'public', hasPassword: false, stake: { kind: 'free' }, moveTime: null,
    reconnectGrace: null, botLevel: null, ...over,
  };
}

describe('payoutText: the pot as the lobby describes it', () => {
  beforeEach(() => setLang('en'));
  afterEach(() => setLang('en'));

  it('lists the paid places of a classic table from its payout, then who forfeits', () => {
    const s = settings({ stake: { kind: 'coins', amount: 100, payout: [50, 30, 20, 0] } });
    expect(payoutText(s)).toBe(
      'The pot (every stake) is paid out by placing: #1 50 %, #2 30 %, #3 20 %. A player who leaves mid-game forfeits the stake; bots never win coins.',
    );
    expect(describeRules(s)).toContain(payoutText(s));
  });

  it('says the winner takes all when one place is paid (Japanese)', () => {
    const s = settings({ game: 'japanese', stake: { kind: 'coins', amount: 10, payout: [100, 0] } });
    expect(payoutText(s)).toBe('The winner takes the whole pot. A resignation or timeout hands the pot to the opponent.');
  });

  it('follows the numbers it is given, not a table of its own', () => {
    const s = settings({ stake: { kind: 'coins', amount: 10, payout: [70, 30, 0, 0] } });
    expect(payoutText(s)).toContain('#1 70 %, #2 30 %.');
  });

  it('says nothing of shares it was not told, and nothing for a free table', () => {
    expect(payoutText(settings({ stake: { kind: 'coins', amount: 10, payout: [] } }))).toBe(
      'A player who leaves mid-game forfeits the stake; bots never win coins.',
    );
    expect(payoutText(settings({}))).toBe('');
    expect(describeRules(settings({})).join(' ')).not.toContain('pot');
  });

  it('is written in every language', () => {
    setLang('ru');
    expect(payoutText(settings({ stake: { kind: 'coins', amount: 10, payout: [50, 30, 20, 0] } }))).toContain('1-е место 50 %');
  });
});

describe('describeRules: the bots\' level', () => {
  beforeEach(() => setLang('en'));
  afterEach(() => setLang('en'));

  it('says how the bots play when the table says so, and nothing when it does not', () => {
    expect(describeRules(settings({ botLevel: 'strong' }))).toContain('Bots in empty seats play strong.');
    expect(describeRules(settings({})).join(' ')).not.toContain('Bots in empty seats');
  });
});

describe('playerName: the names the server makes up, in the player’s language (issue 22, rough edge 10)', () => {
  afterEach(() => setLang('en'));

  it('translates a guest’s and a bot’s name and leaves chosen names alone', () => {
    const names = ['Guest-1234', 'Bot 2', 'nino', 'Bot2', 'Guest-x'];
    setLang('ka');
    expect(names.map(playerName)).toEqual(['სტუმარი-1234', 'ბოტი 2', 'nino', 'Bot2', 'Guest-x']);
    setLang('ru');
    expect(names.map(playerName)).toEqual(['Гость-1234', 'Бот 2', 'nino', 'Bot2', 'Guest-x']);
    setLang('tr');
    expect(names.map(playerName)).toEqual(['Misafir-1234', 'Bot 2', 'nino', 'Bot2', 'Guest-x']);
    setLang('en');
    expect(names.map(playerName)).toEqual(['Guest-1234', 'Bot 2', 'nino', 'Bot2', 'Guest-x']);
  });
});
