// IR events → Interactions SSE (steps schema), as the API sends it and @google/genai parses it:
// interaction.created, interaction.status_update, step.start/delta/stop per block,
// interaction.completed, then `event: done` / `data: [DONE]`. Only translated streams come here
// (vendor B's own is passed through), so the interaction's id is one the gateway mints: no provider
// stored it (ids.ts), whatever id the provider's own stream carried.
import { formatFrame } from '../../sse.ts';
import type { IREvent } from '../../ir.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { interactionsErrorFrame } from './errors.ts';
import { newUnstoredInteractionId } from './ids.ts';
import { interactionUsage } from './response.ts';
import { statusFromStop } from './status.ts';
import { isoSeconds } from './usage.ts';
import { ANTHROPIC_SIGNATURE_TAG, OPENAI_ENCRYPTED_TAG } from '../reasoning-tags.ts';

interface OpenStep {
  kind: 'text' | 'reasoning' | 'tool_call';
  /** Step index; undefined while a function_call's step.start is held back for its signature. */
  at?: number;
  tool?: { id: string; name: string; signature?: string };
  /** Claude's signature of a thought step, held to its step.stop and sent there in one tagged
   *  thought_signature delta (where Gemini sends its own). */
  anthropicSignature?: string;
  /** OpenAI's encrypted reasoning of a thought step, held and sent the same way, tagged. */
  openaiEncrypted?: string;
}

const DONE = formatFrame('[DONE]', 'done');
const FAILED_FINISH = interactionsErrorFrame('provider_error', 'The provider ended the response with an error.');

export class InteractionsStreamEncoder implements StreamEncoder {
  private started = false;
  private done = false;
  private id = '';
  private nextIndex = 0;
  private sawToolCall = false;
  private readonly steps = new Map<number, OpenStep>();

  constructor(private readonly ctx: EncodeContext) {}

  push(ev: IREvent): string {
    if (this.done || ev.type === 'usage') return '';
    let out = this.started ? '' : this.created();
    switch (ev.type) {
      case 'start': break;
      case 'block_start':
        if (ev.block.kind === 'tool_call') {
          this.sawToolCall = true;
          this.steps.set(ev.index, { kind: 'tool_call', tool: { id: ev.block.id, name: ev.block.name } });
        } else out += this.open(ev.index, ev.block.kind);
        break;
      case 'text_delta': {
        const [step, pre] = this.stepFor(ev.index, 'text');
        if (step.kind === 'text' && ev.text) out += pre + delta(step.at!, { type: 'text', text: ev.text });
        break;
      }
      case 'reasoning_delta': {
        const [step, pre] = this.stepFor(ev.index, 'reasoning');
        if (step.kind === 'reasoning' && ev.text) {
          out += pre + delta(step.at!, { type: 'thought_summary', content: { type: 'text', text: ev.text } });
        }
        break;
      }
      case 'signature': {
        if (!ev.signature) break;
        const held = this.steps.get(ev.index);
        if (held?.kind === 'tool_call') {
          if (held.at === undefined) held.tool!.signature = ev.signature;
          break;
        }
        const [step, pre] = this.stepFor(ev.index, 'reasoning');
        if (step.kind !== 'reasoning') break;
        if (ev.encrypted) { step.openaiEncrypted = (step.openaiEncrypted ?? '') + ev.signature; out += pre; }
        else if (ev.anthropic) { step.anthropicSignature = (step.anthropicSignature ?? '') + ev.signature; out += pre; }
        else out += pre + delta(step.at!, { type: 'thought_signature', signature: ev.signature });
        break;
      }
      case 'args_delta': {
        const step = this.steps.get(ev.index);
        if (step?.kind !== 'tool_call') break;
        out += this.flushTool(step);
        if (ev.json) out += delta(step.at!, { type: 'arguments_delta', arguments: ev.json });
        break;
      }
      case 'block_stop': out += this.close(ev.index); break;
      case 'finish': {
        out += this.closeAll();
        this.done = true;
        // A provider's failed finish is a broken stream: the format's error event, not an
        // interaction.completed whose `failed` status carries no code (README: every format's
        // stream ends with its own error event on an upstream failure).
        if (ev.reason === 'error') return out + FAILED_FINISH + DONE;
        const at = isoSeconds(this.ctx.createdAt);
        const interaction = {
          id: this.id, status: statusFromStop(ev.reason, this.sawToolCall), usage: interactionUsage(ev),
          created: at, updated: at, service_tier: ev.tier ?? this.ctx.tier, object: 'interaction', model: this.ctx.model,
        };
        out += frame('interaction.completed', { interaction }) + DONE;
        break;
      }
      case 'error':
        this.done = true;
        out += interactionsErrorFrame(ev.code, ev.message) + DONE;
        break;
    }
    return out;
  }

  private created(): string {
    this.started = true;
    this.id = this.ctx.id || newUnstoredInteractionId();
    return frame(
      'interaction.created', { interaction: { id: this.id, status: 'in_progress', object: 'interaction', model: this.ctx.model } },
    )
      + frame('interaction.status_update', { interaction_id: this.id, status: 'in_progress' });
  }

  private open(index: number, kind: 'text' | 'reasoning'): string {
    const step: OpenStep = { kind, at: this.nextIndex++ };
    this.steps.set(index, step);
    return frame('step.start', { index: step.at, step: { type: kind === 'text' ? 'model_output' : 'thought' } });
  }

  private stepFor(index: number, kind: 'text' | 'reasoning'): [OpenStep, string] {
    const step = this.steps.get(index);
    if (step) return [step, ''];
    const pre = this.open(index, kind);
    return [this.steps.get(index)!, pre];
  }

  /** A function_call step opens with its id, name and (Gemini) signature, as the API sends it. */
  private flushTool(step: OpenStep): string {
    if (step.at !== undefined || !step.tool) return '';
    step.at = this.nextIndex++;
    const { id, name, signature } = step.tool;
    return frame(
      'step.start', { index: step.at, step: { type: 'function_call', id, name, arguments: {}, ...(signature ? { signature } : {}) } },
    );
  }

  private close(index: number): string {
    const step = this.steps.get(index);
    if (!step) return '';
    this.steps.delete(index);
    // Another vendor's opaque reasoning rides tagged, so the caller's next turn gives it back to
    // that vendor only (reasoning-tags.ts).
    const tagged = step.anthropicSignature ? ANTHROPIC_SIGNATURE_TAG + step.anthropicSignature
      : step.openaiEncrypted ? OPENAI_ENCRYPTED_TAG + step.openaiEncrypted : undefined;
    const signed = tagged ? delta(step.at!, { type: 'thought_signature', signature: tagged }) : '';
    return this.flushTool(step) + signed + frame('step.stop', { index: step.at });
  }

  private closeAll(): string {
    let out = '';
    for (const index of [...this.steps.keys()]) out += this.close(index);
    return out;
  }
}

/** One event; the payload repeats its name as event_type, as the API's does. */
const frame = (event: string, data: Record<string, unknown>): string => formatFrame(JSON.stringify({ ...data, event_type: event }), event);
const delta = (index: number, d: Record<string, unknown>): string => frame('step.delta', { index, delta: d });
