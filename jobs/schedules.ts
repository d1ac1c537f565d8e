// Schedules of job spec runs on Temporal Schedules: the timing (cron or interval, time zone) and
// policies (overlap, catch-up window) an operator gives, turned into a schedule whose action starts
// the run workflow. Temporal appends each action's time to its workflow id, so every scheduled run
// gets its own run id (`<schedule id>-2026-05-04T06:00:00Z`) and never collides with another; the
// input file is read when the run executes, so each run enriches whatever the input holds then.
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleOptions,
  type ScheduleOverlapPolicy,
  type ScheduleSpec,
  type Range,
  type ScheduleSpecDescription,
  type ScheduleSummary,
} from '@temporalio/client';
import { parseDuration } from '../pipeline/time-bounds.js';
import type { EnrichRunWorkflowInput } from '../workflows/enrich-run.js';
import type { WorkflowName } from '../workflows/index.js';

/** The workflow a schedule starts (checked against the registered names at compile time). */
const ENRICH_RUN_WORKFLOW: WorkflowName = 'enrichRunWorkflow';
import { jobNameOf, toRunInput, type JobSpec } from './job-spec.js';

/** Thrown when schedule options are invalid or a schedule cannot be found or created; names the flag. */
export class ScheduleOptionsError extends Error {
  override readonly name = 'ScheduleOptionsError';
  readonly code = 'SCHEDULE_INVALID';
}

/** The `runKey` field of a scheduled run's input: its real key is the action time in its workflow id. */
export const SCHEDULED_RUN_KEY = 'scheduled';
/** Marks schedules made by enrichflow, in their memo. */
export const SCHEDULE_KIND = 'enrichflow-run';

export const OVERLAP_POLICIES = [
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
  'terminate_other',
  'allow_all',
] as const;
export type OverlapName = (typeof OVERLAP_POLICIES)[number];

export interface ScheduleTiming {
  /** Cron expressions (`0 6 * * *`, `@daily`); each adds action times. */
  cron?: string[];
  /** Intervals (`1h`, `30m`, or `1d/6h`: every day, 6 hours past the epoch-aligned start). */
  every?: string[];
  /** IANA time zone of cron expressions (default UTC). */
  timezone?: string;
}

export interface SchedulePolicy {
  /** What to do when an action is due while the previous run still runs (default `skip`). */
  overlap?: OverlapName;
  /** How late a missed action (server down) may still start (default 1 day). */
  catchupWindow?: string;
  /** Pause the schedule when a run fails (e.g. a key or credit problem), so it is not repeated. */
  pauseOnFailure?: boolean;
}

export interface ScheduleRequest {
  /** Default: the job name. Also the start of each run's id. */
  scheduleId?: string;
  spec: JobSpec;
  /** The job spec file, for operators reading the schedule later (already read into `spec`). */
  jobFile?: string;
  timing: ScheduleTiming;
  policy?: SchedulePolicy;
  paused?: boolean;
  note?: string;
  taskQueue: string;
  apiTaskQueue: string;
}

export const DEFAULT_CATCHUP_WINDOW = '1d';

/** The memo of schedules made by enrichflow (immutable after creation, so it holds nothing else). */
export interface ScheduleMemo {
  kind: typeof SCHEDULE_KIND;
}

const SCHEDULE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export function parseOverlap(text: string): OverlapName {
  const name = text.trim().toLowerCase().replaceAll('-', '_');
  if (!(OVERLAP_POLICIES as readonly string[]).includes(name)) {
    throw new ScheduleOptionsError(
      `--overlap: "${text}" is not an overlap policy; expected one of ${OVERLAP_POLICIES.join(', ')}`,
    );
  }
  return name as OverlapName;
}

function toOverlapPolicy(name: OverlapName): ScheduleOverlapPolicy {
  return name.toUpperCase() as ScheduleOverlapPolicy;
}

function duration(flag: string, text: string, minimumMs = 1_000): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (error) {
    throw new ScheduleOptionsError(`${flag}: ${(error as Error).message}`);
  }
  if (ms < minimumMs)
    throw new ScheduleOptionsError(`${flag}: "${text}" is shorter than ${minimumMs / 1000}s`);
  return ms;
}

