// `enrichflow demo`: the main job on the embedded default, with no credentials. Starts the local stack
// (Temporal dev server, S3 server, sandbox, worker), enriches the sample companies shipped in the repo
// over several datasets into a local folder, then the sample people list (profiles and contact
// information) into the same folder, prints each summary with a few rows and where the Parquet is, and
// stops.
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { queryRows, sqlString, withDuckDb } from '../../storage/duckdb.js';
import { loadConfig } from '../../config/index.js';
import { validateJobSpec, type JobSpec } from '../../jobs/job-spec.js';
import { createLogger } from '../../lib/logger.js';
import { startLocalStack } from '../../stack/local-stack.js';
import { DEFAULT_PORTS } from '../../stack/local-stack.js';
import { isPortOpen } from '../../stack/ports.js';
import { connectClient } from '../../workers/temporal-connection.js';
import { UsageError } from '../errors.js';
import { localAddOns } from '../local-addons.js';
import { followRun, formatSummary, startRun } from '../start-run.js';
import { SERVER_GRACE_MS, stopInOrder, watchShutdownSignals, type StopStep } from '../shutdown.js';

/** A sample input, from the built CLI (dist/cli/commands/) or from the sources (cli/commands/). */
function sample(name: string): string {
  return (
    [`../../../samples/${name}`, `../../samples/${name}`]
      .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
      .find((file) => existsSync(file)) ?? fileURLToPath(new URL(`../../../samples/${name}`, import.meta.url))
  );
}
const SAMPLE = sample('companies.csv');
const PEOPLE_SAMPLE = sample('people.csv');
const DEMO_DATASETS = 'firmographics,technographics,funding_and_acquisition';
const PEOPLE_DATASETS = ['profiles', 'contacts_information'];

const cell = (value: string | number | bigint | null | undefined, width: number) =>
  String(value ?? '')
    .padEnd(width)
    .slice(0, width);

/** A few matched people: their input row, and name, job title and employer from `profiles`. */
async function peoplePreview(folder: string): Promise<string[]> {
  const matches = path.join(folder, 'prospect_matches', '*.parquet');
  const profiles = path.join(folder, 'profiles', '*.parquet');
  return withDuckDb({}, async (connection) => {
    const rows = await queryRows<Record<string, string | null>>(
      connection,
      `SELECT m.row_number, p.full_name, p.job_title, p.company_name
         FROM read_parquet(${sqlString(matches)}) m JOIN read_parquet(${sqlString(profiles)}) p USING (prospect_id)
        ORDER BY m.row_number LIMIT 5`,
    );
    return rows.map(
      (r) =>
        `    row ${cell(r.row_number, 4)} ${cell(r.full_name, 24)} ${cell(r.job_title, 34)} ${cell(r.company_name, 32).trimEnd()}`,
    );
  });
}

