// Errors in the Responses format: OpenAI's envelope, and the error event a broken stream ends with.
import { formatFrame } from '../../sse.ts';

export { openaiErrorBody as responsesErrorBody } from '../openai-shared.ts';

/** Both recorded shapes at once: the flat SDK type and the nested wire form the SDK raises on. */
export const responsesErrorFrame = (code: string, message: string): string => formatFrame(JSON.stringify({
  type: 'error', code, message, param: null, error: { type: 'server_error', code, message, param: null },
}), 'error');
