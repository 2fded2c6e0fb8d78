// Test doubles for the protocol layer: a WebSocket the test drives by hand
// and a clock whose timers run only when the test advances it.

import { fromBinary, fromJson, toBinary, toJson, type JsonValue } from '@bufbuild/protobuf';

import { ClientFrameSchema, ServerFrameSchema } from '../gen/pulka/gateway/v1/frames_pb';
import type { Clock, SocketLike } from '../protocol/connection';

type Flat = Record<string, unknown>;

/**
 * A frame in the protocol's JSON (proto field names) flattened for the
 * tests' assertions: "type" names its member (a table command's own
 * member: bid, play…), whose fields sit beside the frame's ref (and a
 * command's table, cmd and attached_seed).
 */
function flatten(json: Flat): Flat {
  const out: Flat = {};
  for (const [k, v] of Object.entries(json)) {
    if (k === 'ref') {
      out.ref = v;
      continue;
    }
    const inner = (v ?? {}) as Flat;
    if (k !== 'command') {
      Object.assign(out, { type: k }, inner);
      continue;
    }
    for (const [ck, cv] of Object.entries(inner)) {
      if (ck === 'table' || ck === 'cmd') out[ck] = cv;
      else if (ck === 'attached_seed') Object.assign(out, seedOf(cv as Flat));
      else if (ck === 'seed') Object.assign(out, { type: ck }, seedOf(cv as Flat));
      else Object.assign(out, { type: ck }, cv as Flat);
    }
  }
  return out;
}

/** A seed (ClientSeedCommand) as the client makes it: hand, and 64 hex digits. */
function seedOf(s: Flat): Flat {
  const bin = atob(typeof s.seed === 'string' ? s.seed : '');
  let hex = '';
  for (let i = 0; i < bin.length; i++) hex += bin.charCodeAt(i).toString(16).padStart(2, '0');
  return { hand: typeof s.hand_index === 'number' ? s.hand_index : 0, seed: hex };
}

/** The reverse for server frames: {type, ref, ...fields} as a ServerFrame's JSON. */
function unflatten(f: Flat): JsonValue {
  const { type, ref, ...fields } = f;
  // A lobby view or update may come wrapped ({view} / {update}), as it was
  // before the frames were proto.
  const body = (type === 'lobby_view' ? fields.view : type === 'lobby_update' ? fields.update : undefined) ?? fields;
  const out: Record<string, JsonValue> = { [String(type)]: body as JsonValue };
  if (ref !== undefined) out.ref = ref as JsonValue;
  return out;
}

export class FakeSocket implements SocketLike {
  readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  binaryType = 'blob';
  /** What the client sent, flattened (flatten). */
  readonly sent: Flat[] = [];
  closed: { code?: number; reason?: string } | null = null;

  constructor(readonly url: string) {}

  send(data: string | Uint8Array): void {
    if (this.readyState !== 1) throw new Error('send on a socket that is not open');
    if (typeof data === 'string') throw new Error('a text frame on a binary connection');
    this.sent.push(flatten(toJson(ClientFrameSchema, fromBinary(ClientFrameSchema, data), { useProtoFieldName: true }) as Flat));
  }

  close(code?: number, reason?: string): void {
    this.closed = { code, reason };
    this.readyState = 3;
  }

  // ---- driven by the test ----
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }

  /** Delivers a server frame given flattened ({type, ref, ...fields}), as the gateway's binary message. */
  receive(frame: Flat): void {
    const b = toBinary(ServerFrameSchema, fromJson(ServerFrameSchema, unflatten(frame)));
    this.onmessage?.({ data: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) });
  }

  drop(code = 1006): void {
    this.readyState = 3;
    this.onclose?.({ code, reason: '' });
  }

  /** The frames sent of one type. */
  frames(type: string): Record<string, unknown>[] {
    return this.sent.filter((f) => f.type === type);
  }
}

export class FakeClock implements Clock {
  t = 1_700_000_000_000;
  private timers: { at: number; f: () => void; id: number }[] = [];
  private nextId = 1;

  now(): number {
    return this.t;
  }

  setTimeout(f: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ at: this.t + ms, f, id });
    return id;
  }

  clearTimeout(h: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== h);
  }

  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = next.at;
      next.f();
    }
    this.t = end;
  }
}

/** Sequential ids: "id1", "id2", … */
export function counterIds(): () => string {
  let n = 0;
  return () => `id${++n}`;
}
