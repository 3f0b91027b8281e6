// Errors in the Chat Completions format: OpenAI's envelope, and the data-only error chunk a broken
// stream ends with.
import { formatFrame } from '../../sse.ts';

export { openaiErrorBody as chatErrorBody } from '../openai-shared.ts';

export const chatErrorFrame = (code: string, message: string): string =>
  formatFrame(JSON.stringify({ error: { message, type: 'server_error', param: null, code } }));
