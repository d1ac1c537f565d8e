// Schedules on the real Temporal dev server: `enrichflow schedule …` creates a schedule of a job spec
// file, describes, lists, pauses and unpauses it; a trigger starts a run with its own run id that an
// in-process worker runs to completion against the real sandbox and S3 server; delete removes it.
import type { Client } from '@temporalio/client';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { stringify } from 'yaml';
import { buildProgram } from '../../cli/main.js';
import type { EnrichflowConfig } from '../../config/index.js';
import { readJobSpecFile } from '../../jobs/job-spec.js';
import {
  createSchedule,
  deleteSchedule,
  describeSchedule,
  listSchedules,
  ScheduleOptionsError,
  triggerSchedule,
} from '../../jobs/schedules.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import type { RunSummary } from '../../pipeline/run-types.js';
import {
  readJson,
  readTable,
  s3Location,
  startTestSandbox,
  startTestWorker,
  temporalClient,
  testConfig,
  uploadFile,
  type TestWorker,
} from '../support/pipeline-harness.js';

const SAMPLE = fileURLToPath(new URL('../../samples/companies.csv', import.meta.url));

let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let worker: TestWorker;
let client: Client;
let jobFile: string;
let output: string;
const suffix = Math.random().toString(36).slice(2, 7);

/** Runs the CLI in-process with the test's configuration; returns what it printed. */
async function cli(...args: string[]): Promise<{ out: string; err: string }> {
  const env = {
    ENRICHFLOW_TEMPORAL_ADDRESS: config.temporal.address,
    ENRICHFLOW_TEMPORAL_NAMESPACE: config.temporal.namespace,
    ENRICHFLOW_TASK_QUEUE: config.temporal.taskQueue,
    ENRICHFLOW_API_TASK_QUEUE: config.temporal.apiTaskQueue,
    ENRICHFLOW_S3_ENDPOINT: config.s3.endpoint ?? '',
    ENRICHFLOW_S3_REGION: config.s3.region,
    ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
    ENRICHFLOW_S3_ACCESS_KEY_ID: config.s3.accessKeyId ?? '',
    ENRICHFLOW_S3_SECRET_ACCESS_KEY: config.s3.secretAccessKey ?? '',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  let out = '';
  let err = '';
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err += String(chunk);
    return true;
  });
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'enrichflow', ...args]);
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    vi.unstubAllEnvs();
  }
  return { out, err };
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  worker = await startTestWorker(config);
  client = await temporalClient();
  const input = `${s3Location('inputs')}companies.csv`;
  await uploadFile(config, input, SAMPLE);
  output = s3Location('scheduled');
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-schedule-'));
  jobFile = path.join(dir, 'daily.yaml');
  writeFileSync(
    jobFile,
    stringify({
      job_name: `daily-${suffix}`,
      input: { location: input },
      datasets: ['firmographics'],
      output,
    }),
  );
});

afterAll(async () => {
  await worker?.stop();
  await client?.connection.close();
  await sandbox?.close();
});

