// Finding where a JSON array or object ends without parsing it: strings are jumped over with a
// native search for their closing quote, so the cost follows the number of values, not the bytes
// of text inside them. Used to read a passthrough's usage frame, and the few members a decoder
// reads of a long event, without decoding the bulk around them (a Responses terminal event repeats
// the request's instructions and tools and the whole output).

/** Index just past the array or object that opens at `start` ('[' or '{'); -1 if it never closes. */
export function endOfJsonValue(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 34 /* " */) {
      const end = stringEndText(text, i);
      if (end === -1) return -1;
      i = end - 1;
    } else if (code === 91 /* [ */ || code === 123 /* { */) depth++;
    else if (code === 93 /* ] */ || code === 125 /* } */) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Index just past the string whose opening quote is at `at`; -1 if it never closes. */
function stringEndText(text: string, at: number): number {
  let j = text.indexOf('"', at + 1);
  while (j !== -1 && isEscaped(text, j)) j = text.indexOf('"', j + 1);
  return j === -1 ? -1 : j + 1;
}

/** True when the quote at `at` is preceded by an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let k = at - 1; text.charCodeAt(k) === 92 /* \ */; k--) backslashes++;
  return backslashes % 2 === 1;
}

/** `text` with the first value of `key` (an array or object, written `"key":[` or `"key":{`)
 *  emptied, or `text` itself when the key is not there. */
export function withoutBulk(text: string, key: string): string {
  const at = text.indexOf(key);
  if (at === -1) return text;
  const open = at + key.length - 1;
  const end = endOfJsonValue(text, open);
  if (end === -1) return text;
  return text.slice(0, open + 1) + text.slice(end - 1);
}

/** Which members of an object to take: `true` parses the member's value, a nested spec picks
 *  inside a member that is an object. */
export interface MemberPick { readonly [key: string]: true | MemberPick }

const isSpaceCode = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

function skipSpaceText(text: string, i: number): number {
  while (i < text.length && isSpaceCode(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the JSON value that starts at `i` (a scalar ends at the next , } ] or space). */
function valueEndText(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 34 /* " */) return stringEndText(text, i);
  if (c === 123 /* { */ || c === 91 /* [ */) return endOfJsonValue(text, i);
  let j = i;
  for (; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === 44 || d === 125 || d === 93 || isSpaceCode(d)) break;
  }
  return j > i ? j : -1;
}

/** The members `spec` names of the object that opens at `at` (whitespace before it allowed),
 *  each parsed with JSON.parse, every other member skipped unparsed: a frame's few figures read
 *  without decoding the bulk around them (a Responses terminal event repeats the instructions,
 *  the tools and the whole output). A repeated key takes its last value, as JSON.parse does.
 *  undefined when the text there is not an object or ends early; a picked value that is not JSON
 *  throws, as JSON.parse does. Skipped values are only delimited, not validated. */
export function pickMembers(text: string, spec: MemberPick, at = 0): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  return pickInto(text, spec, at, out) === -1 ? undefined : out;
}

/** pickMembers' walk: fills `out`, returns the index just past the object (-1: not one). */
function pickInto(text: string, spec: MemberPick, at: number, out: Record<string, unknown>): number {
  let i = skipSpaceText(text, at);
  if (text.charCodeAt(i) !== 123 /* { */) return -1;
  i = skipSpaceText(text, i + 1);
  if (text.charCodeAt(i) === 125 /* } */) return i + 1;
  const keys = Object.keys(spec);
  for (;;) {
    if (text.charCodeAt(i) !== 34) return -1;
    const keyEnd = stringEndText(text, i);
    if (keyEnd === -1) return -1;
    const key = keyAt(text, i, keyEnd, keys);
    i = skipSpaceText(text, keyEnd);
    if (text.charCodeAt(i) !== 58 /* : */) return -1;
    i = skipSpaceText(text, i + 1);
    const want = key === undefined ? undefined : spec[key];
    let end: number;
    if (want !== undefined && want !== true && text.charCodeAt(i) === 123) {
      const inner: Record<string, unknown> = {};
      end = pickInto(text, want, i, inner);
      out[key!] = inner;
    } else {
      end = valueEndText(text, i);
      if (end !== -1 && want !== undefined) out[key!] = parseValue(text, i, end);
    }
    if (end === -1) return -1;
    i = skipSpaceText(text, end);
    const c = text.charCodeAt(i);
    if (c === 125 /* } */) return i + 1;
    if (c !== 44 /* , */) return -1;
    i = skipSpaceText(text, i + 1);
  }
}

