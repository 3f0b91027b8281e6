// How Claude and OpenAI models take reasoning, by model id (lib/catalog/claude-thinking.ts,
// openai-reasoning.ts), and how an effort is held to what a model takes (effort-budget.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MODELS } from '../../lib/catalog/catalog.ts';
import { claudeThinking } from '../../lib/catalog/claude-thinking.ts';
import { openaiEfforts } from '../../lib/catalog/openai-reasoning.ts';
import { clampEffort } from '../../lib/formats/effort-budget.ts';

const ids = (family: string) => DEFAULT_MODELS.filter((entry) => entry.family === family).map((entry) => entry.id);
const ADAPTIVE = { by: 'adaptive', efforts: ['low', 'medium', 'high', 'xhigh', 'max'] };

test('the catalog\'s Claude models: Opus 4.8 adaptive only, Sonnet 4.6 and Haiku 4.5 budgets', () => {
  assert.deepEqual(Object.fromEntries(ids('vendor_c').map((id) => [id, claudeThinking(id)])), {
    'claude-opus-4-8': ADAPTIVE,
    'claude-sonnet-4-6': { by: 'budget' },
    'claude-haiku-4-5': { by: 'budget' },
  });
});

test('other Claude ids: Opus 4.7 and 5 adaptive; Opus 4.6, dated ids and unknown ids budgets', () => {
  assert.deepEqual(claudeThinking('claude-opus-4-7'), ADAPTIVE);
  assert.deepEqual(claudeThinking('claude-opus-5'), ADAPTIVE);
  assert.deepEqual(claudeThinking('claude-opus-4-6'), { by: 'budget' });
  assert.deepEqual(claudeThinking('claude-opus-4-20250514'), { by: 'budget' }, 'a date is no minor version');
  assert.deepEqual(claudeThinking('claude-3-7-sonnet-20250219'), { by: 'budget' });
  assert.deepEqual(claudeThinking('my-claude'), { by: 'budget' });
});

test('the catalog\'s OpenAI models take none to xhigh, not minimal; GPT-5.1 and GPT-5 their own; others as sent', () => {
  const current = ['none', 'low', 'medium', 'high', 'xhigh'];
  assert.deepEqual(Object.fromEntries(ids('vendor_a').map((id) => [id, openaiEfforts(id)])), {
    'gpt-5.5': current, 'gpt-5.4': current, 'gpt-5.4-mini': current, 'gpt-5.4-nano': current,
  });
  assert.deepEqual(openaiEfforts('gpt-5.1'), ['none', 'low', 'medium', 'high']);
  assert.deepEqual(openaiEfforts('gpt-5-mini'), ['minimal', 'low', 'medium', 'high']);
  assert.equal(openaiEfforts('o3'), undefined);
  assert.equal(openaiEfforts('gpt-4.1'), undefined);
});

test('clampEffort: a level taken as it is, else the highest taken below it, else the lowest taken (never none)', () => {
  const gpt = ['none', 'low', 'medium', 'high', 'xhigh'] as const;
  assert.equal(clampEffort('minimal', gpt), 'low');
  assert.equal(clampEffort('max', gpt), 'xhigh');
  assert.equal(clampEffort('medium', gpt), 'medium');
  assert.equal(clampEffort('xhigh', ['minimal', 'low', 'medium', 'high']), 'high');
  assert.equal(clampEffort('minimal', ['low', 'medium', 'high']), 'low');
  assert.equal(clampEffort('minimal', ['minimal', 'low', 'medium', 'high']), 'minimal');
});
