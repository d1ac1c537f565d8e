// One typed, validated configuration, parsed once at each entry point from the environment and an
// optional file (ENRICHFLOW_CONFIG: JSON or YAML whose keys are the variable names; env wins).
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { SETTINGS, type Setting, type SettingName } from './settings.js';

export { SETTINGS, type Setting, type SettingName } from './settings.js';

/** Thrown when a setting is missing or malformed; the message names each variable and what was expected. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'CONFIG_INVALID';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export interface EnrichflowConfig {
  temporal: {
    address: string;
    namespace: string;
    tls: boolean;
    apiKey: string | undefined;
    tlsCertPath: string | undefined;
    tlsKeyPath: string | undefined;
    taskQueue: string;
    apiTaskQueue: string;
  };
  dataService: {
    baseUrl: string;
    apiKey: string | undefined;
    tenant: string | undefined;
    ratePerMinute: number;
    timeoutMs: number;
  };
  /** Price table file for dry-run credit estimates (`ENRICHFLOW_PRICE_TABLE`); built-in prices when unset. */
  pricing: { tableFile: string | undefined };
  s3: {
    endpoint: string | undefined;
    region: string;
    forcePathStyle: boolean;
    accessKeyId: string | undefined;
    secretAccessKey: string | undefined;
  };
  dataDir: string;
  workDir: string | undefined;
  worker: { maxConcurrentActivities: number };
  /** Prometheus endpoint of the worker (`host:port`); metrics are off when unset. */
  metrics: { address: string | undefined };
  events: {
    /** Folder of webhook secret files; `<dataDir>/webhooks` unless set. */
    secretsDir: string;
    receiverHost: string;
    receiverPort: number;
    output: string | undefined;
    windowMs: number;
  };
  logLevel: string;
}

type Raw = Partial<Record<SettingName, string>>;
type Value = string | number | boolean | undefined;

function describeExpected(setting: Setting): string {
  switch (setting.type) {
    case 'integer':
      return `a whole number${setting.min !== undefined ? ` ≥ ${setting.min}` : ''}`;
    case 'number':
    case 'duration-ms':
      return `a number${setting.min !== undefined ? ` ≥ ${setting.min}` : ''}`;
    case 'boolean':
      return 'true or false';
    case 'url':
      return 'an http(s) URL';
    default:
      return 'a non-empty string';
  }
}

function parseValue(setting: Setting, text: string): Value | Error {
  const bad = () =>
    new Error(
      `${setting.env}: expected ${describeExpected(setting)}, got ${setting.secret ? 'a value' : JSON.stringify(text)}`,
    );
  const trimmed = text.trim();
  switch (setting.type) {
    case 'integer': {
      if (!/^-?\d+$/.test(trimmed)) return bad();
      const n = Number(trimmed);
      return setting.min !== undefined && n < setting.min ? bad() : n;
    }
    case 'number':
    case 'duration-ms': {
      const n = Number(trimmed);
      if (trimmed === '' || !Number.isFinite(n)) return bad();
      return setting.min !== undefined && n < setting.min ? bad() : n;
    }
    case 'boolean': {
      if (/^(true|1|yes|on)$/i.test(trimmed)) return true;
      if (/^(false|0|no|off)$/i.test(trimmed)) return false;
      return bad();
    }
    case 'url': {
      try {
        const url = new URL(trimmed);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return bad();
        return trimmed.replace(/\/+$/, '');
      } catch {
        return bad();
      }
    }
    default:
      return trimmed === '' ? bad() : trimmed;
  }
}

function readConfigFile(file: string): Raw {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`ENRICHFLOW_CONFIG: cannot read ${file}: ${(error as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError([
      `ENRICHFLOW_CONFIG: ${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
    ]);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError([`ENRICHFLOW_CONFIG: ${file} must hold a mapping of setting names to values`]);
  }
  const known = new Set<string>(SETTINGS.map((s) => s.env));
  const raw: Raw = {};
  const problems: string[] = [];
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (!known.has(key)) {
      problems.push(`${key} (in ${file}): unknown setting`);
      continue;
    }
    raw[key as SettingName] = String(value);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return raw;
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** A config file; defaults to ENRICHFLOW_CONFIG. */
  file?: string;
  /** Settings that must be present for this entry point (e.g. the worker needs ENRICHFLOW_API_KEY). */
  require?: SettingName[];
}