/** Which of `keys` the member name quoted at `open`..`end` is, compared in place (no string is
 *  made for the names skipped); a name written with escapes is decoded first. */
function keyAt(text: string, open: number, end: number, keys: string[]): string | undefined {
  const length = end - open - 2;
  if (hasBackslash(text, open + 1, end - 1)) {
    const key = JSON.parse(text.slice(open, end)) as string;
    return keys.includes(key) ? key : undefined;
  }
  for (const key of keys) if (key.length === length && text.startsWith(key, open + 1)) return key;
  return undefined;
}

/** JSON.parse of text[start, end), but a string without escapes is sliced out directly. */
function parseValue(text: string, start: number, end: number): unknown {
  if (text.charCodeAt(start) === 34 && !hasBackslash(text, start + 1, end - 1)) return text.slice(start + 1, end - 1);
  return JSON.parse(text.slice(start, end));
}

function hasBackslash(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 92) return true;
  return false;
}

/** `text` with the first string value of `key` (written `"key":"`) emptied, or `text` itself when
 *  the key is not there. The key cannot match inside a string: there its quotes are escaped. */
export function withoutString(text: string, key: string): string {
  const at = text.indexOf(key);
  if (at === -1) return text;
  const open = at + key.length - 1;
  const end = stringEndText(text, open);
  if (end === -1) return text;
  return text.slice(0, open + 1) + text.slice(end - 1);
}

// ── the same over bytes: a caller's body forwarded with top-level members cut out and set ─────

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isEscapedByte(buf: Buffer, at: number): boolean {
  let backslashes = 0;
  for (let k = at - 1; buf[k] === BACKSLASH; k--) backslashes++;
  return backslashes % 2 === 1;
}

/** Index just past the string that opens at `at`. */
function stringEnd(buf: Buffer, at: number): number {
  let j = buf.indexOf(QUOTE, at + 1);
  while (j !== -1 && isEscapedByte(buf, j)) j = buf.indexOf(QUOTE, j + 1);
  if (j === -1) throw new Error('unterminated string');
  return j + 1;
}

const isSpace = (byte: number): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

function skipSpace(buf: Buffer, i: number): number {
  while (i < buf.length && isSpace(buf[i]!)) i++;
  return i;
}

/** Index just past the JSON value that starts at `i`. */
function valueEnd(buf: Buffer, i: number): number {
  const first = buf[i];
  if (first === QUOTE) return stringEnd(buf, i);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let k = i; k < buf.length; k++) {
      const byte = buf[k];
      if (byte === QUOTE) k = stringEnd(buf, k) - 1;
      else if (byte === 0x7b || byte === 0x5b) depth++;
      else if ((byte === 0x7d || byte === 0x5d) && --depth === 0) return k + 1;
    }
    throw new Error('unterminated value');
  }
  // A number, true, false or null: ends at a comma, a closing bracket or white space.
  let k = i;
  while (k < buf.length && buf[k] !== 0x2c && buf[k] !== 0x7d && buf[k] !== 0x5d && !isSpace(buf[k]!)) k++;
  return k;
}

interface Member { key: string; start: number; end: number }

/** The spans of large bodies, kept as long as the body is: every attempt of a request (a flex
 *  race's two, a retry, a fallback) builds the same caller's bytes again, and walking a coding
 *  agent's 225 KB body takes about half a millisecond (bench/README.md). */
const spansOfLarge = new WeakMap<Buffer, readonly Member[]>();
const CACHED_OVER = 16 * 1024;

/** topLevelMembers, walked once per body over CACHED_OVER bytes. */
export function topLevelMembersOf(buf: Buffer): readonly Member[] {
  if (buf.length <= CACHED_OVER) return topLevelMembers(buf);
  let members = spansOfLarge.get(buf);
  if (!members) spansOfLarge.set(buf, members = topLevelMembers(buf));
  return members;
}

