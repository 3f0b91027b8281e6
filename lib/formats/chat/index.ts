// The OpenAI Chat Completions format: caller format of POST /v1/chat/completions, and vendor A's
// wire for the Chat passthrough (Chat-native parameters). Chat callers otherwise ride the canonical
// Responses path: chat decodeRequest → responses encodeRequest, responses stream decoder → chat
// stream encoder.
import type { CallerCodec } from '../types.ts';
import { decodeChatRequest } from './request-decode.ts';
import { encodeChatRequest } from './request-encode.ts';
import { decodeChatResponse, encodeChatResponse } from './response.ts';
import { createChatStreamDecoder } from './stream-decode.ts';
import { createChatStreamEncoder } from './stream-encode.ts';
import { chatTap } from './tap.ts';
import { chatErrorBody, chatErrorFrame } from './errors.ts';
import { chatEndpoint } from './endpoint.ts';

export const chatCodec: CallerCodec = {
  name: 'chat',
  decodeRequest: decodeChatRequest,
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  encodeResponse: encodeChatResponse,
  createStreamDecoder: createChatStreamDecoder,
  createStreamEncoder: createChatStreamEncoder,
  tap: chatTap,
  errorBody: chatErrorBody,
  errorFrame: chatErrorFrame,
  streamEnd: Buffer.from('data: [DONE]\n\n'),
  bytesPerOutputToken: 64,
  endpoint: chatEndpoint,
};
