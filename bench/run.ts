// `make bench`: every scenario, one run, each with its baselines measured in the same run.
import { runMain } from './harness.ts';
import { responsesNonstream } from './responses-nonstream.ts';
import { responsesStream } from './responses-stream.ts';
import { chatTranslatedStream } from './chat-translated-stream.ts';
import { responsesFlexStream } from './responses-flex-stream.ts';

runMain([responsesNonstream, responsesStream, chatTranslatedStream, responsesFlexStream]);