/** The top-level members of a JSON object's bytes: key and the byte span of `"key": value`. */
export function topLevelMembers(buf: Buffer): Member[] {
  const members: Member[] = [];
  let i = skipSpace(buf, 0);
  if (buf[i] !== 0x7b) throw new Error('not an object');
  i = skipSpace(buf, i + 1);
  if (buf[i] === 0x7d) return members;
  for (;;) {
    const start = i;
    const kEnd = stringEnd(buf, i);
    const raw = buf.toString('utf8', i + 1, kEnd - 1);
    const key = raw.includes('\\') ? (JSON.parse(buf.toString('utf8', i, kEnd)) as string) : raw;
    i = skipSpace(buf, kEnd);
    if (buf[i] !== 0x3a) throw new Error('expected :');
    const end = valueEnd(buf, skipSpace(buf, i + 1));
    members.push({ key, start, end });
    i = skipSpace(buf, end);
    if (buf[i] === 0x2c) { i = skipSpace(buf, i + 1); continue; }
    if (buf[i] === 0x7d) return members;
    throw new Error('expected , or }');
  }
}

/** The object's bytes with every member whose key `keep` refuses cut out, and `set`'s members
 *  (undefined values skipped) added at the end: what JSON.parse would read as
 *  `{ ...kept, ...set }`, without re-serializing what is kept. */
export function spliceMembers(buf: Buffer, keep: (key: string) => boolean, set: Record<string, unknown>): Buffer {
  const parts: Buffer[] = [OPEN];
  let first = true;
  for (const member of topLevelMembersOf(buf)) {
    if (!keep(member.key) || Object.hasOwn(set, member.key)) continue;
    if (!first) parts.push(COMMA);
    parts.push(buf.subarray(member.start, member.end));
    first = false;
  }
  let added = '';
  for (const key in set) {
    if (set[key] === undefined) continue;
    added += `${first && !added ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(set[key])}`;
  }
  parts.push(Buffer.from(added + '}'));
  return Buffer.concat(parts);
}

/** The object's bytes with `"key": value` added last in its top-level member `into`, itself an
 *  object (the rest byte for byte); undefined when there is no such member or it is no object.
 *  The member is looked for from the end first (a response's usage comes late, after its output):
 *  its last `"into":` that opens an object whose enclosing object is the outermost one, checked by
 *  walking only what follows it; else every top-level member is walked. */
export function withMemberIn(buf: Buffer, into: string, key: string, value: unknown): Buffer | undefined {
  const close = lastTopLevelObjectEnd(buf, into) ?? walkedObjectEnd(buf, into);
  if (close === undefined) return undefined;
  let i = close - 1;
  while (isSpace(buf[i]!)) i--;
  const added = Buffer.from(`${buf[i] === 0x7b ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(value)}`);
  return Buffer.concat([buf.subarray(0, close), added, buf.subarray(close)]);
}

/** The index of the closing brace of the top-level member `into` when the last `"into":` of the
 *  bytes is it (an unescaped quote opens a key there, as JSON that parsed allows nothing else). */
function lastTopLevelObjectEnd(buf: Buffer, into: string): number | undefined {
  const needle = `"${into}":`;
  const at = buf.lastIndexOf(needle);
  if (at === -1 || isEscapedByte(buf, at)) return undefined;
  const open = skipSpace(buf, at + needle.length);
  if (buf[open] !== 0x7b) return undefined;
  const end = valueEnd(buf, open);
  // The first bracket after it that closes more than it opened closes the object holding the key:
  // when that is the last byte (but space), the object is the outermost one, the body itself.
  let depth = 0;
  for (let k = end; k < buf.length; k++) {
    const byte = buf[k];
    if (byte === QUOTE) k = stringEnd(buf, k) - 1;
    else if (byte === 0x7b || byte === 0x5b) depth++;
    else if (byte === 0x7d || byte === 0x5d) {
      if (depth-- > 0) continue;
      return skipSpace(buf, k + 1) === buf.length ? end - 1 : undefined;
    }
  }
  return undefined;
}

/** The closing brace of the top-level member `into` found by walking every member. */
function walkedObjectEnd(buf: Buffer, into: string): number | undefined {
  const member = topLevelMembersOf(buf).find((m) => m.key === into);
  return member && buf[member.end - 1] === 0x7d ? member.end - 1 : undefined;
}

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');
