// Benchmark of planning (issue 4): the real `planRun` activity on a generated CSV of N rows (default
// 1,000,000; about a third repeat an earlier company) with a local output folder. Prints rows/s and
// the process's peak RSS.   npx tsx bench/plan.ts [--rows 1000000] [--heap 192]
//
// Planning runs in a child process started like a worker: with the V8 heap cap docker-compose.yml
// deploys (`--heap 0` for Node's default), so its peak RSS is planning's in a deployed worker.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createActivities } from '../activities/index.js';
import { loadConfig } from '../config/index.js';
import { silentLogger } from '../lib/logger.js';
import { storeResolverFor } from '../workers/worker.js';
import { rssMb } from './support.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    input: { type: 'string' },
    // The worker's V8 heap cap, as docker-compose.yml deploys it (NODE_OPTIONS); 0 = Node's default.
    heap: { type: 'string', default: '192' },
  },
});
const rows = Number(values.rows);
const dir = values.input
  ? path.dirname(values.input)
  : mkdtempSync(path.join(tmpdir(), 'enrichflow-bench-plan-'));
const csv = values.input ?? path.join(dir, 'companies.csv');

if (!values.input) {
  const lines: string[] = ['company,website,country'];
  for (let i = 0; i < rows; i += 1) {
    const n = i % 3 === 2 ? Math.floor(i / 2) : i; // a third of the rows repeat an earlier company
    lines.push(`"Company ${n}, Inc.",https://www.company-${n}.example.com/about,US`);
    if (lines.length === 100_000) {
      writeFileSync(csv, lines.join('\n') + '\n', { flag: i < 100_000 ? 'w' : 'a' });
      lines.length = 0;
    }
  }
  if (lines.length) writeFileSync(csv, lines.join('\n') + '\n', { flag: 'a' });
  console.log(`input: ${rows} rows, ${(statSync(csv).size / 1e6).toFixed(0)} MB`);
  // Planning runs in a process of its own, so its peak RSS is planning's alone, as in a worker.
  const heapFlags = Number(values.heap) > 0 ? [`--max-old-space-size=${Number(values.heap)}`] : [];
  console.log(
    `planning process: ${heapFlags.join(' ') || "Node's default heap"}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const child = spawn(
    process.execPath,
    [...heapFlags, '--import', 'tsx', fileURLToPath(import.meta.url), '--input', csv],
    { stdio: 'inherit' },
  );
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  process.exit(code ?? 1);
}

const activities = createActivities({
  calls: {} as never,
  resolveStore: storeResolverFor(loadConfig({ env: {} })),
  logger: silentLogger,
  workDir: dir,
});
const rssBefore = rssMb('self', 'VmHWM');
const started = Date.now();
const plan = await activities.planRun({
  run: { runId: 'bench', output: path.join(dir, 'out') + '/' },
  input: { location: csv },
});
const seconds = (Date.now() - started) / 1000;
const peak = rssMb('self', 'VmHWM');
console.log(
  `planned ${plan.inputRows} rows (${plan.rejectedRows} rejected, ${plan.uniqueKeys} unique keys, ${plan.match?.totalBatches} match batches) in ${seconds.toFixed(1)} s = ${Math.round(plan.inputRows / seconds)} rows/s`,
);
console.log(
  `peak RSS of the planning process: ${peak.toFixed(0)} MB (${rssBefore.toFixed(0)} MB before planning)`,
);
