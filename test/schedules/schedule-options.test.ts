// What `schedule create` turns flags into, before anything reaches Temporal: timing, policies, the run
// workflow action, and the messages an operator sees for bad flags.
import { describe, expect, test } from 'vitest';
import { validateJobSpec } from '../../jobs/job-spec.js';
import {
  describeSpec,
  parseOverlap,
  ScheduleOptionsError,
  toScheduleOptions,
  toScheduleSpec,
  type ScheduleRequest,
} from '../../jobs/schedules.js';
import type { EnrichRunWorkflowInput } from '../../workflows/enrich-run.js';

const spec = validateJobSpec(
  {
    job_name: 'acme-daily',
    input: { location: 's3://bucket/in/companies.csv' },
    datasets: ['firmographics', 'technographics'],
    output: 's3://bucket/enriched/',
    window_size: 8,
  },
  'test',
);

const request = (overrides: Partial<ScheduleRequest> = {}): ScheduleRequest => ({
  spec,
  timing: { cron: ['0 6 * * *'] },
  taskQueue: 'q',
  apiTaskQueue: 'q-api',
  ...overrides,
});

describe('schedule options', () => {
  test('the action starts the run workflow with the job as input; the schedule id is the job name', () => {
    const options = toScheduleOptions(request({ jobFile: 'jobs/acme.yaml' }));
    expect(options.scheduleId).toBe('acme-daily');
    expect(options.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'enrichRunWorkflow',
      workflowId: 'acme-daily',
      taskQueue: 'q',
    });
    const [input] = options.action.args as [EnrichRunWorkflowInput];
    expect(input).toMatchObject({
      jobName: 'acme-daily',
      input: { location: 's3://bucket/in/companies.csv' },
      output: 's3://bucket/enriched/',
      datasets: ['firmographics', 'technographics'],
      windowSize: 8,
      apiTaskQueue: 'q-api',
    });
    expect(options.memo).toEqual({ kind: 'enrichflow-run' });
    // Runs started by the schedule carry the memo `runs list` shows, and the job file they came from.
    expect(options.action.memo).toEqual({
      jobName: 'acme-daily',
      input: 's3://bucket/in/companies.csv',
      output: 's3://bucket/enriched/',
      datasets: 'firmographics,technographics',
      jobFile: 'jobs/acme.yaml',
    });
  });

  test('defaults: skip overlapping runs, catch up for a day, do not pause on failure, active', () => {
    const options = toScheduleOptions(request());
    expect(options.policies).toEqual({ overlap: 'SKIP', catchupWindow: 86_400_000, pauseOnFailure: false });
    expect(options.state).toEqual({ paused: false });
  });

  test('given policies, time zone, intervals with offsets, an id, a paused start with a note', () => {
    const options = toScheduleOptions(
      request({
        scheduleId: 'acme-6h',
        timing: { every: ['6h', '1d/6h'], timezone: 'Europe/Paris' },
        policy: { overlap: parseOverlap('buffer-one'), catchupWindow: '2h', pauseOnFailure: true },
        paused: true,
        note: 'waiting for credits',
      }),
    );
    expect(options.spec).toEqual({
      intervals: [{ every: 21_600_000 }, { every: 86_400_000, offset: 21_600_000 }],
      timezone: 'Europe/Paris',
    });
    expect(options.policies).toEqual({
      overlap: 'BUFFER_ONE',
      catchupWindow: 7_200_000,
      pauseOnFailure: true,
    });
    expect(options.state).toEqual({ paused: true, note: 'waiting for credits' });
    expect(options.action.workflowId).toBe('acme-6h');
  });

  test('bad flags are named in the message', () => {
    const refused = (overrides: Partial<ScheduleRequest>) => {
      try {
        toScheduleOptions(request(overrides));
      } catch (error) {
        expect(error).toBeInstanceOf(ScheduleOptionsError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused({ timing: {} })).toMatch(/give --cron .* or --every/);
    expect(refused({ timing: { cron: ['0 6 * *'] } })).toMatch(/--cron: "0 6 \* \*" has 4 fields/);
    expect(refused({ timing: { every: ['soon'] } })).toMatch(/--every: "soon" is not a duration/);
    expect(refused({ timing: { every: ['500ms'] } })).toMatch(/--every: "500ms" is shorter than 1s/);
    expect(refused({ timing: { cron: ['@daily'], timezone: 'Mars/Olympus' } })).toMatch(
      /--timezone: "Mars\/Olympus" is not an IANA time zone/,
    );
    expect(refused({ policy: { catchupWindow: '5s' } })).toMatch(
      /--catchup-window: "5s" is shorter than 10s/,
    );
    expect(refused({ scheduleId: 'has space' })).toMatch(/--id: "has space"/);
    expect(() => parseOverlap('sometimes')).toThrow(/--overlap: "sometimes" is not an overlap policy/);
  });

  test('timing reads back as written, from the calendars the server compiles cron into', () => {
    const all = <T>(start: T, end: T) => [{ start, end, step: 1 }];
    const at = (n: number) => [{ start: n, end: n, step: 1 }];
    const calendar = {
      second: at(0),
      minute: at(0),
      hour: at(6),
      dayOfMonth: all(1, 31),
      month: all('JANUARY' as const, 'DECEMBER' as const),
      year: [],
      dayOfWeek: [{ start: 'MONDAY' as const, end: 'FRIDAY' as const, step: 1 }],
      comment: '',
    };
    expect(
      describeSpec({
        calendars: [calendar, { ...calendar, minute: [{ start: 0, end: 59, step: 15 }], hour: all(0, 23) }],
        intervals: [
          { every: 43_200_000, offset: 0 },
          { every: 86_400_000, offset: 21_600_000 },
        ],
        timezone: 'Europe/Paris',
      }),
    ).toBe('cron "0 6 * * 1-5", cron "*/15 * * * 1-5", every 12h, every 1d/6h (Europe/Paris)');
    expect(describeSpec({ intervals: [{ every: 90_000, offset: 0 }] })).toBe('every 90s (UTC)');
  });

  test('cron shorthands pass through to the server', () => {
    expect(toScheduleSpec({ cron: ['@hourly'] })).toEqual({ cronExpressions: ['@hourly'] });
  });
});
