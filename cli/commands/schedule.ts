// `enrichflow schedule create|list|describe|pause|unpause|trigger|delete`: runs of a job spec file on
// a Temporal Schedule (cron or interval, time zone, overlap policy, catch-up window).
import type { Client, ScheduleDescription } from '@temporalio/client';
import type { Command } from 'commander';
import { loadConfig } from '../../config/index.js';
import { detectFormat, InputFileError } from '../../storage/plan-input.js';
import { checkOutput, checkRun } from '../../storage/preflight.js';
import { toRunInput } from '../../jobs/job-spec.js';
import { readJobSpecFile } from '../../jobs/job-spec.js';
import {
  createSchedule,
  deleteSchedule,
  describeSchedule,
  describeSpec,
  listSchedules,
  parseOverlap,
  pauseSchedule,
  scheduledJobOf,
  ScheduleOptionsError,
  triggerSchedule,
  unpauseSchedule,
  type OverlapName,
  type ScheduledJob,
} from '../../jobs/schedules.js';
import { connectClient } from '../../workers/temporal-connection.js';
import { storeResolverFor } from '../../workers/worker.js';
import { UsageError } from '../errors.js';

async function withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient(loadConfig().temporal);
  try {
    return await fn(client);
  } catch (error) {
    if (error instanceof ScheduleOptionsError) throw new UsageError(error.message);
    throw error;
  } finally {
    await client.connection.close();
  }
}

const collect = (value: string, previous: string[] = []) => [...previous, value];
const overlapFlag = (value: string): OverlapName => {
  try {
    return parseOverlap(value);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
};

const time = (date: Date | undefined) => (date ? date.toISOString().replace('.000Z', 'Z') : '-');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function runStatus(client: Client, workflowId: string): Promise<string> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).status.name;
  } catch {
    return 'UNKNOWN';
  }
}

async function describeText(client: Client, d: ScheduleDescription): Promise<string> {
  const job = scheduledJobOf(d);
  const lines = [
    `schedule ${d.scheduleId}${d.state.paused ? ' (PAUSED)' : ''}`,
    ...(job
      ? [
          `  job:             ${job.jobName}${job.jobFile ? ` (from ${job.jobFile})` : ''}`,
          `  input:           ${job.input}`,
          `  output:          ${job.output}`,
          `  datasets:        ${job.datasets.join(', ')}`,
        ]
      : [`  action:          ${d.action.workflowType} (not made by enrichflow)`]),
    `  timing:          ${describeSpec(d.spec)}`,
    `  overlap policy:  ${d.policies.overlap ?? 'SKIP'}`,
    `  catch-up window: ${Math.round(d.policies.catchupWindow / 1000)}s`,
    `  pause on failure: ${d.policies.pauseOnFailure}`,
    ...(d.state.note ? [`  note:            ${d.state.note}`] : []),
    `  created:         ${time(d.info.createdAt)}`,
    `  actions taken:   ${d.info.numActionsTaken} (skipped for overlap: ${d.info.numActionsSkippedOverlap}, missed catch-up window: ${d.info.numActionsMissedCatchupWindow})`,
    `  next runs:       ${d.info.nextActionTimes.slice(0, 3).map(time).join(', ') || '-'}`,
  ];
  const recent = d.info.recentActions.slice(-5).reverse();
  if (recent.length > 0) {
    lines.push('  recent runs:');
    for (const action of recent) {
      const runId = action.action.workflow.workflowId;
      lines.push(`    ${runId}  ${await runStatus(client, runId)}  (due ${time(action.scheduledAt)})`);
    }
  }
  return lines.join('\n');
}

/**
 * A schedule as `schedule describe --json` prints it (and, without `recentRuns[].status`, each entry of
 * `schedule list --json`): the README documents these fields.
 */
interface ScheduleJson {
  scheduleId: string;
  paused: boolean;
  note: string | null;
  /** The timing as text: `cron "0 6 * * *" (Europe/Paris)`, `every 12h (UTC)`. */
  timing: string;
  overlap: string;
  catchupWindowSeconds: number | null;
  pauseOnFailure: boolean | null;
  /** The enrichflow job it runs; null for a schedule enrichflow did not make. */
  job: ScheduledJob | null;
  nextActionTimes: string[];
  recentRuns: { runId: string; scheduledAt: string; status?: string }[];
}

interface ScheduleFacts {
  scheduleId: string;
  spec?: ScheduleDescription['spec'];
  state: { paused: boolean; note?: string };
  info: Pick<ScheduleDescription['info'], 'nextActionTimes' | 'recentActions'>;
  policies?: ScheduleDescription['policies'];
}