describe('enrichflow schedule', () => {
  const id = () => `daily-${suffix}`;

  test('create: a cron schedule in a time zone, shown by describe and list', async () => {
    const { out, err } = await cli(
      'schedule',
      'create',
      jobFile,
      '--cron',
      '0 6 * * *',
      '--timezone',
      'Europe/Paris',
      '--catchup-window',
      '2h',
      '--note',
      'daily refresh',
    );
    expect(err).toContain(`created schedule ${id()}`);
    expect(out).toContain(`schedule ${id()}`);
    expect(out).toContain('timing:          cron "0 6 * * *" (Europe/Paris)');
    expect(out).toContain('overlap policy:  SKIP');
    expect(out).toContain('catch-up window: 7200s');

    const description = await describeSchedule(client, id());
    expect(description.spec.timezone).toBe('Europe/Paris');
    expect(description.state).toMatchObject({ paused: false, note: 'daily refresh' });
    // The next run is at 06:00 in Paris, whatever the offset from UTC that day.
    const next = description.info.nextActionTimes[0]!;
    const parisHour = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Paris',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    }).format(next);
    expect(parisHour).toBe('06:00');
    expect(next.getTime()).toBeGreaterThan(Date.now());

    const listed = await cli('schedule', 'list');
    const line = listed.out.split('\n').find((l) => l.startsWith(id()));
    expect(line).toMatch(/active\s+cron "0 6 \* \* \*" \(Europe\/Paris\)/);
    expect(line).toContain(`daily-${suffix}: s3://`);
  });

  test('create again: refused unless --replace, which updates the schedule in place', async () => {
    await expect(cli('schedule', 'create', jobFile, '--every', '1d')).rejects.toThrow(
      /already exists; give --replace/,
    );
    const { err } = await cli(
      'schedule',
      'create',
      jobFile,
      '--every',
      '12h',
      '--replace',
      '--overlap',
      'buffer_one',
    );
    expect(err).toContain(`updated schedule ${id()}`);
    const description = await describeSchedule(client, id());
    expect(description.spec.intervals?.map((i) => i.every)).toEqual([43_200_000]);
    expect(description.policies.overlap).toBe('BUFFER_ONE');
    expect((await cli('schedule', 'describe', id())).out).toContain('timing:          every 12h (UTC)');
  });

  test('pause and unpause, with the note kept for the next operator', async () => {
    expect((await cli('schedule', 'pause', id(), '--note', 'credits low')).out).toContain(
      `paused schedule ${id()}`,
    );
    expect((await describeSchedule(client, id())).state).toMatchObject({ paused: true, note: 'credits low' });
    expect((await cli('schedule', 'describe', id())).out).toContain(`schedule ${id()} (PAUSED)`);
    await cli('schedule', 'unpause', id());
    expect((await describeSchedule(client, id())).state.paused).toBe(false);
  });

  test(
    'trigger: each triggered run gets its own run id and runs to completion',
    { timeout: 120_000 },
    async () => {
      const first = await cli('schedule', 'trigger', id());
      const runId = first.out.trim();
      // The schedule id plus the action time: distinct for every action, so runs never collide.
      expect(runId).toMatch(new RegExp(`^${id()}-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));
      const summary = (await client.workflow.getHandle(runId).result()) as RunSummary;
      expect(summary.status).toBe('completed');
      expect(summary.runId).toBe(runId);
      expect(summary.outputPrefix).toBe(`${output}${runId}/`);
      const success = await readJson<{ run_id: string }>(config, `${summary.outputPrefix}_SUCCESS`);
      expect(success.run_id).toBe(runId);
      const stage = summary.stages.find((s) => s.stage === 'firmographics')!;
      expect(stage.records).toBeGreaterThan(0);
      const table = await readTable<{ n: bigint }>(
        config,
        summary.outputPrefix,
        'firmographics',
        'SELECT count(*) AS n FROM t',
      );
      expect(Number(table.rows[0]!.n)).toBe(stage.records);

      // A second action a moment later: a second run with another id, not a clash with the first.
      await new Promise((resolve) => setTimeout(resolve, 1_100 - (Date.now() % 1_000)));
      const second = await triggerSchedule(client, id());
      expect(second.runId).toBeDefined();
      expect(second.runId).not.toBe(runId);
      const again = (await client.workflow.getHandle(second.runId!).result()) as RunSummary;
      expect(again.status).toBe('completed');
      expect(again.stages.find((s) => s.stage === 'firmographics')!.records).toBe(stage.records);

      const described = (await cli('schedule', 'describe', id())).out;
      expect(described).toContain(`${runId}  COMPLETED`);
      expect(described).toContain(`${second.runId}  COMPLETED`);
    },
  );

  test('delete: the schedule is gone; describe and delete then say so', async () => {
    expect((await cli('schedule', 'delete', id())).out).toContain(`deleted schedule ${id()}`);
    const ids = (await listSchedules(client)).map((s) => s.summary.scheduleId);
    expect(ids).not.toContain(id());
    await expect(describeSchedule(client, id())).rejects.toThrow(ScheduleOptionsError);
    await expect(cli('schedule', 'describe', id())).rejects.toThrow(`no schedule "${id()}"`);
    await expect(deleteSchedule(client, id())).rejects.toThrow(/no schedule/);
  });

  test('a cron expression the server cannot read is refused with its reason', async () => {
    await expect(
      createSchedule(client, {
        scheduleId: `bad-${suffix}`,
        spec: readJobSpecFile(jobFile),
        timing: { cron: ['99 * * * *'] },
        taskQueue: config.temporal.taskQueue,
        apiTaskQueue: config.temporal.apiTaskQueue,
      }),
    ).rejects.toThrow(/refused: Minute is not in range \[0-59\]/);
  });
});
