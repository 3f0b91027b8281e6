// Assembles a whole response from IR stream events: how a non-streamed caller gets its body when
// the upstream call was streamed (streaming upstream lets the race commit on the first event),
// whatever the two formats are.
import { type IRBlock, type IREvent, type IRResponse, zeroUsage } from '../ir.ts';
import { type Tier } from '../routes.ts';

/** The answer's tier is the one its finish names; a finish that names none leaves `fallbackTier`,
 *  the committed tier (what the passthrough tap charges for the same stream), or undefined where
 *  the caller falls back itself (a decoded non-streamed body). */
export class ResponseCollector<Fallback extends Tier | undefined = Tier | undefined> {
  private readonly blocks = new Map<number, IRBlock>();
  private res: IRResponse = { id: '', model: '', blocks: [], stopReason: 'end', usage: zeroUsage() };

  constructor(fallbackTier?: Fallback) { this.res.tier = fallbackTier; }

  push(ev: IREvent): void {
    switch (ev.type) {
      case 'start':
        if (ev.id) this.res.id = ev.id;
        if (ev.model) this.res.model = ev.model;
        break;
      case 'block_start':
        this.blocks.set(ev.index, ev.block.kind === 'tool_call'
          ? { kind: 'tool_call', id: ev.block.id, name: ev.block.name, arguments: '' }
          : ev.block.kind === 'text' ? { kind: 'text', text: '', ...(ev.block.refusal ? { refusal: true } : {}) }
          : { kind: 'reasoning', text: '' });
        break;
      case 'text_delta': {
        const block = this.block(ev.index, 'text');
        if (block.kind === 'text') block.text += ev.text;
        break;
      }
      case 'reasoning_delta': {
        const block = this.block(ev.index, 'reasoning');
        if (block.kind === 'reasoning') block.text += ev.text;
        break;
      }
      case 'signature': {
        const block = this.blocks.get(ev.index) ?? this.block(ev.index, 'reasoning');
        if (block.kind === 'reasoning') {
          if (ev.encrypted) block.encrypted = ev.signature;
          else block.signature = (block.signature ?? '') + ev.signature;
          if (ev.anthropic) block.anthropic = true;
        } else if (block.kind === 'tool_call') block.signature = ev.signature;
        break;
      }
      case 'args_delta': {
        const block = this.blocks.get(ev.index);
        if (block?.kind === 'tool_call') block.arguments += ev.json;
        break;
      }
      case 'usage':
        Object.assign(this.res.usage, ev.usage);
        break;
      case 'finish':
        this.res.stopReason = ev.reason;
        this.res.usage = ev.usage;
        if (ev.unreported) this.res.unreported = true;
        if (ev.tier) this.res.tier = ev.tier;
        if (ev.extras) this.res.extras = ev.extras;
        break;
      case 'error':
        this.res.stopReason = 'error';
        this.res.error = { code: ev.code, message: ev.message };
        break;
      case 'block_stop':
        break;
    }
  }

  result(): IRResponse & { tier: Tier | Fallback } {
    this.res.blocks = [...this.blocks.entries()].sort((a, block) => a[0] - block[0]).map(([, block]) => block);
    return this.res as IRResponse & { tier: Tier | Fallback };
  }

  private block(index: number, kind: 'text' | 'reasoning'): IRBlock {
    let block = this.blocks.get(index);
    if (!block) { block = kind === 'text' ? { kind: 'text', text: '' } : { kind: 'reasoning', text: '' }; this.blocks.set(index, block); }
    return block;
  }
}