function checkTimeZone(zone: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    throw new ScheduleOptionsError(
      `--timezone: "${zone}" is not an IANA time zone (e.g. UTC, Europe/Paris, America/New_York)`,
    );
  }
}

/** The Temporal schedule spec of a timing; at least one cron expression or interval is needed. */
export function toScheduleSpec(timing: ScheduleTiming): ScheduleSpec {
  const cron = (timing.cron ?? []).map((c) => c.trim()).filter(Boolean);
  const every = (timing.every ?? []).map((e) => e.trim()).filter(Boolean);
  if (cron.length === 0 && every.length === 0) {
    throw new ScheduleOptionsError(
      'give --cron "<expression>" or --every <interval> (e.g. --cron "0 6 * * *")',
    );
  }
  for (const expression of cron) {
    const fields = expression.split(/\s+/);
    if (!expression.startsWith('@') && (fields.length < 5 || fields.length > 7)) {
      throw new ScheduleOptionsError(
        `--cron: "${expression}" has ${fields.length} fields; expected 5 (minute hour day-of-month month day-of-week), or @daily, @hourly, …`,
      );
    }
  }
  const intervals = every.map((text) => {
    const [period = '', offset] = text.split('/');
    return {
      every: duration('--every', period),
      ...(offset !== undefined ? { offset: duration('--every offset', offset, 0) } : {}),
    };
  });
  if (timing.timezone) checkTimeZone(timing.timezone);
  return {
    ...(cron.length ? { cronExpressions: cron } : {}),
    ...(intervals.length ? { intervals } : {}),
    ...(timing.timezone ? { timezone: timing.timezone } : {}),
  };
}

const MONTH_NUMBER: Record<string, number> = Object.fromEntries(
  [
    'JANUARY',
    'FEBRUARY',
    'MARCH',
    'APRIL',
    'MAY',
    'JUNE',
    'JULY',
    'AUGUST',
    'SEPTEMBER',
    'OCTOBER',
    'NOVEMBER',
    'DECEMBER',
  ].map((m, i) => [m, i + 1]),
);
const DAY_NUMBER: Record<string, number> = Object.fromEntries(
  ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'].map((d, i) => [d, i]),
);

function cronField(
  ranges: Range<number | string>[],
  full: [number, number],
  toNumber = (v: number | string) => Number(v),
): string {
  if (ranges.length === 0) return '*';
  const parts = ranges.map((r) => {
    const start = toNumber(r.start);
    const end = toNumber(r.end ?? r.start);
    const step = r.step && r.step > 1 ? `/${r.step}` : '';
    if (start === full[0] && end === full[1]) return `*${step}`;
    return end === start ? `${start}${step}` : `${start}-${end}${step}`;
  });
  return parts.join(',');
}

