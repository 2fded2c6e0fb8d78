// Optional sounds, off by default: short tones made with WebAudio (no audio
// files to download). The switch is remembered in localStorage. Which
// happening sounds how is a pure function (soundFor), tested on its own.

import { signal } from '@preact/signals';
import type { Notice } from '../game/state';

const STORAGE_KEY = 'pulka.sound';

function stored(): boolean {
  try {
    return localStorage.getItem(STORAGE_KEY) === 'on';
  } catch {
    return false;
  }
}

export const soundOn = signal<boolean>(stored());

export function setSound(on: boolean): void {
  soundOn.value = on;
  try {
    localStorage.setItem(STORAGE_KEY, on ? 'on' : 'off');
  } catch {
    // Not remembered, but still switched.
  }
}

/** A sound: notes (Hz) one after another, each `ms` long. */
export interface Tone {
  notes: number[];
  ms: number;
}

/** The sound of a happening at the table, or null for none. A turn of
 * yours is the one sound worth hearing while looking elsewhere. */
export function soundFor(n: Notice | null, yourTurnStarted: boolean): Tone | null {
  if (yourTurnStarted) return { notes: [660, 880], ms: 90 };
  if (!n) return null;
  switch (n.kind) {
    case 'played':
      return { notes: [320], ms: 40 };
    case 'trick':
      return { notes: [520, 390], ms: 60 };
    case 'game_over':
      return { notes: [523, 659, 784], ms: 140 };
    default:
      return null;
  }
}

let ctx: AudioContext | null = null;

/** Plays a tone when sounds are on (and the browser has WebAudio). */
export function play(tone: Tone | null): void {
  if (!tone || !soundOn.value || typeof AudioContext === 'undefined') return;
  try {
    ctx ??= new AudioContext();
    const start = ctx.currentTime;
    tone.notes.forEach((hz, i) => {
      if (!ctx) return;
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      const t0 = start + (i * tone.ms) / 1000;
      const t1 = t0 + tone.ms / 1000;
      osc.type = 'triangle';
      osc.frequency.value = hz;
      gain.gain.setValueAtTime(0.0001, t0);
      gain.gain.exponentialRampToValueAtTime(0.15, t0 + 0.01);
      gain.gain.exponentialRampToValueAtTime(0.0001, t1);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t0);
      osc.stop(t1 + 0.02);
    });
  } catch {
    // No sound rather than a broken table.
  }
}
