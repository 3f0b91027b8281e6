// A caller keeps a model's reasoning between tool calls only in the field its own format has for
// it: Responses' reasoning `encrypted_content`, Messages' thinking `signature`. Another vendor's
// opaque reasoning rides in that field behind a tag naming whose it is, and the caller's request
// decoder takes the tag off again, so it reaches the IR field of its own vendor (`signature` marked
// `anthropic` for Anthropic, `signature` unmarked for Gemini, `encrypted` for OpenAI) and only that
// vendor's encoders send it back. The colon never occurs in the vendors' own values (base64), so an
// untagged value is always the format's own.
// Decision: docs/decisions.md, "Reasoning across formats".

/** An Anthropic thinking signature in a Responses reasoning item's encrypted_content. */
export const ANTHROPIC_SIGNATURE_TAG = 'anthropic-signature:';
/** A Gemini thought signature (a thought's, or a function call's on its own reasoning item just
 *  before the call) in a Responses reasoning item's encrypted_content, or in a Messages thinking
 *  block's signature (an untagged one there is Anthropic's, which Gemini refuses: "Corrupted
 *  thought signature."). */
export const GEMINI_SIGNATURE_TAG = 'gemini-signature:';
/** OpenAI encrypted reasoning in a Messages thinking block's signature. */
export const OPENAI_ENCRYPTED_TAG = 'openai-encrypted-content:';

/** The value behind `tag`, or undefined when `value` does not carry it. */
export const untag = (tag: string, value: string): string | undefined =>
  value.startsWith(tag) ? value.slice(tag.length) : undefined;
