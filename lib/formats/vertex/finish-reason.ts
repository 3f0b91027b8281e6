// Vertex finishReason ⇄ IR stop reason.
import type { IRStopReason } from '../../ir.ts';

/** Marks a response whose prompt was blocked (promptFeedback.blockReason, no candidates). */
export const PROMPT_BLOCKED = 'PROMPT_BLOCKED';

const FILTERED = new Set([
  'SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION',
  PROMPT_BLOCKED,
]);

export function stopFromFinish(reason: string, sawToolCall: boolean): IRStopReason {
  if (reason === 'MAX_TOKENS') return 'max_tokens';
  if (FILTERED.has(reason)) return 'content_filter';
  if (reason === 'MALFORMED_FUNCTION_CALL' || reason === 'UNEXPECTED_TOOL_CALL') return 'error';
  return sawToolCall ? 'tool_use' : 'end'; // STOP, OTHER, LANGUAGE, …
}

export function finishFromStop(reason: IRStopReason): string {
  switch (reason) {
    case 'max_tokens': return 'MAX_TOKENS';
    case 'content_filter': return 'SAFETY';
    case 'error': return 'OTHER';
    default: return 'STOP';
  }
}
