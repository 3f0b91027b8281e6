// The error event each caller format ends a broken stream with (after commit the status is sent, so
// a failure becomes the format's own error event, never a fake clean end a client would trust). Used on passthrough
// streams, whose encoders never ran; translated streams get theirs from the encoder.
import type { FormatName } from '../ir.ts';
import { formatFrame } from '../sse.ts';

export function errorFrame(format: FormatName, code: string, message: string): string {
  switch (format) {
    case 'responses':
      // Both recorded shapes at once: the flat SDK type and the nested wire form the SDK raises on.
      return formatFrame(JSON.stringify({ type: 'error', code, message, param: null, error: { type: 'server_error', code, message, param: null } }), 'error');
    case 'chat':
      return formatFrame(JSON.stringify({ error: { message, type: 'server_error', param: null, code } }));
    case 'messages':
      return formatFrame(JSON.stringify({ type: 'error', error: { type: 'api_error', message, code } }), 'error');
    case 'interactions':
      return formatFrame(JSON.stringify({ error: { code, message }, event_type: 'error' }), 'error');
    case 'vertex':
      return formatFrame(JSON.stringify({ error: { code: 500, message, status: 'INTERNAL' } }));
  }
}
