// Lists of ids as people keep them in files (an export's exclude list): one id a line, checked against
// the id pattern of its target. Pure, so the CLI checks a list before a run and the activity reads it.
import { JobSpecError } from './errors.js';
import type { ExportTarget } from './export-types.js';

const ID_PATTERN: Record<ExportTarget, RegExp> = {
  prospects: /^[a-f0-9]{40}$/,
  businesses: /^[a-f0-9]{32}$/,
};
const ID_COLUMN: Record<ExportTarget, string> = { prospects: 'prospect_id', businesses: 'business_id' };
/**
 * The ids of an exclude file: one per line; blank lines, `#` comments and a `prospect_id` /
 * `business_id` header are skipped. Throws `JobSpecError` naming the first bad lines.
 */
export function parseIdList(text: string, target: ExportTarget, source: string): string[] {
  const ids = new Set<string>();
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/^\uFEFF/, '').trim();
    if (line === '' || line.startsWith('#')) return;
    if (i === 0 && line.toLowerCase() === ID_COLUMN[target]) return;
    const id = line.toLowerCase();
    if (!ID_PATTERN[target].test(id)) {
      if (problems.length < 5)
        problems.push(`line ${i + 1}: "${line.slice(0, 60)}" is not a ${ID_COLUMN[target]}`);
      else if (problems.length === 5) problems.push('…');
      return;
    }
    ids.add(id);
  });
  if (problems.length > 0) {
    throw new JobSpecError(
      `${source}: not a list of ${ID_COLUMN[target]}s:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
  return [...ids];
}
