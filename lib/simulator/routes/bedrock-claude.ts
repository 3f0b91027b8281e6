// cloud_b, Claude on AWS Bedrock (InvokeModel):
//   POST /model/{modelId}/invoke                      → Anthropic Message JSON
//   POST /model/{modelId}/invoke-with-response-stream → binary AWS event-stream
// Each event-stream message is a `chunk` whose JSON payload is {"bytes": base64(one Anthropic
// stream event)}; message_stop carries amazon-bedrock-invocationMetrics. Body = Messages body
// without model/stream plus anthropic_version "bedrock-2023-05-31". Errors are AWS JSON errors
// with x-amzn-ErrorType; mid-stream failures are `exception` messages.
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { Answer } from '../answer.ts';
import type { Frame } from '../frames.ts';
import { invalid, isRecord } from '../prompt.ts';
import { checkSigV4 } from '../sigv4.ts';
import { decodeAnthropic, messageBody, messageEvents } from './anthropic-shape.ts';
import { decodeSegment, type RouteAdapter } from './route.ts';

const PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;
const codec = new EventStreamCodec(toUtf8, fromUtf8);

const str = (value: string) => ({ type: 'string' as const, value });
const CHUNK_HEADERS: MessageHeaders = {
  ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event'),
};

/** One event-stream `chunk` message carrying an Anthropic event JSON text. */
export function chunkFrame(eventJson: string, tokens = 0): Frame {
  const payload = JSON.stringify({ bytes: Buffer.from(eventJson, 'utf8').toString('base64') });
  return { bytes: codec.encode({ headers: CHUNK_HEADERS, body: fromUtf8(payload) }), tokens };
}

function exceptionFrame(exception: string, message: string): Frame {
  const headers: MessageHeaders = {
    ':exception-type': str(exception), ':content-type': str('application/json'), ':message-type': str('exception'),
  };
  return { bytes: codec.encode({ headers, body: fromUtf8(JSON.stringify({ message })) }), tokens: 0 };
}

export const bedrockClaude: RouteAdapter = {
  name: 'cloud_b',
  family: 'aws',
  match: (path) => {
    const match = PATH.exec(path);
    return match ? { modelId: decodeSegment(match[1]!), verb: match[2]! } : undefined;
  },
  authenticate: async (info, ctx) => {
    const reason = await checkSigV4(
      { method: info.method, path: info.path, query: info.query, headers: info.headers, body: info.rawBody },
      ctx.awsSecrets,
    );
    return reason ? { name: 'unauthenticated', message: reason, status: 403 } : undefined;
  },
  decode: (body, info) => {
    if (!isRecord(body)) return invalid('Malformed input request, please reformat your input and try again.');
    if (body.anthropic_version !== 'bedrock-2023-05-31') {
      return invalid('Malformed input request: #: required key [anthropic_version] not found or not bedrock-2023-05-31,'
        + ' please reformat your input and try again.');
    }
    for (const key of ['model', 'stream'] as const) {
      if (key in body) {
        return invalid(`Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`);
      }
    }
    const decoded = decodeAnthropic(body, info.params.modelId!);
    if (decoded.ok) decoded.value.stream = info.params.verb === 'invoke-with-response-stream';
    return decoded;
  },
  streamContentType: 'application/vnd.amazon.eventstream',
  encodeBody: (answer) => messageBody(answer),
  encodeStream: (answer) => ({
    frames: bedrockEvents(answer),
    error: (message) => [exceptionFrame('internalServerException', message)],
  }),
  replayFrame: (line) => chunkFrame(line, 1),
  replayTail: [],
  headers: (answer) => ({
    'x-amzn-requestid': `sim-${answer?.uid ?? 'replay'}`,
    'x-amzn-bedrock-content-type': 'application/json',
    ...(answer ? {
      'x-amzn-bedrock-input-token-count': String(answer.usage.input),
      'x-amzn-bedrock-output-token-count': String(answer.usage.output),
    } : {}),
  }),
};

function* bedrockEvents(answer: Answer): Generator<Frame> {
  const started = Date.now();
  let firstByte: number | undefined;
  for (const event of messageEvents(answer)) {
    firstByte ??= Date.now() - started;
    let payload = event.payload;
    if (payload.type === 'message_stop') {
      payload = {
        ...payload,
        'amazon-bedrock-invocationMetrics': {
          inputTokenCount: answer.usage.input, outputTokenCount: answer.usage.output,
          invocationLatency: Date.now() - started, firstByteLatency: firstByte,
        },
      };
    }
    yield chunkFrame(JSON.stringify(payload), event.tokens);
  }
}