function durationText(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * A schedule's timing as an operator wrote it, from the server's compiled spec (which keeps cron
 * expressions only as calendars): `cron "0 6 * * *", every 12h (Europe/Paris)`.
 */
export function describeSpec(spec: ScheduleSpecDescription | undefined): string {
  const calendars = (spec?.calendars ?? []).map((c) => {
    const seconds = cronField(c.second, [0, 59]);
    const fields = [
      cronField(c.minute, [0, 59]),
      cronField(c.hour, [0, 23]),
      cronField(c.dayOfMonth, [1, 31]),
      cronField(c.month, [1, 12], (m) => MONTH_NUMBER[m] ?? Number(m)),
      cronField(c.dayOfWeek, [0, 6], (d) => DAY_NUMBER[d] ?? Number(d)),
    ];
    return `cron "${seconds === '0' ? '' : `${seconds} `}${fields.join(' ')}"`;
  });
  const intervals = (spec?.intervals ?? []).map(
    (i) => `every ${durationText(i.every)}${i.offset ? `/${durationText(i.offset)}` : ''}`,
  );
  const parts = [...calendars, ...intervals];
  return parts.length ? `${parts.join(', ')} (${spec?.timezone || 'UTC'})` : '-';
}

/** The full Temporal schedule options of a request: spec, policies, and the run workflow as action. */
export function toScheduleOptions(request: ScheduleRequest): ScheduleOptions {
  const { spec, timing, policy = {} } = request;
  const jobName = jobNameOf(spec);
  const scheduleId = request.scheduleId ?? jobName;
  if (!SCHEDULE_ID.test(scheduleId)) {
    throw new ScheduleOptionsError(
      `--id: "${scheduleId}" must be letters, digits, '.', '_' or '-' (at most 200), starting with a letter or digit`,
    );
  }
  const input: EnrichRunWorkflowInput = {
    ...toRunInput(spec, SCHEDULED_RUN_KEY),
    apiTaskQueue: request.apiTaskQueue,
  };
  const memo: ScheduleMemo = { kind: SCHEDULE_KIND };
  return {
    scheduleId,
    spec: toScheduleSpec(timing),
    action: {
      type: 'startWorkflow',
      workflowType: ENRICH_RUN_WORKFLOW,
      // Temporal appends the action time (`-2026-05-04T06:00:00Z`): one distinct run id per action.
      workflowId: scheduleId,
      taskQueue: request.taskQueue,
      args: [input],
      // The memo of runs started by hand (so `runs list` shows scheduled runs alike), plus the job file.
      memo: {
        jobName,
        input: spec.input.location,
        output: spec.output,
        datasets: spec.datasets.join(','),
        ...(request.jobFile ? { jobFile: request.jobFile } : {}),
      },
    },
    policies: {
      overlap: toOverlapPolicy(policy.overlap ?? 'skip'),
      catchupWindow: duration('--catchup-window', policy.catchupWindow ?? DEFAULT_CATCHUP_WINDOW, 10_000),
      pauseOnFailure: policy.pauseOnFailure ?? false,
    },
    memo: memo as unknown as Record<string, unknown>,
    state: {
      paused: request.paused ?? false,
      ...(request.note ? { note: request.note } : {}),
    },
  };
}

function rethrowAsOptionsError(error: unknown, scheduleId: string): never {
  if (error instanceof ScheduleNotFoundError) {
    throw new ScheduleOptionsError(`no schedule "${scheduleId}" (see: enrichflow schedule list)`);
  }
  if (error instanceof ScheduleAlreadyRunning) {
    throw new ScheduleOptionsError(
      `a schedule "${scheduleId}" already exists; give --replace to update it, or choose another --id`,
    );
  }
  // The client turns the server's invalid-argument answers (a cron field out of range) into TypeErrors.
  if (error instanceof TypeError) {
    throw new ScheduleOptionsError(`schedule "${scheduleId}" was refused: ${error.message}`);
  }
  throw error;
}

export interface CreatedSchedule {
  scheduleId: string;
  /** False when an existing schedule was updated in place (`replace`). */
  created: boolean;
}

/** Creates the schedule, or with `replace` updates an existing one of that id in place. */
export async function createSchedule(
  client: Client,
  request: ScheduleRequest,
  options: { replace?: boolean } = {},
): Promise<CreatedSchedule> {
  const scheduleOptions = toScheduleOptions(request);
  const { scheduleId } = scheduleOptions;
  try {
    await client.schedule.create(scheduleOptions);
    return { scheduleId, created: true };
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning && options.replace))
      rethrowAsOptionsError(error, scheduleId);
  }
  // The memo of a schedule cannot change after creation; spec, action, policies and state can.
  const { memo: _memo, scheduleId: _id, state, ...update } = scheduleOptions;
  try {
    await client.schedule.getHandle(scheduleId).update(() => ({
      ...update,
      state: { paused: state?.paused ?? false, ...(state?.note ? { note: state.note } : {}) },
    }));
  } catch (error) {
    rethrowAsOptionsError(error, scheduleId);
  }
  return { scheduleId, created: false };
}

async function handleOf(
  client: Client,
  scheduleId: string,
): Promise<{ handle: ScheduleHandle; description: ScheduleDescription }> {
  const handle = client.schedule.getHandle(scheduleId);
  try {
    return { handle, description: await handle.describe() };
  } catch (error) {
    rethrowAsOptionsError(error, scheduleId);
  }
}

export async function describeSchedule(client: Client, scheduleId: string): Promise<ScheduleDescription> {
  return (await handleOf(client, scheduleId)).description;
}

