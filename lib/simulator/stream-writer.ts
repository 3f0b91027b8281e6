// Writes a route's frames to the socket: paced at tokens/s when asked, and able to fail on cue
// after N tokens — a connection reset (`reset_after_tokens`) or the format's own in-stream error
// (`error_after_tokens`). Unpaced frames are batched into few socket writes (benchmarks need the
// simulator to be cheap); a batch is flushed before every wait and before a fault. Frames are
// pulled from the route's generator only as the socket takes them: when res.write() says the
// buffers are full, the writer waits for 'drain', so a caller (or gateway) that stops reading
// costs one batch, whatever the length of the answer.
import type { ServerResponse } from 'node:http';
import type { Frame } from './frames.ts';
import { sleep } from './sleep.ts';

export interface StreamFaults {
  tokensPerS: number;
  resetAfterTokens?: number;
  errorAfterTokens?: number;
  errorFrames: () => Frame[];
  /** Called just before a deliberate reset, so the close is not counted as a client abort. */
  beforeReset?: () => void;
}

export type StreamOutcome = 'finished' | 'reset' | 'errored' | 'aborted';

/** What the simulator's streams did to their sockets (SimulatorStats carries one). */
export interface StreamMeter {
  /** Bytes handed to res.write(), all streams together. */
  bytesWritten: number;
  /** Times a stream found its socket full and waited for 'drain'. */
  drainWaits: number;
  /** Streams waiting for 'drain' right now: readers that stopped reading hold their writers here. */
  paused: number;
  /** Streams written to their end. */
  finished: number;
}

const BATCH_BYTES = 64 * 1024;

export async function writeStream(
  res: ServerResponse, frames: Iterable<Frame>, faults: StreamFaults, signal: AbortSignal, meter: StreamMeter,
): Promise<StreamOutcome> {
  const paced = faults.tokensPerS > 0 && Number.isFinite(faults.tokensPerS);
  const msPerToken = paced ? 1000 / faults.tokensPerS : 0;
  const t0 = Date.now();
  let sent = 0;
  let batch: (string | Uint8Array)[] = [];
  let batchBytes = 0;

  /** Send the batch; `delivered`: wait until the kernel has it (before a deliberate reset). */
  const flush = async (delivered = false): Promise<boolean> => {
    if (!batch.length) return !signal.aborted;
    const chunk = batch.length === 1 ? batch[0]! : Buffer.concat(batch.map(toBuffer));
    batch = [];
    batchBytes = 0;
    return write(res, chunk, signal, meter, delivered);
  };

  for (const frame of frames) {
    if (signal.aborted) return 'aborted';
    if (frame.tokens > 0) {
      if (faults.resetAfterTokens !== undefined && sent >= faults.resetAfterTokens) {
        if (!(await flush(true))) return 'aborted';
        faults.beforeReset?.();
        resetConnection(res);
        return 'reset';
      }
      if (faults.errorAfterTokens !== undefined && sent >= faults.errorAfterTokens) {
        for (const f of faults.errorFrames()) batch.push(f.bytes);
        if (!(await flush())) return 'aborted';
        res.end();
        return 'errored';
      }
      if (paced) {
        if (!(await flush())) return 'aborted';
        if (!(await sleep(t0 + (sent + frame.tokens) * msPerToken - Date.now(), signal))) return 'aborted';
      }
    }
    batch.push(frame.bytes);
    batchBytes += frame.bytes.length;
    sent += frame.tokens;
    if (paced || batchBytes >= BATCH_BYTES) {
      if (!(await flush())) return 'aborted';
    }
  }
  if (!(await flush())) return 'aborted';
  res.end();
  meter.finished++;
  return 'finished';
}

/** Write; when the socket's buffers are full, wait for 'drain' (or the end of the request).
 *  `delivered` waits for the write's own callback instead: the bytes reached the kernel. */
async function write(
  res: ServerResponse, chunk: string | Uint8Array, signal: AbortSignal, meter: StreamMeter, delivered: boolean,
): Promise<boolean> {
  if (signal.aborted || res.destroyed) return false;
  meter.bytesWritten += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
  if (delivered) return writeDelivered(res, chunk, signal);
  if (res.write(chunk)) return true;
  meter.drainWaits++;
  meter.paused++;
  try {
    return await untilDrainOrAbort(res, signal);
  } finally {
    meter.paused--;
  }
}

function writeDelivered(res: ServerResponse, chunk: string | Uint8Array, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    res.write(chunk, (err) => {
      signal.removeEventListener('abort', onAbort);
      resolve(!err && !signal.aborted);
    });
  });
}

function untilDrainOrAbort(res: ServerResponse, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => (): void => {
      res.off('drain', onDrain);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onDrain = done(true);
    const onAbort = done(false);
    res.once('drain', onDrain);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A TCP reset mid-body: the client sees ECONNRESET / a premature close, never a clean end. */
function resetConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

function toBuffer(data: string | Uint8Array): Buffer {
  return typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