async function preview(folder: string): Promise<string[]> {
  const pattern = path.join(folder, 'firmographics', '*.parquet');
  return withDuckDb({}, async (connection) => {
    const rows = await queryRows<Record<string, string | null>>(
      connection,
      `SELECT name, website, country_name, number_of_employees_range AS employees, yearly_revenue_range AS revenue
         FROM read_parquet(${sqlString(pattern)}) ORDER BY name LIMIT 5`,
    );
    return rows.map(
      (r) =>
        `    ${String(r.name).padEnd(32).slice(0, 32)} ${String(r.website ?? '')
          .padEnd(30)
          .slice(0, 30)} ${String(r.country_name ?? '')
          .padEnd(16)
          .slice(0, 16)} ${r.employees ?? ''} employees, ${r.revenue ?? ''} revenue`,
    );
  });
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'Enrich the sample companies, then the sample people, on the embedded default: local Temporal, sandbox, local output',
    )
    .option('--output <folder>', 'where the run folder goes', 'enrichflow-output')
    .option(
      '--datasets <list>',
      'datasets to enrich for the companies (the people get profiles, contacts_information)',
      DEMO_DATASETS,
    )
    .option('--data-dir <dir>', 'folder for local state (default: ENRICHFLOW_DATA_DIR or .data)')
    .action(async (opts: { output: string; datasets: string; dataDir?: string }) => {
      const config = loadConfig();
      const logger = createLogger({ name: 'demo', level: process.env.LOG_LEVEL ?? 'warn' });
      const dataDir = path.resolve(opts.dataDir ?? config.dataDir);
      for (const file of [SAMPLE, PEOPLE_SAMPLE])
        if (!existsSync(file)) throw new UsageError(`the sample input ${file} is missing`);
      if (await isPortOpen(DEFAULT_PORTS.temporal)) {
        throw new UsageError(
          `something already listens on port ${DEFAULT_PORTS.temporal} (an 'enrichflow dev' stack?). Stop it first: the demo runs its own stack on the same data folder.`,
        );
      }
      const say = (line: string) => process.stderr.write(`${line}\n`);
      // Watched from the start: Ctrl-C (or SIGTERM) at any moment stops every process the demo started.
      const shutdown = watchShutdownSignals();
      const stopSteps: StopStep[] = [];
      const interrupted = shutdown.received.then(() => 'interrupted' as const);
      try {
        say('Starting the local stack (Temporal dev server, S3 server, sandbox, worker)…');
        const stack = await startLocalStack({ dataDir, freePorts: true, headless: true, logger });
        stopSteps.unshift({
          name: 'Temporal and S3 servers',
          stop: () => stack.stop(SERVER_GRACE_MS),
          withinMs: SERVER_GRACE_MS + 2_000,
        });
        if (shutdown.signal) return;
        const addOns = await localAddOns.start({
          stack,
          dataDir,
          freePorts: true,
          sandbox: true,
          worker: true,
          logger,
        });
        stopSteps.unshift(...addOns.stopSteps);
        if (shutdown.signal) return;
        const client = await connectClient(addOns.config.temporal);
        // After a signal the run is still being followed (a long poll that retries): closing the
        // connection under it would throw from its retry timer, so the exit closes it instead.
        stopSteps.unshift({
          name: 'Temporal client',
          stop: () => (shutdown.signal ? Promise.resolve() : client.connection.close()),
          withinMs: 1_000,
        });
        const output = path.resolve(opts.output) + path.sep;
        /** Runs one job to its end and returns its folder and summary, or null when interrupted. */
        const runJob = async (spec: JobSpec) => {
          const { runId, started } = await startRun(client, addOns.config, spec);
          say(
            started
              ? `Started run ${runId}`
              : `Run ${runId} already ran on this input; showing it (delete ${dataDir} to start afresh)`,
          );
          const following = followRun(client, runId, { out: process.stderr });
          following.catch(() => undefined);
          const summary = await Promise.race([following, interrupted]);
          if (summary === 'interrupted') {
            say(`Stopping; run ${runId} goes on from where it is when you run the demo again.`);
            return null;
          }
          return { summary, folder: path.join(output, runId) };
        };
        const companies = await runJob(
          validateJobSpec(
            { job_name: 'demo', input: { location: SAMPLE }, datasets: opts.datasets.split(','), output },
            'the demo',
          ),
        );
        if (!companies) return;
        const relative = (folder: string) => path.relative(process.cwd(), folder);
        process.stdout.write(
          `${[
            '',
            formatSummary(companies.summary),
            '',
            'A few enriched companies (firmographics):',
            ...(await preview(companies.folder)),
            '',
          ].join('\n')}\n`,
        );
        say('Now the sample people list (samples/people.csv): matched to prospects, then enriched…');
        const people = await runJob(
          validateJobSpec(
            {
              job_name: 'demo-people',
              input: { location: PEOPLE_SAMPLE, entity: 'prospects' },
              datasets: PEOPLE_DATASETS,
              output,
            },
            'the demo',
          ),
        );
        if (!people) return;
        const lines = [
          '',
          formatSummary(people.summary),
          '',
          'A few enriched people (prospect_matches joined to profiles: input row, name, job title, company):',
          ...(await peoplePreview(people.folder)),
          '',
          `The Parquet tables are in ${companies.folder}/ and ${people.folder}/ — for example, with the DuckDB CLI:`,
          `  duckdb -c "SELECT * FROM '${relative(companies.folder)}/firmographics/*.parquet' LIMIT 10"`,
          `  duckdb -c "SELECT * FROM '${relative(people.folder)}/prospect_matches/*.parquet' JOIN '${relative(people.folder)}/profiles/*.parquet' USING (prospect_id) LIMIT 10"`,
          '',
          'To see these runs in the Temporal UI: npx enrichflow dev, then open http://127.0.0.1:8233',
          `(the stack keeps its history in ${dataDir}).`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      } finally {
        await stopInOrder(stopSteps, logger);
        shutdown.dispose();
        // Stopped on a signal: every process the demo started has stopped; exit 0 at once.
        if (shutdown.signal) process.exit(0);
      }
    });
}