/** Schedules of the namespace by id; enrichflow's are described (their job and timing), others summarised. */
export async function listSchedules(
  client: Client,
  limit = 100,
): Promise<{ summary: ScheduleSummary; description?: ScheduleDescription }[]> {
  const summaries: ScheduleSummary[] = [];
  for await (const schedule of client.schedule.list()) {
    summaries.push(schedule);
    if (summaries.length >= limit) break;
  }
  summaries.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
  return Promise.all(
    summaries.map(async (summary) => {
      if (!isEnrichflowSchedule(summary)) return { summary };
      // Deleted between list and describe: listed from its summary alone.
      const description = await client.schedule
        .getHandle(summary.scheduleId)
        .describe()
        .catch(() => undefined);
      return description ? { summary, description } : { summary };
    }),
  );
}

export async function pauseSchedule(client: Client, scheduleId: string, note?: string): Promise<void> {
  const { handle } = await handleOf(client, scheduleId);
  await handle.pause(note ?? 'paused with enrichflow schedule pause');
}

export async function unpauseSchedule(client: Client, scheduleId: string, note?: string): Promise<void> {
  const { handle } = await handleOf(client, scheduleId);
  await handle.unpause(note ?? 'unpaused with enrichflow schedule unpause');
}

export async function deleteSchedule(client: Client, scheduleId: string): Promise<void> {
  const { handle } = await handleOf(client, scheduleId);
  try {
    await handle.delete();
  } catch (error) {
    rethrowAsOptionsError(error, scheduleId);
  }
}

export interface TriggerResult {
  /** The run started by the trigger; absent when the overlap policy skipped or buffered it. */
  runId?: string;
  /** Why no run started, when none did within the wait. */
  reason?: string;
}

/**
 * Starts an action of the schedule now and waits (briefly) to learn the run it started. With the
 * `skip` policy and a run in progress, nothing starts, and the result says so.
 */
export async function triggerSchedule(
  client: Client,
  scheduleId: string,
  options: { overlap?: OverlapName; waitMs?: number; pollMs?: number } = {},
): Promise<TriggerResult> {
  const { handle, description: before } = await handleOf(client, scheduleId);
  const known = new Set(before.info.recentActions.map((a) => a.action.workflow.workflowId));
  await handle.trigger(options.overlap ? toOverlapPolicy(options.overlap) : undefined);
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  for (;;) {
    const now = await handle.describe();
    const started = now.info.recentActions.find((a) => !known.has(a.action.workflow.workflowId));
    if (started) return { runId: started.action.workflow.workflowId };
    if (now.info.numActionsSkippedOverlap > before.info.numActionsSkippedOverlap) {
      return {
        reason: `skipped: a run of this schedule is still running (overlap policy ${now.policies.overlap})`,
      };
    }
    if (Date.now() >= deadline) {
      return {
        reason:
          now.info.runningActions.length > 0
            ? `not started yet: a run is in progress (overlap policy ${now.policies.overlap}); it may start when that run ends`
            : 'not started yet; see: enrichflow schedule describe',
      };
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
  }
}

export function isEnrichflowSchedule(schedule: { memo?: Record<string, unknown> | undefined }): boolean {
  return (schedule.memo as Partial<ScheduleMemo> | undefined)?.kind === SCHEDULE_KIND;
}

export interface ScheduledJob {
  jobName: string;
  jobFile?: string;
  input: string;
  output: string;
  datasets: string[];
}

/** The job a schedule runs, read from its current action (so it is right after `--replace`). */
export function scheduledJobOf(description: ScheduleDescription): ScheduledJob | undefined {
  if (!isEnrichflowSchedule(description)) return undefined;
  const [input] = (description.action.args ?? []) as [EnrichRunWorkflowInput | undefined];
  if (!input) return undefined;
  const jobFile = (description.action.memo as { jobFile?: unknown } | undefined)?.jobFile;
  return {
    jobName: input.jobName,
    ...(typeof jobFile === 'string' ? { jobFile } : {}),
    input: input.input.location,
    output: input.output,
    datasets: input.datasets,
  };
}
