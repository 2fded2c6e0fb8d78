// The commit–reveal deal of pkg/fairdeal, byte for byte (docs/fair-play.md),
// with Web Crypto only: SHA-256 for the commitment, HMAC-SHA256 for the
// shuffle key and the stream the shuffle draws from. fairdeal.test.ts runs
// it against pkg/fairdeal/testdata/vectors.json, so the browser and the
// server cannot drift apart.

import { DECK_SIZE, type Card } from '../protocol/cards';

export const SEED_SIZE = 32;

/** A hand's identity: the table, the game (the events' game_id), the hand index. */
export interface HandId {
  tableId: string;
  gameId: string;
  index: number;
}

// Domain separation tags: fixed forever (pkg/fairdeal).
const TAG_COMMIT = 'pulka/commit/v1';
const TAG_DEAL = 'pulka/deal/v1';
const TAG_STREAM = 'pulka/stream/v1';

const enc = new TextEncoder();

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let i = 0;
  for (const p of parts) {
    out.set(p, i);
    i += p.length;
  }
  return out;
}

function u16(v: number): Uint8Array {
  return new Uint8Array([(v >>> 8) & 0xff, v & 0xff]);
}

function u32(v: number): Uint8Array {
  return new Uint8Array([(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff]);
}

/** lp(s): s's UTF-8 length as a big-endian uint16, then its bytes. */
function lp(s: string): Uint8Array {
  const b = enc.encode(s);
  if (b.length === 0 || b.length > 0xffff) throw new Error('fairdeal: bad hand identity');
  return concat([u16(b.length), b]);
}

function identity(tag: string, h: HandId): Uint8Array<ArrayBuffer> {
  if (!Number.isInteger(h.index) || h.index < 0 || h.index > 0xffffffff) throw new Error('fairdeal: bad hand index');
  return concat([enc.encode(tag), lp(h.tableId), lp(h.gameId), u32(h.index)]);
}

function subtle(): SubtleCrypto {
  // crypto.subtle is missing on insecure origins, whatever the types say.
  const s: SubtleCrypto | undefined = (globalThis.crypto as Crypto | undefined)?.subtle;
  if (!s) throw new Error('fairdeal: Web Crypto is not available (it needs a secure origin)');
  return s;
}

async function sha256(b: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await subtle().digest('SHA-256', b));
}

