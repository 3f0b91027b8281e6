// Whether the process that placed holds is gone, so that a process starting under the same
// instance id may release them before their lease runs out (crash recovery in seconds). A live
// process's holds must never be released that way: a second `npm start` on the same PORT (which
// then fails to listen) or a restart while the old process still drains shares its instance id,
// and releasing that process's holds let its organization past its concurrency and charged its
// streams their last renewal's upper-bound estimate instead of their cost.
//
// Every process keeps a row (ledger_processes: its id, host, pid and a heartbeat refreshed with
// each lease renewal). A predecessor is provably gone when
//   - its heartbeat is older than the lease: it renews nothing any more, wherever it ran (its
//     holds would lapse by now or soon anyway), or
//   - it ran on this host (the same kernel and pid namespace) and its pid is no longer a live
//     process there, or is this process's own pid (reused: two live processes never share one).
// A predecessor with no row (an earlier build, or one that died between listening and its first
// heartbeat) is not provably gone: its holds wait for their lease, as any dead process's do. A pid
// reused by an unrelated process reads as alive: the lease decides then too. Never the other way.
//
// The row also carries the fingerprint of the secret the process seals provider keys with (written
// at its registration, never by a heartbeat) and whether it stopped (its ledger closed at shutdown),
// so that processes sealing with different secrets are seen (sealPeers).
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { LiveProcess } from './types.ts';

/** Where a process runs and its pid there: what its successors check it by. */
export interface ProcessMark { host: string; pid: number }

/** A predecessor of this instance as the ledger stores it (null columns: it never registered). */
export interface PredecessorRow { process_id: string; host: string | null; pid: number | null; heartbeat_at_ms: number | null }

/** A pid means the same process only within one pid namespace of one booted kernel: the host key
 *  is the hostname plus, on Linux, the boot id and the pid namespace (a container restarted under
 *  the same hostname gets a new namespace, so its successor does not read an unrelated pid there).
 *  Elsewhere the hostname alone. */
export function thisHost(): string {
  const name = hostname();
  try {
    return `${name}/${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}/${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return name;
  }
}

/** Whether `pid` is a live process on this host (a zombie, dead but not yet reaped, is not). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';   // EPERM: alive, someone else's
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true;   // no /proc: kill's answer stands
  }
}

/** See the head of this file. `now` is the successor's clock; the heartbeat the predecessor's. */
export function predecessorGone(row: PredecessorRow, me: ProcessMark, nowMs: number, leaseMs: number, alive = pidAlive): boolean {
  if (row.heartbeat_at_ms === null || row.host === null || row.pid === null) return false;
  if (row.heartbeat_at_ms + leaseMs <= nowMs) return true;
  if (row.host !== me.host || row.pid <= 0) return false;
  return row.pid === me.pid || !alive(row.pid);
}

/** A process's row as the ledger stores it (both adapters read the same columns). */
export interface ProcessRow {
  process_id: string; instance_id: string; host: string; pid: number; heartbeat_at_ms: number; seal_fingerprint: string | null;
}

const liveProcessOf = (row: ProcessRow, selfId: string): LiveProcess => ({
  processId: row.process_id, instanceId: row.instance_id, host: row.host, pid: row.pid, heartbeatAtMs: row.heartbeat_at_ms,
  sealFingerprint: row.seal_fingerprint, self: row.process_id === selfId,
});

/** The rows of processes still running (heartbeat within the lease, not stopped: the query's), but
 *  those provably gone: on this host, their pid dead (a process killed, whose heartbeat has not
 *  lapsed yet). */
export function runningProcesses(rows: readonly ProcessRow[], selfId: string, me: ProcessMark, alive = pidAlive): LiveProcess[] {
  return rows
    .filter((row) => row.process_id === selfId || row.host !== me.host || row.pid <= 0 || alive(row.pid))
    .map((row) => liveProcessOf(row, selfId));
}

/** How the other running processes' sealing secrets compare with this one's (fingerprints,
 *  store/secrets.ts): `different` seal with another secret, `onPrevious` of them with one of this
 *  process's previous secrets (a rotation under way: they have not restarted yet), `unknown` do not
 *  say (an earlier build). A reseal seals every key with this process's secret: only when no other
 *  process seals differently or unknown can every one of them still open every key. */
export function sealPeers(processes: readonly LiveProcess[], mine: { current: string; previous: readonly string[] }) {
  const others = processes.filter((p) => !p.self);
  const unknown = others.filter((p) => p.sealFingerprint === null).length;
  const different = others.filter((p) => p.sealFingerprint !== null && p.sealFingerprint !== mine.current);
  const onPrevious = different.filter((p) => mine.previous.includes(p.sealFingerprint!)).length;
  return { others: others.length, different: different.length, onPrevious, unknown };
}
