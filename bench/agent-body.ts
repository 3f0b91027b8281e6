// A coding agent's turn: a streamed Responses request whose body carries the whole conversation
// (≈ 225 KB: instructions, 300 input items with escaped text, 30 tools), the key's default
// `start_within` (agents send no gateway field). What a large body costs the gateway: reading,
// parsing and validating it, and forwarding its bytes with the route's members set.
// Not part of `make bench`'s throughput table: `npx tsx bench/agent-body.ts`.
import { isMain } from './processes.ts';
import { runMain } from './harness.ts';
import { checkResponsesStream, MODEL, type Scenario } from './scenario.ts';

const input = Array.from({ length: 300 }, (_, i) => ({
  type: 'message', role: i % 2 ? 'assistant' : 'user',
  content: [{ type: i % 2 ? 'output_text' : 'input_text', text: 'const s = "quoted" \\ path\n'.repeat(20) + i }],
}));
const tools = Array.from({ length: 30 }, (_, i) => ({
  type: 'function', name: `tool${i}`, description: 'Does one thing well. '.repeat(10),
  parameters: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'number' } } }, required: ['a'] },
}));
const body = { model: MODEL, instructions: 'You are a coding agent. '.repeat(200), input, tools, stream: true };

/** A copy of the agent's body with `text` appended to its last user message (where the simulator
 *  reads a `#sim` directive; the minimal upstream finds its marks anywhere). */
export function agentBodyWith(text: string): Record<string, any> {
  const copy = structuredClone(body) as Record<string, any>;
  copy.input.findLast((item: { role: string }) => item.role === 'user').content[0].text += ` ${text}`;
  return copy;
}

export const agentBody: Scenario = {
  name: 'agent-body',
  title: 'Responses, stream:true, a coding agent\'s 225 KB body, no gateway field (passthrough SSE)',
  gateway: { path: '/v1/responses', body },
  upstream: { path: '/v1/responses', body },
  checkBody: checkResponsesStream,
  flexReason: 'standard_requested',
  target: 0.7,
};

if (isMain(import.meta.url)) runMain([agentBody]);