function scheduleJson(d: ScheduleFacts, job: ScheduledJob | undefined): ScheduleJson {
  return {
    scheduleId: d.scheduleId,
    paused: d.state.paused,
    note: d.state.note ?? null,
    timing: d.spec ? describeSpec(d.spec) : '',
    overlap: d.policies?.overlap ?? 'SKIP',
    catchupWindowSeconds: d.policies ? Math.round(d.policies.catchupWindow / 1000) : null,
    pauseOnFailure: d.policies ? d.policies.pauseOnFailure : null,
    job: job ?? null,
    nextActionTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
    recentRuns: d.info.recentActions.map((a) => ({
      runId: a.action.workflow.workflowId,
      scheduledAt: a.scheduledAt.toISOString(),
    })),
  };
}

interface CreateFlags {
  id?: string;
  cron?: string[];
  every?: string[];
  timezone?: string;
  overlap?: OverlapName;
  catchupWindow?: string;
  pauseOnFailure: boolean;
  paused: boolean;
  note?: string;
  replace: boolean;
  inputLater: boolean;
}

export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description(
      'Run a job spec file on a schedule (Temporal Schedules): create, list, describe, pause, trigger, delete',
    );

  schedule
    .command('create')
    .description('Schedule the runs of a job spec file; each run reads the input as it is at that time')
    .argument('<job-file>', 'job spec file (YAML or JSON), as for `enrichflow run`')
    .option('--id <id>', 'schedule id (default: the job name); scheduled run ids are <id>-<action time>')
    .option('--cron <expression>', 'cron expression, e.g. "0 6 * * *" or @daily (repeatable)', collect)
    .option('--every <interval>', 'interval, e.g. 6h or 1d/6h (every day at 06:00 UTC) (repeatable)', collect)
    .option('--timezone <zone>', 'IANA time zone of the cron expressions (default UTC)')
    .option(
      '--overlap <policy>',
      'when a run is due while the last one runs: skip (default), buffer_one, buffer_all, cancel_other, terminate_other, allow_all',
      overlapFlag,
    )
    .option('--catchup-window <duration>', 'how late a missed run (server down) may still start (default 1d)')
    .option('--pause-on-failure', 'pause the schedule when a run fails (bad key, no credits, …)', false)
    .option('--paused', 'create the schedule paused', false)
    .option('--note <text>', 'note shown by describe')
    .option('--replace', 'update the schedule of that id if it exists (keeps its history)', false)
    .option(
      '--input-later',
      'the input is a drop location that may not exist yet: check the output only (runs fail until the input is there)',
      false,
    )
    .action(async (file: string, flags: CreateFlags) => {
      const spec = readJobSpecFile(file);
      detectFormat(spec.input.location, spec.input.format);
      const config = loadConfig();
      // The run's preflight, so a schedule never starts runs that cannot work; a drop location that
      // is not there yet is allowed with --input-later.
      const resolve = storeResolverFor(config);
      let inputMissing = false;
      try {
        await checkRun({ input: toRunInput(spec, '').input, output: spec.output }, resolve, {
          ...(config.workDir ? { tempDir: config.workDir } : {}),
        });
      } catch (error) {
        if (!(flags.inputLater && error instanceof InputFileError && error.code === 'NOT_FOUND')) {
          if (error instanceof InputFileError && error.code === 'NOT_FOUND')
            throw new UsageError(`${error.message}; if runs will find it there later, pass --input-later`);
          throw error;
        }
        inputMissing = true;
        await checkOutput({ ...resolve(spec.output), location: spec.output });
      }
      await withClient(async (client) => {
        const { scheduleId, created } = await createSchedule(
          client,
          {
            ...(flags.id ? { scheduleId: flags.id } : {}),
            spec,
            jobFile: file,
            timing: {
              ...(flags.cron ? { cron: flags.cron } : {}),
              ...(flags.every ? { every: flags.every } : {}),
              ...(flags.timezone ? { timezone: flags.timezone } : {}),
            },
            policy: {
              ...(flags.overlap ? { overlap: flags.overlap } : {}),
              ...(flags.catchupWindow ? { catchupWindow: flags.catchupWindow } : {}),
              pauseOnFailure: flags.pauseOnFailure,
            },
            paused: flags.paused,
            ...(flags.note ? { note: flags.note } : {}),
            taskQueue: config.temporal.taskQueue,
            apiTaskQueue: config.temporal.apiTaskQueue,
          },
          { replace: flags.replace },
        );
        process.stderr.write(`${created ? 'created' : 'updated'} schedule ${scheduleId}\n`);
        if (inputMissing) {
          process.stderr.write(`note: ${spec.input.location} is not there yet; runs fail until it is\n`);
        }
        const local = !/^[a-z][a-z0-9+.-]*:/i.test(spec.input.location);
        if (local) {
          process.stderr.write(
            `note: the input is a local path: every worker must see ${spec.input.location}\n`,
          );
        }
        process.stdout.write(`${await describeText(client, await describeSchedule(client, scheduleId))}\n`);
      });
    });

  schedule
    .command('list')
    .description('List schedules')
    .option('--json', 'print JSON', false)
    .action(async (flags: { json: boolean }) => {
      await withClient(async (client) => {
        const schedules = await listSchedules(client);
        if (flags.json) {
          const listed = schedules.map(({ summary, description }) =>
            description
              ? scheduleJson(description, scheduledJobOf(description))
              : scheduleJson(
                  {
                    scheduleId: summary.scheduleId,
                    spec: summary.spec,
                    state: summary.state,
                    info: summary.info,
                  },
                  undefined,
                ),
          );
          process.stdout.write(`${JSON.stringify(listed, null, 2)}\n`);
          return;
        }
        if (schedules.length === 0) {
          process.stdout.write('no schedules yet (see: enrichflow schedule create --help)\n');
          return;
        }
        const rows = [['SCHEDULE', 'STATE', 'TIMING', 'NEXT RUN (UTC)', 'LAST RUN', 'JOB']];
        for (const { summary, description } of schedules) {
          const job = description ? scheduledJobOf(description) : undefined;
          rows.push([
            summary.scheduleId,
            summary.state.paused ? 'paused' : 'active',
            describeSpec(summary.spec),
            time(summary.info.nextActionTimes[0]),
            summary.info.recentActions.at(-1)?.action.workflow.workflowId ?? '-',
            job ? `${job.jobName}: ${job.input} -> ${job.output}` : '(not enrichflow)',
          ]);
        }
        process.stdout.write(`${table(rows)}\n`);
      });
    });

  schedule
    .command('describe')
    .description('Show a schedule: job, timing, policies, next and recent runs')
    .argument('<schedule-id>')
    .option('--json', 'print JSON', false)
    .action(async (id: string, flags: { json: boolean }) => {
      await withClient(async (client) => {
        const d = await describeSchedule(client, id);
        if (flags.json) {
          const shown = scheduleJson(d, scheduledJobOf(d));
          for (const run of shown.recentRuns) run.status = await runStatus(client, run.runId);
          process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
        } else {
          process.stdout.write(`${await describeText(client, d)}\n`);
        }
      });
    });

  for (const [name, verb, run] of [
    ['pause', 'Pause a schedule (no new runs until unpaused)', pauseSchedule],
    ['unpause', 'Resume a paused schedule', unpauseSchedule],
  ] as const) {
    schedule
      .command(name)
      .description(verb)
      .argument('<schedule-id>')
      .option('--note <text>', 'why (shown by describe)')
      .action(async (id: string, flags: { note?: string }) => {
        await withClient(async (client) => {
          await run(client, id, flags.note);
          process.stdout.write(`${name}d schedule ${id}\n`);
        });
      });
  }

  schedule
    .command('trigger')
    .description('Start a run of the schedule now (its overlap policy applies unless --overlap is given)')
    .argument('<schedule-id>')
    .option('--overlap <policy>', 'overlap policy for this run only, e.g. allow_all', overlapFlag)
    .action(async (id: string, flags: { overlap?: OverlapName }) => {
      await withClient(async (client) => {
        const result = await triggerSchedule(client, id, flags.overlap ? { overlap: flags.overlap } : {});
        if (result.runId) {
          process.stdout.write(`${result.runId}\n`);
          process.stderr.write(
            `started run ${result.runId} (follow it with: enrichflow runs watch ${result.runId})\n`,
          );
        } else {
          process.stderr.write(`no run started: ${result.reason}\n`);
        }
      });
    });

  schedule
    .command('delete')
    .description('Delete a schedule (runs already started go on)')
    .argument('<schedule-id>')
    .action(async (id: string) => {
      await withClient(async (client) => {
        await deleteSchedule(client, id);
        process.stdout.write(`deleted schedule ${id}\n`);
      });
    });
}
