// The Anthropic Messages codec: caller format "messages", and the wire of vendor C and cloud_b.
import type { CallerCodec } from '../types.ts';
import { decodeMessagesRequest } from './request-decode.ts';
import { encodeMessagesRequest } from './request-encode.ts';
import { decodeMessagesResponse, encodeMessagesResponse } from './response.ts';
import { MessagesStreamDecoder } from './stream-decode.ts';
import { MessagesAssembler } from './assemble.ts';
import { MessagesStreamEncoder } from './stream-encode.ts';
import { messagesTap } from './tap.ts';
import { messagesErrorBody, messagesErrorFrame } from './errors.ts';
import { messagesEndpoint } from './endpoint.ts';
import { maxTokensFor } from './thinking.ts';

export const messagesCodec: CallerCodec = {
  name: 'messages',
  decodeRequest: decodeMessagesRequest,
  encodeRequest: encodeMessagesRequest,
  decodeResponse: decodeMessagesResponse,
  encodeResponse: encodeMessagesResponse,
  createStreamDecoder: () => new MessagesStreamDecoder(),
  assembleNative: () => new MessagesAssembler(),
  createStreamEncoder: (ctx) => new MessagesStreamEncoder(ctx),
  tap: messagesTap,
  errorBody: messagesErrorBody,
  errorFrame: messagesErrorFrame,
  streamEnd: Buffer.from('event: message_stop\ndata: {"type":"message_stop"}\n\n'),
  bytesPerOutputToken: 12,
  uncappedOutput: maxTokensFor,
  endpoint: messagesEndpoint,
};
