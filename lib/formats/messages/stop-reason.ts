// Anthropic stop_reason ⇄ IR stop reason.
import type { IRStopReason } from '../../ir.ts';

export function stopFromAnthropic(reason: unknown): IRStopReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'tool_use':
      return 'tool_use';
    case 'refusal': // Anthropic's streaming classifiers stopped the answer: a filter, not refusal text
      return 'content_filter';
    default: // end_turn, stop_sequence, pause_turn
      return 'end';
  }
}

export function stopToAnthropic(reason: IRStopReason): string {
  switch (reason) {
    case 'max_tokens': return 'max_tokens';
    case 'tool_use': return 'tool_use';
    case 'refusal': // the refusal's words stay an ordinary text block: Anthropic has no refusal field
    case 'content_filter': return 'refusal';
    default: return 'end_turn';
  }
}

const ANTHROPIC_ERROR_TYPES = new Set([
  'invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error',
  'request_too_large', 'rate_limit_error', 'api_error', 'timeout_error', 'overloaded_error',
]);

/** The error.type an Anthropic SDK expects for an IR error code (which may already be one). */
export function anthropicErrorType(code: string): string {
  if (ANTHROPIC_ERROR_TYPES.has(code)) return code;
  if (/overload|unavailable|capacity/i.test(code)) return 'overloaded_error';
  if (/rate_limit|resource_exhausted|too_many/i.test(code)) return 'rate_limit_error';
  if (/deadline|timeout/i.test(code)) return 'timeout_error';
  if (/invalid|unsupported/i.test(code)) return 'invalid_request_error';
  return 'api_error';
}
