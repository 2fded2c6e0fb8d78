import { describe, expect, it } from 'vitest';
import { play, setSound, soundFor, soundOn } from './sound';

describe('sounds', () => {
  it('are off by default and the switch is remembered', () => {
    expect(soundOn.value).toBe(false);
    setSound(true);
    expect(localStorage.getItem('pulka.sound')).toBe('on');
    expect(soundOn.value).toBe(true);
    setSound(false);
    expect(localStorage.getItem('pulka.sound')).toBe('off');
  });

  it('sound for a card, a trick, the end and your turn; nothing for the rest', () => {
    expect(soundFor({ kind: 'played', seat: 1, card: 3, byServer: false }, false)?.notes).toHaveLength(1);
    expect(soundFor({ kind: 'trick', seat: 1 }, false)?.notes).toHaveLength(2);
    expect(soundFor({ kind: 'game_over' }, false)?.notes).toHaveLength(3);
    expect(soundFor({ kind: 'bid', seat: 1, tricks: 2, byServer: false }, false)).toBeNull();
    expect(soundFor(null, false)).toBeNull();
    // Your turn wins over what else happened: it is the one to hear.
    expect(soundFor({ kind: 'played', seat: 1, card: 3, byServer: false }, true)).toEqual(soundFor(null, true));
  });

  it('plays nothing, and throws nothing, where there is no WebAudio', () => {
    setSound(true);
    expect(() => play({ notes: [440], ms: 10 })).not.toThrow();
    setSound(false);
  });
});
