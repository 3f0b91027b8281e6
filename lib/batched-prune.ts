// A retention prune that deletes in batches: `batch` deletes at most `rows` expired rows and says
// how many, and the prune runs batches until one comes back short, with the event loop free
// between them. One statement over an hour of records (SQLite answers synchronously) held every
// stream and request of the process for over a second, and one over a large backlog could outrun
// PostgreSQL's statement_timeout and be rolled back at every prune. It stops between batches once
// closed or once `usable` says the connection is going (the rest is the next prune's), and close()
// waits for a running one, so the store is never closed under one of its statements.
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface BatchedPrune {
  /** Deletes what was issued or recorded before `beforeMs`; resolves with how many rows. */
  prune(beforeMs: number): Promise<number>;
  /** Stops running prunes between batches and waits for them. */
  close(): Promise<void>;
}

export function batchedPrune(batch: (beforeMs: number) => number | Promise<number>, rows: number, usable: () => boolean): BatchedPrune {
  let closing = false;
  const running = new Set<Promise<unknown>>();
  const all = async (beforeMs: number): Promise<number> => {
    let deleted = 0;
    for (;;) {
      if (closing || !usable()) return deleted;
      const changes = await batch(beforeMs);
      deleted += changes;
      if (changes < rows) return deleted;
      await nextTurn();
    }
  };
  return {
    prune(beforeMs) {
      const run = all(beforeMs);
      const settled = run.then(() => {}, () => {});
      running.add(settled);
      void settled.then(() => running.delete(settled));
      return run;
    },
    async close() {
      closing = true;
      await Promise.all(running);
    },
  };
}
