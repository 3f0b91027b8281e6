// Errors in the Interactions format: Google's envelope, and the error event a broken stream ends with.
import { formatFrame } from '../../sse.ts';

export { googleErrorBody as interactionsErrorBody } from '../google-shared.ts';

export const interactionsErrorFrame = (code: string, message: string): string =>
  formatFrame(JSON.stringify({ error: { code, message }, event_type: 'error' }), 'error');
