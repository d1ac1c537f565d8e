// Planning test inputs: files in a scratch folder, and `planInput` over one of them with the views it
// leaves (keys, rows and rejects) read back.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { queryRows, withDuckDb } from '../../storage/duckdb.js';
import { planInput } from '../../storage/plan-input.js';
import type { InputSpec } from '../../pipeline/run-types.js';

/** A scratch folder and a writer of files in it. */
export function scratchFiles(prefix: string) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const file = (name: string, content: string | Buffer): string => {
    const full = path.join(dir, name);
    writeFileSync(full, content);
    return full;
  };
  return { dir, file };
}

/** Plans a file; rejects carry their record too when `withRecord`. */
export async function planFile(location: string, spec: Partial<InputSpec> = {}, withRecord = false) {
  return withDuckDb({}, async (connection, scratch) => {
    const summary = await planInput(
      connection,
      { path: location },
      { location, ...spec },
      { tempDir: scratch },
    );
    return {
      summary,
      keys: await queryRows(connection, 'SELECT * FROM keys'),
      rows: await queryRows(connection, 'SELECT * FROM rows ORDER BY row_number'),
      rejects: await queryRows<{ row_number: string; reason: string; record?: string }>(
        connection,
        `SELECT row_number, reason${withRecord ? ', record' : ''} FROM rejects ORDER BY row_number`,
      ),
    };
  });
}
