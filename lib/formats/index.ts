// The codec of each wire format, looked up by name.
import type { FormatName } from '../ir.ts';
import type { FormatCodec } from './types.ts';
import { responsesCodec } from './responses/index.ts';
import { chatCodec } from './chat/index.ts';
import { messagesCodec } from './messages/index.ts';
import { interactionsCodec } from './interactions/index.ts';
import { vertexCodec } from './vertex/index.ts';

export const CODECS: Record<FormatName, FormatCodec> = {
  responses: responsesCodec,
  chat: chatCodec,
  messages: messagesCodec,
  interactions: interactionsCodec,
  vertex: vertexCodec,
};