export function loadConfig(options: LoadConfigOptions = {}): EnrichflowConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? env.ENRICHFLOW_CONFIG;
  const fromFile = file ? readConfigFile(file) : {};
  const problems: string[] = [];
  const values = new Map<SettingName, Value>();
  for (const setting of SETTINGS as readonly Setting[]) {
    const name = setting.env as SettingName;
    let text = env[name] ?? fromFile[name];
    const fileVar = `${name}_FILE`;
    if (text === undefined && setting.secret && env[fileVar]) {
      try {
        text = readFileSync(env[fileVar], 'utf8').trim();
      } catch (error) {
        problems.push(`${fileVar}: cannot read ${env[fileVar]}: ${(error as Error).message}`);
        continue;
      }
    }
    text ??= setting.default;
    if (text === undefined) {
      if (options.require?.includes(name))
        problems.push(`${name}: required but not set (${setting.description})`);
      values.set(name, undefined);
      continue;
    }
    const value = parseValue(setting, text);
    if (value instanceof Error) problems.push(value.message);
    else values.set(name, value);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const str = (n: SettingName) => values.get(n) as string;
  const opt = (n: SettingName) => values.get(n) as string | undefined;
  const num = (n: SettingName) => values.get(n) as number;
  const bool = (n: SettingName) => values.get(n) as boolean;
  const temporalApiKey = opt('ENRICHFLOW_TEMPORAL_API_KEY');
  return {
    temporal: {
      address: str('ENRICHFLOW_TEMPORAL_ADDRESS'),
      namespace: str('ENRICHFLOW_TEMPORAL_NAMESPACE'),
      tls: bool('ENRICHFLOW_TEMPORAL_TLS') || temporalApiKey !== undefined,
      apiKey: temporalApiKey,
      tlsCertPath: opt('ENRICHFLOW_TEMPORAL_TLS_CERT'),
      tlsKeyPath: opt('ENRICHFLOW_TEMPORAL_TLS_KEY'),
      taskQueue: str('ENRICHFLOW_TASK_QUEUE'),
      apiTaskQueue: str('ENRICHFLOW_API_TASK_QUEUE'),
    },
    dataService: {
      baseUrl: str('ENRICHFLOW_API_BASE_URL'),
      apiKey: opt('ENRICHFLOW_API_KEY'),
      tenant: opt('ENRICHFLOW_API_TENANT'),
      ratePerMinute: num('ENRICHFLOW_API_RATE_PER_MINUTE'),
      timeoutMs: num('ENRICHFLOW_API_TIMEOUT_MS'),
    },
    pricing: { tableFile: opt('ENRICHFLOW_PRICE_TABLE') },
    s3: {
      endpoint: opt('ENRICHFLOW_S3_ENDPOINT'),
      region: str('ENRICHFLOW_S3_REGION'),
      forcePathStyle: bool('ENRICHFLOW_S3_FORCE_PATH_STYLE'),
      accessKeyId: opt('ENRICHFLOW_S3_ACCESS_KEY_ID'),
      secretAccessKey: opt('ENRICHFLOW_S3_SECRET_ACCESS_KEY'),
    },
    dataDir: str('ENRICHFLOW_DATA_DIR'),
    workDir: opt('ENRICHFLOW_WORK_DIR'),
    worker: { maxConcurrentActivities: num('ENRICHFLOW_WORKER_MAX_ACTIVITIES') },
    metrics: { address: opt('ENRICHFLOW_METRICS_ADDRESS') },
    events: {
      secretsDir: opt('ENRICHFLOW_WEBHOOK_SECRETS_DIR') ?? `${str('ENRICHFLOW_DATA_DIR')}/webhooks`,
      receiverHost: str('ENRICHFLOW_WEBHOOK_HOST'),
      receiverPort: num('ENRICHFLOW_WEBHOOK_PORT'),
      output: opt('ENRICHFLOW_EVENTS_OUTPUT'),
      windowMs: num('ENRICHFLOW_EVENTS_WINDOW_MS'),
    },
    logLevel: str('LOG_LEVEL'),
  };
}

/** The configuration as printable text, secrets shown only as set/unset. */
export function describeConfig(config: EnrichflowConfig): Record<string, string> {
  const secret = (v: string | undefined) => (v ? '[set]' : '[unset]');
  return {
    'temporal.address': config.temporal.address,
    'temporal.namespace': config.temporal.namespace,
    'temporal.tls': String(config.temporal.tls),
    'temporal.apiKey': secret(config.temporal.apiKey),
    'dataService.baseUrl': config.dataService.baseUrl,
    'dataService.apiKey': secret(config.dataService.apiKey),
    'dataService.ratePerMinute': String(config.dataService.ratePerMinute),
    's3.endpoint': config.s3.endpoint ?? '(AWS)',
    's3.secretAccessKey': secret(config.s3.secretAccessKey),
    dataDir: config.dataDir,
  };
}
