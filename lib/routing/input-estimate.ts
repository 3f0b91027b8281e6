// The input a request is estimated at before any provider counted it: its hold's input (admission)
// and what a committed answer without the provider's usage is charged for its prompt. The body's
// bytes / 4 (text, JSON and all), except that inline media count their own figure instead of their
// base64 bytes: a 5 MB screenshot is ≈ 1,600 tokens to a provider, not 1.7 million (which held, and
// on a broken stream charged, ≈ 1,000 × what the provider bills). count_tokens' estimate
// (lib/http/count-tokens.ts) counts media the same way.
//
// Media are found by shape, in every caller format: a base64 data URL (`data:image/png;base64,…`:
// Chat image_url, Responses input_image / input_file), or an object whose `data` string sits beside
// its media type (`media_type` Messages, `mime_type` Interactions, `mimeType` Gemini inlineData).
// Images count width × height / 750 from their header, at most IMAGE_MAX_TOKENS; PDFs
// PDF_PAGE_TOKENS a page; other media (audio, text documents) keep their bytes / 4. A body under
// MEDIA_SCAN_MIN_BYTES, or one without a sign of media in its bytes (MEDIA_MARKER), is not walked:
// what media a small body could hold weighs little as text.
import type { CallerFormat } from '../formats/index.ts';

/** An image of unknown size, and the most any image costs: Anthropic scales an image down to about
 *  1.15 megapixels (long edge 1568 px) and counts width × height / 750, so ≈ 1,600 at most (OpenAI's
 *  and Gemini's counts of one image are lower). */
export const IMAGE_MAX_TOKENS = 1_600;
/** A PDF page: Anthropic's 1,500–3,000 text tokens per page, at the dense end (each page is also
 *  shown to the model as an image, which the text figure's upper end stands in for). */
export const PDF_PAGE_TOKENS = 3_000;
/** A PDF whose pages cannot be counted (page objects inside compressed object streams, a URL or
 *  file reference) counts one page per started 100 KB of it, and one page when its size is unknown. */
const PDF_BYTES_PER_UNCOUNTED_PAGE = 100_000;
/** Bodies smaller than this are estimated at bytes / 4 without a walk (the hot path's bodies). */
const MEDIA_SCAN_MIN_BYTES = 32 * 1024;
/** A string shorter than this is not looked at as media. */
const MEDIA_MIN_CHARS = 1_024;

/** What the media of a body weigh: the characters they take in it, and the tokens they count. */
interface Media { chars: number; tokens: number }

/** Inline media in a Responses, Chat or Messages body always say `base64` (a data URL, a base64
 *  source): a body without it is not walked (a coding agent's 200 KB of text, whose walk would
 *  cost ≈ 150 µs; the search costs 2). An Interactions body's media say only `mime_type`, whose
 *  search costs as much as the walk: such a body is walked whenever it is large enough. */
const MEDIA_MARKER = 'base64';

/** The estimated input tokens of a `format` request body: its `bytes` (the raw body), parsed as `body`. */
export function estimateInputTokens(format: CallerFormat, bytes: Buffer, body: unknown): number {
  const size = bytes.length;
  if (size < MEDIA_SCAN_MIN_BYTES || (format !== 'interactions' && !bytes.includes(MEDIA_MARKER))) return Math.ceil(size / 4);
  const media: Media = { chars: 0, tokens: 0 };
  // An explicit stack: a parsed body may nest deeper than recursion should go.
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (value.startsWith('data:')) dataUrl(value, media);
    } else if (Array.isArray(value)) {
      for (const item of value) if (isMediaCandidate(item)) stack.push(item);
    } else if (value !== null && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      const type = o.media_type ?? o.mime_type ?? o.mimeType;
      for (const k in o) {
        const v = o[k];
        if (k === 'data' && typeof type === 'string' && typeof v === 'string' && v.length >= MEDIA_MIN_CHARS) count(type, v, v.length, media);
        else if (isMediaCandidate(v)) stack.push(v);
      }
    }
  }
  return Math.ceil(Math.max(0, size - media.chars) / 4) + media.tokens;
}

/** An object or array (which may hold media), or a string long enough to be one. */
const isMediaCandidate = (v: unknown): boolean => (typeof v === 'object' && v !== null) || (typeof v === 'string' && v.length >= MEDIA_MIN_CHARS);

/** A `data:<type>;base64,<payload>` string. */
function dataUrl(url: string, media: Media): void {
  const comma = url.indexOf(',');
  if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) return;
  count(url.slice(5, url.indexOf(';')), url.slice(comma + 1), url.length, media);
}

/** An image or PDF of `chars` characters in the body counts its own tokens; anything else stays text. */
function count(type: string, base64: string, chars: number, media: Media): void {
  if (type.startsWith('image/')) media.tokens += imageTokens(base64);
  else if (type === 'application/pdf') media.tokens += pdfPages(base64) * PDF_PAGE_TOKENS;
  else return;
  media.chars += chars;
}

/** width × height / 750 when the image's header gives its size, at most IMAGE_MAX_TOKENS. */
export function imageTokens(base64: string): number {
  const size = imageSize(Buffer.from(base64.slice(0, 96_000), 'base64'));
  return size ? Math.min(IMAGE_MAX_TOKENS, Math.max(1, Math.ceil((size[0] * size[1]) / 750))) : IMAGE_MAX_TOKENS;
}

/** [width, height] from a PNG, GIF, JPEG or WebP header; undefined for anything else. */
export function imageSize(b: Buffer): [number, number] | undefined {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') {
    return [b.readUInt32BE(16), b.readUInt32BE(20)];
  }
  if (b.length >= 10 && b.toString('latin1', 0, 4) === 'GIF8') return [b.readUInt16LE(6), b.readUInt16LE(8)];
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = b.toString('latin1', 12, 16);
    if (chunk === 'VP8X') return [1 + b.readUIntLE(24, 3), 1 + b.readUIntLE(27, 3)];
    if (chunk === 'VP8 ') return [b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff];
    if (chunk === 'VP8L') { const bits = b.readUInt32LE(21); return [1 + (bits & 0x3fff), 1 + ((bits >> 14) & 0x3fff)]; }
    return undefined;
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    // Segments up to the first start-of-frame (SOF0–SOF15 but DHT C4, JPG C8, DAC CC), which holds the size.
    for (let at = 2; at + 9 <= b.length && b[at] === 0xff;) {
      const marker = b[at + 1]!;
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return [b.readUInt16BE(at + 7), b.readUInt16BE(at + 5)];
      }
      at += 2 + b.readUInt16BE(at + 2);
    }
  }
  return undefined;
}

/** A PDF's pages: its page objects (`/Type /Page`) when they are readable, else one per started
 *  100 KB; one for a PDF given by URL or file id (its size unknown). */
export function pdfPages(base64: string | undefined): number {
  if (!base64) return 1;
  const pdf = Buffer.from(base64, 'base64');
  const pages = pdf.toString('latin1').match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
  return pages || Math.max(1, Math.ceil(pdf.length / PDF_BYTES_PER_UNCOUNTED_PAGE));
}
