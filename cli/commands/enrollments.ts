// `enrichflow enrollments create|list|update|delete`: event enrollments for businesses given as
// arguments, a run's `matches` table or a Parquet table. Any number of ids goes under one
// `enrollment_key`: the service takes 20 per enrollment, so the key names a family of enrollments that
// all carry it (and every delivery names its key). Event types are checked before any call.
import type { Command } from 'commander';
import { checkEnrollmentKey, parseEventTypes } from '../../events/enrollment-plan.js';
import {
  createEnrollmentFamily,
  deleteEnrollmentFamily,
  listEnrollmentFamilies,
  syncEnrollmentFamily,
  type SyncResult,
} from '../../events/enrollments.js';
import { UsageError } from '../errors.js';
import {
  asUsageError,
  collectIds,
  resolveBusinessIds,
  serviceClient,
  withRetries,
  type IdSourceFlags,
  type ServiceFlags,
} from './events-shared.js';

interface WriteFlags extends IdSourceFlags, ServiceFlags {
  key: string;
  eventTypes?: string;
  json: boolean;
}

function progress(done: number, total: number): void {
  if (total > 5 && (done === total || done % 25 === 0)) process.stderr.write(`  ${done}/${total} calls\n`);
}

function report(result: SyncResult, key: string, json: boolean): void {
  const { plan } = result;
  if (json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          enrollment_key: key,
          enrollment_ids: result.enrollmentIds,
          business_ids: result.businessIds,
          created: plan.create.length,
          updated: plan.update.length,
          deleted: plan.delete.length,
          unchanged: plan.unchanged.length,
        },
        null,
        2,
      )}\n`,
    );
    return;
  }
  process.stdout.write(
    `enrollment key "${key}": ${result.businessIds} businesses in ${result.enrollmentIds.length} enrollment(s) ` +
      `(${plan.create.length} created, ${plan.update.length} updated, ${plan.delete.length} deleted, ${plan.unchanged.length} unchanged)\n`,
  );
}

function withIdOptions(command: Command): Command {
  return command
    .option('--business-ids <ids>', 'business ids, comma-separated (repeatable)', collectIds)
    .option('--from-run <run>', "ids of a finished run's matches table")
    .option('--from-parquet <location>', 'ids from the business_id column of a Parquet file or folder');
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asUsageError(error);
  }
}

export function registerEnrollmentsCommands(program: Command): void {
  const enrollments = program
    .command('enrollments')
    .description('Event enrollments: which businesses and event types are delivered to your webhook');

  withIdOptions(
    enrollments
      .command('create')
      .description('Enroll businesses for event types under one enrollment key (20 ids per enrollment)')
      .requiredOption(
        '--key <enrollment_key>',
        'the key every enrollment of this set carries (≥ 4 characters)',
      )
      .requiredOption('--event-types <types>', 'comma-separated event types, or "all"'),
  )
    .option('--tenant <tenant>', 'tenant header (default: ENRICHFLOW_API_TENANT)')
    .option('--json', 'print the result as JSON', false)
    .action(async (flags: WriteFlags) =>
      guarded(async () => {
        const key = checkEnrollmentKey(flags.key);
        const eventTypes = parseEventTypes(flags.eventTypes ?? '');
        const { config, client } = serviceClient(flags);
        try {
          const businessIds = await resolveBusinessIds(config, flags);
          const result = await createEnrollmentFamily(
            client,
            { key, eventTypes, businessIds },
            { call: withRetries, onProgress: progress },
          );
          report(result, key, flags.json);
        } finally {
          await client.close();
        }
      }),
    );

  enrollments
    .command('list')
    .description('List enrollments, one line per enrollment key')
    .option('--key <enrollment_key>', 'only this key')
    .option('--tenant <tenant>', 'tenant header (default: ENRICHFLOW_API_TENANT)')
    .option('--json', 'print every enrollment key with its ids as JSON', false)
    .action(async (flags: ServiceFlags & { key?: string; json: boolean }) =>
      guarded(async () => {
        const { client } = serviceClient(flags);
        try {
          const families = (await listEnrollmentFamilies(client, withRetries)).filter(
            (family) => flags.key === undefined || family.enrollment_key === flags.key,
          );
          if (flags.json) {
            process.stdout.write(`${JSON.stringify(families, null, 2)}\n`);
            return;
          }
          if (families.length === 0) {
            process.stdout.write('no enrollments\n');
            return;
          }
          const rows = families.map((f) => [
            f.enrollment_key,
            String(f.enrollment_ids.length),
            String(new Set(f.business_ids).size),
            f.event_types.length > 3
              ? `${f.event_types.slice(0, 3).join(',')},… (${f.event_types.length})`
              : f.event_types.join(','),
          ]);
          const header = ['KEY', 'ENROLLMENTS', 'BUSINESSES', 'EVENT TYPES'];
          const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
          for (const row of [header, ...rows]) {
            process.stdout.write(
              `${row
                .map((c, i) => c.padEnd(widths[i] ?? 0))
                .join('  ')
                .trimEnd()}\n`,
            );
          }
        } finally {
          await client.close();
        }
      }),
    );

  withIdOptions(
    enrollments
      .command('update')
      .description(
        "Make a key's enrollments hold exactly the given ids and/or event types (ids that stay keep their enrollment)",
      )
      .requiredOption('--key <enrollment_key>', 'the enrollment key to change')
      .option('--event-types <types>', 'comma-separated event types, or "all" (default: unchanged)'),
  )
    .option('--tenant <tenant>', 'tenant header (default: ENRICHFLOW_API_TENANT)')
    .option('--json', 'print the result as JSON', false)
    .action(async (flags: WriteFlags) =>
      guarded(async () => {
        const key = checkEnrollmentKey(flags.key);
        const eventTypes = flags.eventTypes === undefined ? undefined : parseEventTypes(flags.eventTypes);
        const hasIds = Boolean(flags.businessIds?.length || flags.fromRun || flags.fromParquet);
        if (!eventTypes && !hasIds)
          throw new UsageError('nothing to update: give --event-types and/or business ids');
        const { config, client } = serviceClient(flags);
        try {
          const businessIds = hasIds ? await resolveBusinessIds(config, flags) : undefined;
          const result = await syncEnrollmentFamily(
            client,
            { key, ...(eventTypes ? { eventTypes } : {}), ...(businessIds ? { businessIds } : {}) },
            { call: withRetries, onProgress: progress },
          );
          report(result, key, flags.json);
        } finally {
          await client.close();
        }
      }),
    );

  enrollments
    .command('delete')
    .description('Delete every enrollment of a key, or single enrollments by id')
    .option('--key <enrollment_key>', 'delete all enrollments with this key')
    .option('--id <enrollment_id>', 'delete this enrollment (repeatable)', collectIds)
    .option('--tenant <tenant>', 'tenant header (default: ENRICHFLOW_API_TENANT)')
    .action(async (flags: ServiceFlags & { key?: string; id?: string[] }) =>
      guarded(async () => {
        if (!flags.key === !flags.id?.length) throw new UsageError('give either --key or --id');
        const { client } = serviceClient(flags);
        try {
          if (flags.key) {
            const count = await deleteEnrollmentFamily(client, flags.key, withRetries);
            if (count === 0) throw new UsageError(`no enrollments with key "${flags.key}"`);
            process.stdout.write(`deleted ${count} enrollment(s) with key "${flags.key}"\n`);
            return;
          }
          for (const id of flags.id ?? []) {
            await withRetries('delete enrollment', () => client.deleteEnrollments({ enrollment_id: id }));
            process.stdout.write(`deleted enrollment ${id}\n`);
          }
        } finally {
          await client.close();
        }
      }),
    );
}
