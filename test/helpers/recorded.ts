// The recorded provider traffic lives outside this repository, in ../shared/fixtures/recorded/
// (present on the team's machines and in CI). Suites that replay it run when that folder exists and
// report themselves as skipped when it does not, so a fresh clone passes `make test` on its own.
// The project's own hand-written fixtures are in test/fixtures/ (OWN_FIXTURES) and always present.
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const RECORDED = fileURLToPath(new URL('../../../shared/fixtures/recorded', import.meta.url));
export const HAS_RECORDED = existsSync(RECORDED);
export const OWN_FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url));

/** node:test options for a test or suite that reads the recordings. */
export const recordedOnly: { skip: string | false } = {
  skip: HAS_RECORDED ? false : `recorded fixtures not found at ${RECORDED}; this suite needs ../shared`,
};

/** The recorded files in one folder ending with `suffix` (none when the recordings are absent). */
export function recordedFiles(folder: string, suffix: string): string[] {
  return HAS_RECORDED ? readdirSync(`${RECORDED}/${folder}`).filter((f) => f.endsWith(suffix)) : [];
}
