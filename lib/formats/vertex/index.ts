// The Gemini-on-Vertex generateContent codec: the wire of cloud_a (rarely a caller format).
import type { FormatCodec } from '../types.ts';
import { decodeVertexRequest } from './request-decode.ts';
import { encodeVertexRequest } from './request-encode.ts';
import { decodeVertexResponse, encodeVertexResponse } from './response.ts';
import { VertexStreamDecoder } from './stream-decode.ts';
import { VertexStreamEncoder } from './stream-encode.ts';
import { vertexTap } from './tap.ts';
import { vertexErrorBody, vertexErrorFrame } from './errors.ts';

export const vertexCodec: FormatCodec = {
  name: 'vertex',
  decodeRequest: decodeVertexRequest,
  encodeRequest: encodeVertexRequest,
  decodeResponse: decodeVertexResponse,
  encodeResponse: encodeVertexResponse,
  createStreamDecoder: () => new VertexStreamDecoder(),
  createStreamEncoder: (ctx) => new VertexStreamEncoder(ctx),
  tap: vertexTap,
  errorBody: vertexErrorBody,
  errorFrame: vertexErrorFrame,
  bytesPerOutputToken: 6,
};
