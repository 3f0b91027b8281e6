// Interaction status ⇄ IR stop reason.
import type { IRStopReason } from '../../ir.ts';

export function stopFromStatus(status: unknown, sawToolCall: boolean): IRStopReason {
  switch (status) {
    case 'requires_action': return 'tool_use';
    case 'incomplete':
    case 'budget_exceeded': return 'max_tokens';
    case 'failed':
    case 'cancelled': return 'error';
    default: return sawToolCall ? 'tool_use' : 'end';
  }
}

/** A filtered answer is `incomplete`, the status for an answer cut short (Interactions has no
 *  safety status); a model refusal is a completed answer whose text says so. */
export function statusFromStop(reason: IRStopReason, hasToolCall: boolean): string {
  if (reason === 'error') return 'failed';
  if (reason === 'max_tokens' || reason === 'content_filter') return 'incomplete';
  return reason === 'tool_use' || hasToolCall ? 'requires_action' : 'completed';
}
