// The codec of each wire format, looked up by name: the one table that lists the formats. A codec
// with an endpoint is a caller format (served at its path, checked by its rules); adding one is its
// folder, its name in FormatName (lib/ir.ts) and one line here.
import type { FormatName } from '../ir.ts';
import type { CallerCodec, FormatCodec } from './types.ts';
import { responsesCodec } from './responses/index.ts';
import { chatCodec } from './chat/index.ts';
import { messagesCodec } from './messages/index.ts';
import { interactionsCodec } from './interactions/index.ts';
import { vertexCodec } from './vertex/index.ts';

export const CODECS = {
  responses: responsesCodec,
  chat: chatCodec,
  messages: messagesCodec,
  interactions: interactionsCodec,
  vertex: vertexCodec,
} satisfies Record<FormatName, FormatCodec>;

type Table = typeof CODECS;
/** The formats callers may send: those whose codec has an endpoint. */
export type CallerFormat = { [F in keyof Table]: Table[F] extends CallerCodec ? F : never }[keyof Table];

/** The caller formats' codecs. */
export const CALLER_CODECS = Object.fromEntries(
  Object.entries(CODECS).filter(([, codec]) => codec.endpoint),
) as Record<CallerFormat, CallerCodec>;
