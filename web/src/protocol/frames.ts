// The frames the client sends (pulka.gateway.v1.ClientFrame, generated from
// proto/ into web/src/gen): a move as the player makes it, and its table
// command. docs/protocol.md says what the gateway does with them.

import { create, type MessageInitShape } from '@bufbuild/protobuf';

import { ClientFrameSchema, type ClientFrame, type TableCommandSchema } from '../gen/pulka/gateway/v1/frames_pb';
import { Suit as WireSuit } from '../gen/pulka/common/v1/cards_pb';
import { JokerAction as WireJokerAction } from '../gen/pulka/table/v1/command_pb';
import type { Card, Suit } from './cards';
import type { JokerAction, Trump } from './types';
import { wireCard, wireSuit } from './view';

/** A table command the player makes (the frame without table, ref and cmd). */
export type Move =
  | { type: 'bid'; tricks: number }
  | { type: 'trump'; suit: Trump }
  | { type: 'play'; card: Card; joker?: { action: JokerAction; suit?: Suit } }
  | { type: 'resign' }
  | { type: 'leave' }
  | { type: 'sit'; seat: number };

/**
 * A client seed riding on a move: the seat's seed (64 hex digits) for the
 * hand committed ahead (docs/fair-play.md, "What a client does").
 */
export interface AttachedSeed {
  hand: number;
  seed: string;
}

/** Whether a move can carry a seed (a bid, trump or card: Command.attached_seed). */
export function carriesSeed(m: Move): boolean {
  return m.type === 'bid' || m.type === 'trump' || m.type === 'play';
}

/** 64 hex digits as the seed's 32 bytes. */
export function seedBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const JOKER_ACTIONS: Record<JokerAction, WireJokerAction> = {
  take: WireJokerAction.TAKE,
  discard: WireJokerAction.DISCARD,
  highest: WireJokerAction.HIGHEST,
  give: WireJokerAction.GIVE,
};

function command(m: Move): MessageInitShape<typeof TableCommandSchema>['command'] {
  switch (m.type) {
    case 'bid':
      return { case: 'bid', value: { tricks: m.tricks } };
    case 'trump':
      return { case: 'trump', value: { trump: wireSuit(m.suit) } };
    case 'play':
      return {
        case: 'play',
        value: {
          card: wireCard(m.card),
          declaration: m.joker ? { action: JOKER_ACTIONS[m.joker.action], suit: m.joker.suit ? wireSuit(m.joker.suit) : WireSuit.UNSPECIFIED } : undefined,
        },
      };
    case 'sit':
      return { case: 'sit', value: { seat: m.seat } };
    case 'resign':
      return { case: 'resign', value: {} };
    case 'leave':
      return { case: 'leave', value: {} };
  }
}

/**
 * The frame for a move at table, with the client's ref and idempotency key,
 * and the seed riding on it (dropped from a move that cannot carry one).
 */
export function moveFrame(table: string, m: Move, ref: string, cmd: string, seed?: AttachedSeed): ClientFrame {
  const attachedSeed = seed && carriesSeed(m) ? { handIndex: seed.hand, seed: seedBytes(seed.seed) } : undefined;
  return create(ClientFrameSchema, { ref, frame: { case: 'command', value: { table, cmd, attachedSeed, command: command(m) } } });
}

/** The frame of this seat's client seed (64 hex digits) for hand, a table command of its own. */
export function seedFrame(table: string, hand: number, seed: string, cmd: string, ref: string): ClientFrame {
  return create(ClientFrameSchema, {
    ref,
    frame: { case: 'command', value: { table, cmd, command: { case: 'seed', value: { handIndex: hand, seed: seedBytes(seed) } } } },
  });
}

export interface ServerError {
  code: string;
  message: string;
  ref: string;
  /** The error answers a join (the table's id itself may be what was refused). */
  join?: true;
}
