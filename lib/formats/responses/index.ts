// The OpenAI Responses format: caller format of POST /v1/responses and vendor A's canonical wire.
import type { CallerCodec } from '../types.ts';
import { decodeResponsesRequest } from './request-decode.ts';
import { encodeResponsesRequest } from './request-encode.ts';
import { decodeResponsesResponse, encodeResponsesResponse, responsesEcho } from './response.ts';
import { createResponsesStreamDecoder } from './stream-decode.ts';
import { ResponsesAssembler } from './assemble.ts';
import { createResponsesStreamEncoder } from './stream-encode.ts';
import { responsesTap } from './tap.ts';
import { responsesErrorBody, responsesErrorFrame } from './errors.ts';
import { responsesEndpoint } from './endpoint.ts';

export const responsesCodec: CallerCodec = {
  name: 'responses',
  decodeRequest: decodeResponsesRequest,
  encodeRequest: encodeResponsesRequest,
  decodeResponse: decodeResponsesResponse,
  encodeResponse: encodeResponsesResponse,
  createStreamDecoder: createResponsesStreamDecoder,
  assembleNative: () => new ResponsesAssembler(),
  echo: responsesEcho,
  createStreamEncoder: createResponsesStreamEncoder,
  tap: responsesTap,
  errorBody: responsesErrorBody,
  errorFrame: responsesErrorFrame,
  bytesPerOutputToken: 64,
  endpoint: responsesEndpoint,
};
