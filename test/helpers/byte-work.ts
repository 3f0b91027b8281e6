// How much byte work a piece of framing code does, counted instead of timed: the bytes it allocates
// through Buffer.allocUnsafe (Buffer.concat allocates through it too) and the bytes its native
// searches for one byte (`indexOf`, `lastIndexOf` on a Buffer) walk over. A framer that copies or
// rescans what it holds once per chunk shows a count that grows with the square of the stream.

export interface ByteWork { allocated: number; searched: number }

export function countByteWork(run: () => void): ByteWork {
  const work: ByteWork = { allocated: 0, searched: 0 };
  const { allocUnsafe } = Buffer;
  const { indexOf, lastIndexOf } = Buffer.prototype;
  Buffer.allocUnsafe = (size: number) => { work.allocated += size; return allocUnsafe(size); };
  Buffer.prototype.indexOf = function (this: Buffer, value: any, from?: any, encoding?: any): number {
    const at = indexOf.call(this, value, from, encoding);
    const start = typeof from === 'number' ? from : 0;
    work.searched += (at === -1 ? this.length : at + 1) - start;
    return at;
  };
  Buffer.prototype.lastIndexOf = function (this: Buffer, value: any, from?: any, encoding?: any): number {
    const at = lastIndexOf.call(this, value, from, encoding);
    const start = typeof from === 'number' ? from : this.length - 1;
    work.searched += start - (at === -1 ? -1 : at);
    return at;
  };
  try { run(); } finally {
    Buffer.allocUnsafe = allocUnsafe;
    Buffer.prototype.indexOf = indexOf;
    Buffer.prototype.lastIndexOf = lastIndexOf;
  }
  return work;
}