async function hmacKey(key: Uint8Array): Promise<CryptoKey> {
  return subtle().importKey('raw', new Uint8Array(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

async function hmac(key: CryptoKey, msg: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await subtle().sign('HMAC', key, msg));
}

function checkSeed(s: Uint8Array, what: string): void {
  if (s.length !== SEED_SIZE) throw new Error(`fairdeal: ${what} is not ${SEED_SIZE} bytes`);
}

/** SHA-256("pulka/commit/v1" || lp(table) || lp(game) || u32(hand) || server seed). */
export async function commitment(h: HandId, serverSeed: Uint8Array): Promise<Uint8Array> {
  checkSeed(serverSeed, 'the server seed');
  return sha256(concat([identity(TAG_COMMIT, h), serverSeed]));
}

/**
 * HMAC-SHA256 keyed by the server seed over "pulka/deal/v1" || lp(table) ||
 * lp(game) || u32(hand) || u8(seats) || the client seeds in seat order.
 */
export async function shuffleKey(h: HandId, serverSeed: Uint8Array, clientSeeds: Uint8Array[]): Promise<Uint8Array> {
  checkSeed(serverSeed, 'the server seed');
  if (clientSeeds.length === 0 || clientSeeds.length > 255) throw new Error('fairdeal: bad number of seats');
  clientSeeds.forEach((c) => checkSeed(c, 'a client seed'));
  const msg = concat([identity(TAG_DEAL, h), new Uint8Array([clientSeeds.length]), ...clientSeeds]);
  return hmac(await hmacKey(serverSeed), msg);
}

/**
 * The stream of 32-bit words a key gives: HMAC-SHA256(key, "pulka/stream/v1"
 * || u32(i)) for i = 0, 1, 2, …, read as big-endian uint32s. Web Crypto is
 * asynchronous, so blocks are made ahead in batches.
 */
export class Stream {
  private words: number[] = [];
  private next = 0;
  private block = 0;

  private constructor(private readonly key: CryptoKey) {}

  static async of(key: Uint8Array): Promise<Stream> {
    checkSeed(key, 'the shuffle key');
    return new Stream(await hmacKey(key));
  }

  private async fill(blocks: number): Promise<void> {
    const made = await Promise.all(
      Array.from({ length: blocks }, (_, i) => hmac(this.key, concat([enc.encode(TAG_STREAM), u32(this.block + i)]))),
    );
    this.block += blocks;
    for (const b of made) {
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      for (let o = 0; o < b.length; o += 4) this.words.push(v.getUint32(o));
    }
  }

  private async word(): Promise<number> {
    if (this.next === this.words.length) await this.fill(this.block === 0 ? 6 : 1);
    const w = this.words[this.next++];
    if (w === undefined) throw new Error('fairdeal: stream underflow');
    return w;
  }

  /** A uniform number in [0, n): words at or above 2^32 − (2^32 mod n) are skipped. */
  async intN(n: number): Promise<number> {
    if (n <= 1) return 0;
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      const w = await this.word();
      if (w < limit) return w % n;
    }
  }
}

/**
 * The deck key gives: the ordered deck (card i at position i) shuffled by
 * Fisher–Yates from the last position down, position i swapping with
 * intN(i+1). Also the stream after the shuffle (the next draws of a game).
 */
export async function shuffle(key: Uint8Array): Promise<{ deck: Card[]; stream: Stream }> {
  const d: Card[] = Array.from({ length: DECK_SIZE }, (_, i) => i);
  const st = await Stream.of(key);
  for (let i = DECK_SIZE - 1; i > 0; i--) {
    const j = await st.intN(i + 1);
    const a = d[i] as Card;
    d[i] = d[j] as Card;
    d[j] = a;
  }
  return { deck: d, stream: st };
}

// ---- Bytes as the protocol writes them ----

export function toHex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/** 64 hex digits (or any even count) → bytes; null when not hex. */
export function fromHex(s: string): Uint8Array | null {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) return null;
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return d === 0;
}

/** A fresh client seed: 32 bytes from the browser's cryptographic source. */
export function newClientSeed(): Uint8Array {
  const b = new Uint8Array(SEED_SIZE);
  crypto.getRandomValues(b);
  return b;
}

// ---- The deal layout (docs/fair-play.md; pkg/classic deal, pkg/japanese deck) ----

/**
 * The deck positions of seat's cards in a classic hand of n cards dealt by
 * dealer (four seats, served clockwise from the seat after the dealer): n
 * each in hands of 1..8 cards (then the turned card, position 4n); in
 * nine-card hands three each, then six each from position 12.
 */
export function classicPositions(n: number, dealer: number, seat: number): number[] {
  const i = (((seat - dealer - 1) % 4) + 4) % 4;
  if (n >= 9) {
    return [...range(3 * i, 3), ...range(12 + 6 * i, 6)];
  }
  return range(n * i, n);
}

/** The turned card's position in a classic hand of n < 9 cards (none at 9). */
export function classicTurnedPosition(n: number): number | null {
  return n < 9 ? 4 * n : null;
}

/**
 * The deck positions of the cards dealt into seat's hand in a Japanese hand
 * whose declarer is declarer: [0,3) and [6,11) the declarer's, [3,6) and
 * [11,16) the other seat's (the columns follow: 16.. face-down and face-up).
 */
export function japanesePositions(declarer: number, seat: number): number[] {
  return seat === declarer ? [...range(0, 3), ...range(6, 5)] : [...range(3, 3), ...range(11, 5)];
}

function range(start: number, n: number): number[] {
  return Array.from({ length: n }, (_, k) => start + k);
}
