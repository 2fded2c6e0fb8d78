import { afterEach, describe, expect, it, vi } from 'vitest';
import { emptyTable, type TableState } from '../../game/state';
import { mount } from '../../testing/render';
import { setSound } from '../../ui/sound';
import { useTableSounds } from './parts';

function Sounds({ s, live }: { s: TableState; live: boolean }) {
  useTableSounds(s, live);
  return null;
}

/** A stand-in for WebAudio that counts the oscillators started. */
function fakeAudio(): { started: number } {
  const count = { started: 0 };
  class FakeContext {
    currentTime = 0;
    destination = {};
    createOscillator() {
      return {
        type: '',
        frequency: { value: 0 },
        connect: <T,>(n: T) => n,
        start: () => {
          count.started++;
        },
        stop: () => undefined,
      };
    }
    createGain() {
      return { gain: { setValueAtTime: () => undefined, exponentialRampToValueAtTime: () => undefined }, connect: <T,>(n: T) => n };
    }
  }
  vi.stubGlobal('AudioContext', FakeContext);
  return count;
}

describe('table sounds', () => {
  afterEach(() => {
    setSound(false);
    vi.unstubAllGlobals();
    document.body.innerHTML = '';
  });

  it('sound a live card played, not the history a (re)join replays', () => {
    const audio = fakeAudio();
    setSound(true);
    const s0 = emptyTable('t1');
    const m = mount(<Sounds s={s0} live={false} />);
    // Replayed: a card and a trick of the game so far (a reload replays them all).
    const s1 = { ...s0, notice: { kind: 'played' as const, seat: 1, card: 3, byServer: false } };
    m.rerender(<Sounds s={s1} live={false} />);
    const s2 = { ...s1, notice: { kind: 'trick' as const, seat: 1 } };
    m.rerender(<Sounds s={s2} live={false} />);
    expect(audio.started).toBe(0);
    // Live: the next card sounds.
    const s3 = { ...s2, notice: { kind: 'played' as const, seat: 2, card: 4, byServer: false } };
    m.rerender(<Sounds s={s3} live />);
    expect(audio.started).toBe(1);
    m.unmount();
  });
});
