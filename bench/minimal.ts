// The throughput scenarios on the minimal upstream alone (part 1 of `make bench`).
import { runMain } from './harness.ts';
import { isMain } from './processes.ts';
import { responsesNonstream } from './responses-nonstream.ts';
import { responsesStream } from './responses-stream.ts';
import { chatTranslatedNonstream } from './chat-translated-nonstream.ts';
import { chatTranslatedStream } from './chat-translated-stream.ts';
import { responsesFlexStream } from './responses-flex-stream.ts';
import { managedStream } from './managed-stream.ts';

export const MINIMAL_SCENARIOS = [responsesNonstream, responsesStream, chatTranslatedNonstream, chatTranslatedStream, responsesFlexStream, managedStream];

if (isMain(import.meta.url)) runMain(MINIMAL_SCENARIOS);
