// Usage tap for an Interactions passthrough: interaction.completed carries the usage and the
// tier that served, and is the frame where cost and routing are added.
import type { CostExtras } from '../../ir.ts';
import type { SSEFrame, TapState, UsageTap } from '../types.ts';
import { tierFromInteractions, usageFromInteractions } from './usage.ts';
import { addCostExtras } from '../cost-extras.ts';

const isCompleted = (frame: SSEFrame): boolean =>
  frame.event === 'interaction.completed' || (frame.event === undefined && frame.data.includes('"interaction.completed"'));

export const interactionsTap: UsageTap = {
  markers: ['interaction.completed'],
  // The interaction's head and its status.
  echoes: { opening: ['interaction.created', 'interaction.status_update'] },

  idFrame: {
    marker: 'interaction.created',
    pick: { event_type: true, interaction: { id: true } },
    read: (frame, data) => ((frame.event ?? data?.event_type) === 'interaction.created' && typeof data?.interaction?.id === 'string' ? data.interaction.id : undefined),
  },

  carriesUsage: isCompleted,

  read(data, acc: TapState) {
    const interaction = data?.interaction;
    if (!interaction) return;
    if (interaction.usage) {
      acc.usage = usageFromInteractions(interaction.usage);
      acc.sawUsage = true;
    }
    if (interaction.service_tier) acc.tier = tierFromInteractions(interaction.service_tier);
    if (typeof interaction.id === 'string') acc.id = interaction.id;
  },

  /** Adds the spec's usage.input_tokens / output_tokens (IR convention: thought tokens count as
   *  output), cost and routing; everything else stays as the provider sent it. */
  inject(data, extras: CostExtras) {
    const interaction = data.interaction ?? {};
    const ir = usageFromInteractions(interaction.usage);
    const usage = addCostExtras({ ...interaction.usage }, extras, { input: ir.inputTokens, output: ir.outputTokens });
    return JSON.stringify({ ...data, interaction: { ...interaction, usage } });
  },

  isFinal(frame, data) {
    return isCompleted(frame) || data?.event_type === 'interaction.completed';
  },
};
