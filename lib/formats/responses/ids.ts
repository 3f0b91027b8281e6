// Ids in OpenAI's shapes. Output item ids derive from the response id and the item's position, so
// the streamed items and the terminal response object name the same item the same way without
// sharing state.
import { newId } from '../openai-shared.ts';

export const responseId = (id: string): string =>
  !id ? newId('resp_') : id.startsWith('resp_') ? id : `resp_${id}`;

export function itemId(prefix: 'msg_' | 'rs_' | 'fc_', respId: string, outputIndex: number): string {
  return `${prefix}${respId.startsWith('resp_') ? respId.slice(5) : respId}_${outputIndex}`;
}
