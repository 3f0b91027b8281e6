// Finding where a JSON array or object ends without parsing it: strings are jumped over with a
// native search for their closing quote, so the cost follows the number of values, not the bytes
// of text inside them. Used to read a passthrough's usage frame without decoding the bulk it
// carries (a Responses response.completed repeats the whole output).

/** Index just past the array or object that opens at `start` ('[' or '{'); -1 if it never closes. */
export function endOfJsonValue(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      let j = text.indexOf('"', i + 1);
      while (j !== -1 && isEscaped(text, j)) j = text.indexOf('"', j + 1);
      if (j === -1) return -1;
      i = j;
    } else if (c === 91 /* [ */ || c === 123 /* { */) depth++;
    else if (c === 93 /* ] */ || c === 125 /* } */) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

/** True when the quote at `at` is preceded by an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let n = 0;
  for (let k = at - 1; text.charCodeAt(k) === 92 /* \ */; k--) n++;
  return n % 2 === 1;
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
