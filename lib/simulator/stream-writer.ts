// Writes a route's frames to the socket: paced at tokens/s when asked, and able to fail on cue
// after N tokens — a connection reset (`reset_after_tokens`) or the format's own in-stream error
// (`error_after_tokens`). Unpaced frames are batched into few socket writes (benchmarks need the
// simulator to be cheap); a batch is flushed before every wait and before a fault.
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

const BATCH_BYTES = 64 * 1024;

export async function writeStream(
  res: ServerResponse, frames: Iterable<Frame>, faults: StreamFaults, signal: AbortSignal,
): Promise<StreamOutcome> {
  const paced = faults.tokensPerS > 0 && Number.isFinite(faults.tokensPerS);
  const msPerToken = paced ? 1000 / faults.tokensPerS : 0;
  const t0 = Date.now();
  let sent = 0;
  let batch: (string | Uint8Array)[] = [];
  let batchBytes = 0;

  const flush = async (): Promise<boolean> => {
    if (!batch.length) return !signal.aborted;
    const chunk = batch.length === 1 ? batch[0]! : Buffer.concat(batch.map(toBuffer));
    batch = [];
    batchBytes = 0;
    return write(res, chunk, signal);
  };

  for (const frame of frames) {
    if (signal.aborted) return 'aborted';
    if (frame.tokens > 0) {
      if (faults.resetAfterTokens !== undefined && sent >= faults.resetAfterTokens) {
        if (!(await flush())) return 'aborted';
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
  return 'finished';
}

/** Write and wait until the bytes reached the kernel (and past back-pressure). */
function write(res: ServerResponse, chunk: string | Uint8Array, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted || res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    res.write(chunk, (err) => {
      signal.removeEventListener('abort', onAbort);
      resolve(!err && !signal.aborted);
    });
  });
}

/** A TCP reset mid-body: the client sees ECONNRESET / a premature close, never a clean end. */
function resetConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

function toBuffer(c: string | Uint8Array): Buffer {
  return typeof c === 'string' ? Buffer.from(c) : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
}
