// How each Gemini generation takes thinking: levels from Gemini 3 on, budgets on 2.5 (within the
// model's ceiling), none on 2.0 and earlier. The request encoders ask this with the IR's model id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MODELS } from '../../lib/catalog/catalog.ts';
import { geminiThinking } from '../../lib/catalog/gemini-thinking.ts';

const ALL = ['minimal', 'low', 'medium', 'high'];
const NO_MINIMAL = ['low', 'medium', 'high'];

test('the catalog\'s Gemini models: 3.x levels (no MINIMAL on Pro and Flash 3.7+), 2.5 Flash a budget up to 24576, 2.0 no thinking', () => {
  const gemini = DEFAULT_MODELS.filter((entry) => entry.family === 'vendor_b').map((entry) => entry.id);
  assert.deepEqual(Object.fromEntries(gemini.map((id) => [id, geminiThinking(id)])), {
    'gemini-3.5-flash': { by: 'level', levels: ALL },
    'gemini-3.8-flash': { by: 'level', levels: NO_MINIMAL },
    'gemini-3.1-pro-preview': { by: 'level', levels: NO_MINIMAL },
    'gemini-2.5-flash': { by: 'budget', maxBudget: 24_576, levels: ALL },
    'gemini-2.0-flash': { by: 'none' },
  });
});

test('other ids: 2.5 Pro\'s ceiling is 32768, Flash-Lite\'s 24576; 1.5 does not think; an id naming no generation takes levels', () => {
  assert.deepEqual(geminiThinking('gemini-2.5-pro'), { by: 'budget', maxBudget: 32_768, levels: ALL });
  assert.deepEqual(geminiThinking('gemini-2.5-flash-lite'), { by: 'budget', maxBudget: 24_576, levels: ALL });
  assert.deepEqual(geminiThinking('gemini-2.0-flash-lite'), { by: 'none' });
  assert.deepEqual(geminiThinking('gemini-1.5-pro'), { by: 'none' });
  assert.deepEqual(geminiThinking('gemini-3-flash-preview'), { by: 'level', levels: ALL });
  assert.deepEqual(geminiThinking('gemini-3-pro-preview'), { by: 'level', levels: NO_MINIMAL });
  assert.deepEqual(geminiThinking('gemini-10.0-ultra'), { by: 'level', levels: NO_MINIMAL });
  assert.deepEqual(geminiThinking('my-tuned-model'), { by: 'level', levels: NO_MINIMAL });
});
