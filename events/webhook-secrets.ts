// Webhook secrets on disk: `webhooks register` writes each partner's secret to a file only its owner
// can read (0600, in a 0700 folder), and the receiver loads every such file, reloading when they
// change (registering again rotates the secret). A secret is never printed or logged.
import { createHash } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { tenantLabel } from '../pipeline/sink-layout.js';
import { deliveryDigest, digestsMatch, secretKey } from './signature.js';

/** What a secret file holds (JSON). */
export interface WebhookSecretRecord {
  partner_id: string;
  /** The `tenant` the webhook was registered under; null when none. */
  tenant: string | null;
  webhook_url: string;
  webhook_secret: string;
  registered_at: string;
  /** The Data Service that issued the secret. */
  service_url: string;
}

/** Thrown when a secret file cannot be read or does not hold a secret record. */
export class WebhookSecretFileError extends Error {
  override readonly name = 'WebhookSecretFileError';
  readonly code = 'WEBHOOK_SECRET_FILE';
}

/** `<dir>/<tenant>/<partner>.json`: one file per (tenant, partner), as the service keys webhooks. */
export function defaultSecretFile(secretsDir: string, tenant: string | null, partnerId: string): string {
  return path.join(secretsDir, tenantLabel(tenant), `${encodeURIComponent(partnerId)}.json`);
}

/** Writes the record with mode 0600, atomically (a reader sees the old file or the new one). */
export async function saveWebhookSecret(file: string, record: WebhookSecretRecord): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(record, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  // An existing file keeps the mode of the one it replaces on some systems; make sure.
  await chmod(file, 0o600);
}

function isRecord(value: unknown): value is WebhookSecretRecord {
  const v = value as Partial<WebhookSecretRecord> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.partner_id === 'string' &&
    typeof v.webhook_secret === 'string' &&
    (v.tenant === null || typeof v.tenant === 'string')
  );
}

export async function readWebhookSecret(file: string): Promise<WebhookSecretRecord> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new WebhookSecretFileError(`${file}: cannot read a secret record (${(error as Error).message})`);
  }
  if (!isRecord(parsed)) throw new WebhookSecretFileError(`${file}: not a webhook secret record`);
  return parsed;
}

/** Every `*.json` file at the given paths (files, or folders searched recursively), sorted. */
async function secretFiles(paths: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const location of paths) {
    let info;
    try {
      info = await stat(location);
    } catch {
      continue;
    }
    if (info.isFile()) {
      found.push(location);
      continue;
    }
    for (const entry of await readdir(location, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.json')) found.push(path.join(entry.parentPath, entry.name));
    }
  }
  return [...new Set(found)].sort();
}

/** One secret the receiver accepts, bound to the partner and tenant it was issued for. */
export interface SecretEntry {
  partnerId: string;
  tenant: string | null;
  file: string;
  key: Buffer;
}

export class SecretRing {
  private entries: SecretEntry[] = [];
  private fingerprint = '';
  private lastCheckMs = 0;

  private constructor(
    private readonly paths: readonly string[],
    private readonly recheckMs: number,
  ) {}

  /** Loads the secret files at `paths`; `recheckMs` throttles reloads triggered by unknown signatures. */
  static async load(paths: readonly string[], recheckMs = 1_000): Promise<SecretRing> {
    const ring = new SecretRing(paths, recheckMs);
    await ring.reload();
    return ring;
  }

  get size(): number {
    return this.entries.length;
  }

  /** Partner and tenant of each loaded secret, for start-up messages (never the secret). */
  describe(): { partner_id: string; tenant: string | null; file: string }[] {
    return this.entries.map((e) => ({ partner_id: e.partnerId, tenant: e.tenant, file: e.file }));
  }

  /** The entry whose secret produced `given` for this timestamp and body; every entry is checked in constant time. */
  match(timestamp: string, rawBody: Uint8Array, given: Buffer): SecretEntry | undefined {
    let found: SecretEntry | undefined;
    for (const entry of this.entries) {
      if (digestsMatch(deliveryDigest(entry.key, timestamp, rawBody), given)) found ??= entry;
    }
    return found;
  }

  /** Re-reads the files when their names, sizes or times changed; at most once per `recheckMs`. */
  async reloadIfChanged(nowMs = Date.now()): Promise<boolean> {
    if (nowMs - this.lastCheckMs < this.recheckMs) return false;
    this.lastCheckMs = nowMs;
    const files = await secretFiles(this.paths);
    const fingerprint = await fingerprintOf(files);
    if (fingerprint === this.fingerprint) return false;
    await this.reload(files, fingerprint);
    return true;
  }

  private async reload(files?: string[], fingerprint?: string): Promise<void> {
    const list = files ?? (await secretFiles(this.paths));
    const entries: SecretEntry[] = [];
    for (const file of list) {
      const record = await readWebhookSecret(file);
      entries.push({
        partnerId: record.partner_id,
        tenant: record.tenant === '' ? null : record.tenant,
        file,
        key: secretKey(record.webhook_secret),
      });
    }
    this.entries = entries;
    this.fingerprint = fingerprint ?? (await fingerprintOf(list));
  }
}

async function fingerprintOf(files: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) {
    try {
      const info = await stat(file);
      hash.update(`${file}\0${info.size}\0${info.mtimeMs}\0`);
    } catch {
      hash.update(`${file}\0gone\0`);
    }
  }
  return hash.digest('hex');
}
