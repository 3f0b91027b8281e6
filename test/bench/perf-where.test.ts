// The perf sample classifier of bench/perf-where.ts, on hand-made `perf script` text: a sample's
// frames are read leaf first; kernel and garbage-collection samples are parts of their own, the
// helper threads' samples go by what they do, and a JIT frame goes to the part of the source file
// the bundle's map puts it in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePerfScript, partOfSample } from '../../bench/perf-where.ts';

const BUNDLE = 'file:///app/dist/bench/gateway-child.mjs';

/** `perf script -F pid,tid,ip,sym,dso` as it prints a sample: a header, then frames leaf first. */
function sample(pid: number, tid: number, frames: [sym: string, dso: string][]): string {
  return `    ${pid}/${tid}  \n${frames.map(([sym, dso], i) => `\t    ${(0x1000 + i).toString(16)} ${sym} (${dso})`).join('\n')}\n`;
}

const TEXT = [
  // the response write: the kernel wakes the client's process
  sample(10, 10, [
    ['_raw_spin_unlock_irqrestore', '[kernel.kallsyms]'], ['sock_def_readable', '[kernel.kallsyms]'], ['tcp_v4_rcv', '[kernel.kallsyms]'],
    ['do_writev', '[kernel.kallsyms]'], ['writev', '/usr/lib/libc.so.6'], ['JS:*clearBuffer node:internal/streams/writable:744:21', '/tmp/perf-10.map'],
  ]),
  // a read's copy: kernel, other
  sample(10, 10, [['_copy_to_iter', '[kernel.kallsyms]'], ['ksys_read', '[kernel.kallsyms]'], ['read', '/usr/lib/libc.so.6'], ['uv__read', '/usr/bin/node']]),
  // a page fault inside a scavenge is the scavenge's
  sample(10, 10, [['clear_page_erms', '[kernel.kallsyms]'], ['v8::internal::ScavengerCollector::CollectGarbage(v8::internal::Heap*)', '/usr/bin/node'], ['JS:*pickInto file:///app/dist/bench/gateway-child.mjs:3:40', '/tmp/perf-10.map']]),
  // our code in the bundle, with a V8 builtin at the leaf: the builtin is its caller's
  sample(10, 10, [['Builtins_LoadIC', '/usr/bin/node'], [`JS:*guard ${BUNDLE}:2:10`, '/tmp/perf-10.map'], [`JS:*handleInference ${BUNDLE}:1:5`, '/tmp/perf-10.map']]),
  // undici's WebAssembly parser
  sample(10, 10, [['JS:wasm-function[20]-20-turbofan', '/tmp/perf-10.map'], ['JS:*onHttpSocketReadable x', '/tmp/perf-10.map']]),
  // a CommonJS module is named by its path, not a URL: undici's, under node's writable stream
  sample(10, 10, [['Builtins_LoadIC', '/usr/bin/node'], ['JS:*_resume /app/node_modules/undici/lib/dispatcher/client.js:589:18', '/tmp/perf-10.map'], ['JS:*clearBuffer node:internal/streams/writable:744:21', '/tmp/perf-10.map']]),
  // node's C++ HTTP parser, no script frame below: every proxy's
  sample(10, 10, [['llhttp__internal_execute', '/usr/bin/node'], ['node::(anonymous namespace)::Parser::Execute(char const*, unsigned long)', '/usr/bin/node'], ['uv__read', '/usr/bin/node']]),
  // malloc with no stack
  sample(10, 10, [['_int_malloc', '/usr/lib/libc.so.6'], ['[unknown]', '[unknown]']]),
  // helper threads: the optimizing compiler and a parallel scavenge
  sample(10, 11, [['v8::internal::compiler::LinearScanAllocator::AllocateRegisters()', '/usr/bin/node'], ['v8::platform::DefaultJobWorker::Run()', '/usr/bin/node']]),
  sample(10, 12, [['v8::internal::Scavenger::ScavengePage(v8::internal::MemoryChunk*)', '/usr/bin/node']]),
].join('\n');

/** The bundle's map, by line (perf's lines count from 1, a source map's from 0): 1 the pipeline,
 *  2 authentication, 3 the JSON walker. */
const locate = (url: string, line: number): string =>
  url === BUNDLE ? ['../../lib/http/pipeline.ts', '../../lib/http/auth.ts', '../../lib/json-skip.ts'][line]! : url;

test('perf script text parses into samples, frames leaf first, with their process and thread', () => {
  const samples = parsePerfScript(TEXT);
  assert.equal(samples.length, 10);
  assert.deepEqual(samples.map((s) => s.tid), [10, 10, 10, 10, 10, 10, 10, 10, 11, 12]);
  assert.ok(samples.every((s) => s.pid === 10));
  assert.deepEqual(samples[0]!.frames[0], { sym: '_raw_spin_unlock_irqrestore', dso: '[kernel.kallsyms]' });
  // a C++ symbol keeps its parentheses; the dso is the last parenthesised group
  assert.deepEqual(samples[6]!.frames[1], { sym: 'node::(anonymous namespace)::Parser::Execute(char const*, unsigned long)', dso: '/usr/bin/node' });
});

test('each sample goes to its part: kernel, GC, the source file of a bundled frame, helper threads', () => {
  const parts = parsePerfScript(TEXT).map((s) => partOfSample(s, locate));
  assert.deepEqual(parts, [
    'kernel: waking another process (a reader of what was written)',
    'kernel: system calls, TCP, page faults',
    'garbage collection',
    'auth + abuse limits',
    'upstream call (undici)',
    'upstream call (undici)',
    'sockets + node http (every proxy pays)',
    'other (native, node internals)',
    'helper threads: optimizing compiler',
    'helper threads: garbage collection',
  ]);
});
