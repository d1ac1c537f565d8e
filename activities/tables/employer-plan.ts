// The employers of a people run: each matched row's business id, from the row's own `business_id`
// column when it has one, else from the person's profile. The ids go into `prospect_matches` as its
// `business_id` column (the link a warehouse joins people to employers by) and, deduplicated across
// people, into the id plan of each employer dataset. Only ids are read and written here: no email,
// phone or name.
import path from 'node:path';
import type { ColumnMapping } from '../../storage/match-keys.js';
import type {
  EmployerPlanSummary,
  EnrichDataset,
  PendingBatches,
  RunLocation,
} from '../../pipeline/run-types.js';
import { cancellationSignal, heartbeat } from '../attempt.js';
import { queryRows, sqlIdent, sqlString } from '../../storage/duckdb.js';
import { writeParquetTable } from '../parquet-tables.js';
import { runLayout } from '../../pipeline/run-layout.js';
import { downloadAll, RunFiles } from '../../storage/run-files.js';
import { planDatasetIds } from './dataset-ids.js';
import { duckFor, type ActivityDeps, type RunPlans } from '../run-plans.js';

export function createEmployerPlanActivities(deps: ActivityDeps, plans: RunPlans) {
  const { resolveStore } = deps;
  const duck = duckFor(deps);

  return {
    /** Links matched people to employers and plans the employer datasets' id batches. */
    buildEmployerPlan: async ({
      run,
      datasets,
      append = false,
      maxAgeMs,
      asOf,
    }: {
      run: RunLocation;
      /** The run's business datasets. */
      datasets: EnrichDataset[];
      /** After a retry: keep the plan files and add batches for employers they lack. */
      append?: boolean;
      maxAgeMs?: number;
      asOf?: number;
    }): Promise<EmployerPlanSummary & { appended: PendingBatches[] }> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const { columns } = await files.getJson<{ columns?: ColumnMapping }>(runLayout.planSummary);
      const employerColumn = columns?.fields.business_id;
      // One DuckDB thread: this runs while the people's later datasets call the service.
      return duck(
        async (connection, scratch) => {
          const local = async (table: string) =>
            downloadAll(
              files,
              await files.list(runLayout.tablePrefix(table)),
              path.join(scratch, `in-${table}`),
              (n) => heartbeat({ table, downloaded: n }),
            );
          const matchParts = await local('prospect_matches');
          const profileParts = datasets.length ? await local('profiles') : [];
          const parquet = (parts: string[]) => `read_parquet([${parts.map(sqlString).join(', ')}])`;
          // A rewrite (after a retry) replaces the link column the last one added.
          await connection.run(`CREATE TABLE people AS SELECT * FROM ${parquet(matchParts)}`);
          const described = await queryRows<{ column_name: string }>(connection, 'DESCRIBE people');
          if (described.some((c) => c.column_name === 'business_id'))
            await connection.run('ALTER TABLE people DROP COLUMN business_id');
          await connection.run(
            profileParts.length
              ? `CREATE TABLE profile_employers AS SELECT prospect_id, any_value(business_id) AS business_id
                 FROM ${parquet(profileParts)} WHERE business_id IS NOT NULL GROUP BY prospect_id`
              : 'CREATE TABLE profile_employers (prospect_id VARCHAR, business_id VARCHAR)',
          );
          // The input's ids were checked when the run was planned (a malformed one rejects its row).
          const given = employerColumn
            ? `nullif(lower(trim(p.${sqlIdent(`input_${employerColumn}`)})), '')`
            : 'NULL::VARCHAR';
          await connection.run(
            `CREATE TABLE linked AS
             SELECT p.*, CASE WHEN p.prospect_id IS NULL THEN NULL ELSE coalesce(${given}, e.business_id) END AS business_id,
                    CASE WHEN p.prospect_id IS NULL THEN NULL WHEN ${given} IS NOT NULL THEN 'input'
                         WHEN e.business_id IS NOT NULL THEN 'profile' END AS employer_source
             FROM people p LEFT JOIN profile_employers e ON e.prospect_id = p.prospect_id`,
          );
          await writeParquetTable(
            connection,
            files,
            'prospect_matches',
            'SELECT * EXCLUDE (employer_source) FROM linked ORDER BY row_number',
            scratch,
          );
          await connection.run(
            `CREATE TABLE employer_ids AS SELECT business_id AS id FROM linked WHERE business_id IS NOT NULL
             GROUP BY business_id ORDER BY min(row_number)`,
          );
          const [counts] = await queryRows<{ ids: number; input: number; profile: number; none: number }>(
            connection,
            `SELECT (SELECT count(*) FROM employer_ids) AS ids,
                  count(*) FILTER (WHERE employer_source = 'input') AS input,
                  count(*) FILTER (WHERE employer_source = 'profile') AS profile,
                  count(*) FILTER (WHERE prospect_id IS NOT NULL AND employer_source IS NULL) AS none
             FROM linked`,
          );
          const uniqueIds = Number(counts?.ids ?? 0);
          const { stages, appended } = await planDatasetIds(connection, files, scratch, plans, {
            datasets,
            idColumn: 'business_id',
            idTable: 'employer_ids',
            uniqueIds,
            output: resolveStore(run.output),
            planName: 'employers',
            append,
            ...(maxAgeMs !== undefined ? { maxAgeMs } : {}),
            ...(asOf !== undefined ? { asOf } : {}),
          });
          return {
            uniqueIds,
            rowsFromInput: Number(counts?.input ?? 0),
            rowsFromProfile: Number(counts?.profile ?? 0),
            rowsWithout: Number(counts?.none ?? 0),
            stages,
            appended,
          };
        },
        { threads: 1 },
      );
    },
  };
}
