// The responses-stream request from a managed organization: the same passthrough SSE, plus one
// atomic admission (hold) and one settlement in the SQLite ledger on every request. Baselines send
// the same upstream body as responses-stream.
import { isMain } from './processes.ts';
import { runMain } from './harness.ts';
import { responsesStream } from './responses-stream.ts';
import type { Scenario } from './scenario.ts';

export const managedStream: Scenario = {
  ...responsesStream,
  name: 'managed-stream',
  title: 'Responses, stream:true, "now", managed organization (admission + settlement per request)',
  org: 'managed',
  target: 0.45,
};

if (isMain(import.meta.url)) runMain([managedStream]);
