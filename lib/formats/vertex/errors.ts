// Errors in the Vertex format: Google's envelope, and the data-only error chunk a broken stream
// ends with (a numeric code, as Vertex streams carry it).
import { formatFrame } from '../../sse.ts';

export { googleErrorBody as vertexErrorBody } from '../google-shared.ts';

export const vertexErrorFrame = (_code: string, message: string): string =>
  formatFrame(JSON.stringify({ error: { code: 500, message, status: 'INTERNAL' } }));
