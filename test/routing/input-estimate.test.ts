// The input estimate of a hold and of a charge without the provider's usage
// (lib/routing/input-estimate.ts): bytes / 4, but inline images and PDFs at their own figure, found
// by shape in every caller format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IMAGE_MAX_TOKENS, PDF_PAGE_TOKENS, estimateInputTokens } from '../../lib/routing/input-estimate.ts';
import type { CallerFormat } from '../../lib/formats/index.ts';

/** A PNG of width × height: its header, then filler, `bytes` long, base64. */
function png(width: number, height: number, bytes: number): string {
  const b = Buffer.alloc(bytes, 7);
  b.writeUInt32BE(0x89504e47, 0);
  b.writeUInt32BE(0x0d0a1a0a, 4);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b.toString('base64');
}
const pdf = (pages: number): string =>
  Buffer.from(`%PDF-1.4\n${Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page >> endobj\n`).join('')}${'%'.repeat(60_000)}`).toString('base64');

const IMAGE = png(1920, 1080, 300_000);   // ≥ 1.15 MP: the most an image counts
const SMALL = png(300, 150, 40_000);       // 300 × 150 / 750 = 60 tokens
const PDF = pdf(2);

/** The estimate of `body` as its JSON bytes, and what it would be counted as text alone. */
function estimate(body: unknown, format: CallerFormat = 'messages'): { tokens: number; text: number; bytes: number } {
  const raw = Buffer.from(JSON.stringify(body));
  return { tokens: estimateInputTokens(format, raw, body), text: Math.ceil(raw.length / 4), bytes: raw.length };
}

test('every caller format\'s inline image counts its own figure, not its base64 bytes / 4', () => {
  const bodies: Array<[string, unknown, string, CallerFormat?]> = [
    ['Chat image_url data URL', { messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE}` } }] }] }, `data:image/png;base64,${IMAGE}`],
    ['Responses input_image', { input: [{ role: 'user', content: [{ type: 'input_image', image_url: `data:image/png;base64,${IMAGE}` }] }] }, `data:image/png;base64,${IMAGE}`],
    ['Messages image block', { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE } }] }] }, IMAGE],
    ['Messages tool_result image', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE } }] }] }] }, IMAGE],
    ['Interactions image', { input: [{ type: 'image', data: IMAGE, mime_type: 'image/png' }] }, IMAGE, 'interactions'],
    ['a Gemini inlineData part', { input: [{ role: 'user', content: [{ inlineData: { mimeType: 'image/png', data: IMAGE } }] }] }, IMAGE, 'interactions'],
  ];
  for (const [name, body, media, format] of bodies) {
    const { tokens, bytes } = estimate(body, format);
    assert.equal(tokens, Math.ceil((bytes - media.length) / 4) + IMAGE_MAX_TOKENS, name);
    assert.ok(tokens < 1_700, `${name}: ${tokens}`);
  }
  const small = estimate({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: SMALL } }] }] });
  assert.equal(small.tokens, Math.ceil((small.bytes - SMALL.length) / 4) + 60, 'width × height / 750 from the header');
});

test('a PDF counts its pages; audio and text documents stay text; a small body, or one with no sign of media, is bytes / 4 without a walk', () => {
  const asFile = estimate({ input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: `data:application/pdf;base64,${PDF}` }] }] });
  assert.equal(asFile.tokens, Math.ceil((asFile.bytes - `data:application/pdf;base64,${PDF}`.length) / 4) + 2 * PDF_PAGE_TOKENS);
  const asDocument = estimate({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }] }] });
  assert.equal(asDocument.tokens, Math.ceil((asDocument.bytes - PDF.length) / 4) + 2 * PDF_PAGE_TOKENS);
  const audio = estimate({ input: [{ type: 'audio', data: IMAGE, mime_type: 'audio/wav' }] }, 'interactions');
  assert.equal(audio.tokens, audio.text, 'audio is not discounted');
  const text = estimate({ messages: [{ role: 'user', content: 'x'.repeat(200_000) }] });
  assert.equal(text.tokens, text.text);
  // No marker in the bytes, no walk: a parsed body that would hold an image is not looked at.
  const raw = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'y'.repeat(100_000) }] }));
  assert.equal(estimateInputTokens('messages', raw, { data: IMAGE, media_type: 'image/png' }), Math.ceil(raw.length / 4));
  // Under the walk's threshold even a (small) image is counted as text: it weighs little either way.
  const tiny = { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(10, 10, 3_000) } }] }] };
  assert.equal(estimate(tiny).tokens, estimate(tiny).text);
});

test('a body nested deeper than recursion goes is walked without overflowing the stack', () => {
  let deep: unknown = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE } };
  for (let i = 0; i < 20_000; i++) deep = [deep];
  // The raw bytes stand in (JSON.stringify itself would overflow at this depth): their size and their marker.
  const raw = Buffer.from(`base64${' '.repeat(IMAGE.length + 100_000)}`);
  assert.equal(estimateInputTokens('messages', raw, deep), Math.ceil((raw.length - IMAGE.length) / 4) + IMAGE_MAX_TOKENS);
});
