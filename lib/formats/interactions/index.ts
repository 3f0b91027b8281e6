// The Gemini Interactions codec: caller format "interactions", and the wire of vendor B.
import type { CallerCodec } from '../types.ts';
import { decodeInteractionsRequest } from './request-decode.ts';
import { encodeInteractionsRequest } from './request-encode.ts';
import { decodeInteractionsResponse, encodeInteractionsResponse } from './response.ts';
import { InteractionsStreamDecoder } from './stream-decode.ts';
import { InteractionsStreamEncoder } from './stream-encode.ts';
import { interactionsTap } from './tap.ts';
import { interactionsErrorBody, interactionsErrorFrame } from './errors.ts';
import { interactionsEndpoint } from './endpoint.ts';

export const interactionsCodec: CallerCodec = {
  name: 'interactions',
  decodeRequest: decodeInteractionsRequest,
  encodeRequest: encodeInteractionsRequest,
  decodeResponse: decodeInteractionsResponse,
  encodeResponse: encodeInteractionsResponse,
  createStreamDecoder: () => new InteractionsStreamDecoder(),
  createStreamEncoder: (ctx) => new InteractionsStreamEncoder(ctx),
  tap: interactionsTap,
  errorBody: interactionsErrorBody,
  errorFrame: interactionsErrorFrame,
  streamEnd: Buffer.from('event: done\ndata: [DONE]\n\n'),
  bytesPerOutputToken: 6,
  endpoint: interactionsEndpoint,
};
