// The table of every setting enrichflow reads: environment variable, type, default and meaning.
// The loader, the error messages and the README's configuration table all come from this one list.

export type SettingType = 'string' | 'url' | 'integer' | 'number' | 'boolean' | 'duration-ms';

export interface Setting {
  env: string;
  type: SettingType;
  default?: string;
  /** Secrets are never printed; they may also be read from the file named by `${env}_FILE`. */
  secret?: boolean;
  min?: number;
  description: string;
}

export const SETTINGS = [
  {
    env: 'ENRICHFLOW_TEMPORAL_ADDRESS',
    type: 'string',
    default: '127.0.0.1:7233',
    description: 'Temporal frontend `host:port`.',
  },
  {
    env: 'ENRICHFLOW_TEMPORAL_NAMESPACE',
    type: 'string',
    default: 'default',
    description: 'Temporal namespace.',
  },
  {
    env: 'ENRICHFLOW_TEMPORAL_TLS',
    type: 'boolean',
    default: 'false',
    description: 'Connect to Temporal over TLS (on by itself when an API key is set).',
  },
  {
    env: 'ENRICHFLOW_TEMPORAL_API_KEY',
    type: 'string',
    secret: true,
    description: 'API key for Temporal Cloud.',
  },
  {
    env: 'ENRICHFLOW_TEMPORAL_TLS_CERT',
    type: 'string',
    description: 'Client certificate file for mTLS to Temporal.',
  },
  {
    env: 'ENRICHFLOW_TEMPORAL_TLS_KEY',
    type: 'string',
    description: 'Client key file for mTLS to Temporal.',
  },
  {
    env: 'ENRICHFLOW_TASK_QUEUE',
    type: 'string',
    default: 'enrichflow',
    description: 'Task queue of workflows and non-API activities.',
  },
  {
    env: 'ENRICHFLOW_API_TASK_QUEUE',
    type: 'string',
    default: 'enrichflow-api',
    description: 'Task queue of activities that call the Data Service (carries the shared rate budget).',
  },
  {
    env: 'ENRICHFLOW_API_BASE_URL',
    type: 'url',
    default: 'http://127.0.0.1:8787',
    description: 'Base address of the Data Service (the sandbox by default).',
  },
  {
    env: 'ENRICHFLOW_API_KEY',
    type: 'string',
    secret: true,
    description: 'Data Service API key (or `ENRICHFLOW_API_KEY_FILE`). Required by the worker.',
  },
  {
    env: 'ENRICHFLOW_API_TENANT',
    type: 'string',
    description: 'Optional `tenant` header sent with every call.',
  },
  {
    env: 'ENRICHFLOW_API_RATE_PER_MINUTE',
    type: 'number',
    default: '200',
    min: 0.001,
    description: 'Calls per minute for all workers together (Temporal task-queue rate limit).',
  },
  {
    env: 'ENRICHFLOW_API_TIMEOUT_MS',
    type: 'duration-ms',
    default: '30000',
    min: 1,
    description: 'Per-call timeout for Data Service requests, in milliseconds.',
  },
  {
    env: 'ENRICHFLOW_PRICE_TABLE',
    type: 'string',
    description:
      'YAML or JSON file of credits per returned record per dataset (`default`, `match`, dataset names) for `--dry-run` estimates; 1 per record and 0 for match when unset. `--prices` overrides it.',
  },
  {
    env: 'ENRICHFLOW_S3_ENDPOINT',
    type: 'url',
    description: 'S3 endpoint for an S3-compatible store; unset for AWS.',
  },
  { env: 'ENRICHFLOW_S3_REGION', type: 'string', default: 'us-east-1', description: 'S3 region.' },
  {
    env: 'ENRICHFLOW_S3_FORCE_PATH_STYLE',
    type: 'boolean',
    default: 'false',
    description: 'Path-style S3 addressing (needed by most local S3 servers).',
  },
  {
    env: 'ENRICHFLOW_S3_ACCESS_KEY_ID',
    type: 'string',
    description: 'S3 access key; unset to use the AWS SDK default credential chain.',
  },
  {
    env: 'ENRICHFLOW_S3_SECRET_ACCESS_KEY',
    type: 'string',
    secret: true,
    description: 'S3 secret key (with the access key above).',
  },
  {
    env: 'ENRICHFLOW_DATA_DIR',
    type: 'string',
    default: '.data',
    description: 'Folder for the local stack: Temporal SQLite, S3 objects, sandbox database, logs.',
  },
  {
    env: 'ENRICHFLOW_WORK_DIR',
    type: 'string',
    description: 'Scratch folder for activities (temp files); the OS temp folder when unset.',
  },
  {
    env: 'ENRICHFLOW_WORKER_MAX_ACTIVITIES',
    type: 'integer',
    default: '16',
    min: 1,
    description: 'Concurrent activities per worker process.',
  },
  {
    env: 'ENRICHFLOW_WEBHOOK_SECRETS_DIR',
    type: 'string',
    description:
      'Folder of webhook secret files (mode 0600) written by `webhooks register` and read by `webhooks serve`; default `<ENRICHFLOW_DATA_DIR>/webhooks`.',
  },
  {
    env: 'ENRICHFLOW_WEBHOOK_HOST',
    type: 'string',
    default: '127.0.0.1',
    description: 'Interface the webhook receiver (`webhooks serve`) listens on.',
  },
  {
    env: 'ENRICHFLOW_WEBHOOK_PORT',
    type: 'integer',
    default: '8790',
    min: 0,
    description: 'Port of the webhook receiver (0 = any free port).',
  },
  {
    env: 'ENRICHFLOW_EVENTS_OUTPUT',
    type: 'string',
    description: 'Output prefix where the webhook receiver lands events (`s3://bucket/prefix/` or a folder).',
  },
  {
    env: 'ENRICHFLOW_EVENTS_WINDOW_MS',
    type: 'duration-ms',
    default: '3600000',
    min: 1000,
    description: 'Length of an events window (one Parquet file and manifest per window), in milliseconds.',
  },
  {
    env: 'ENRICHFLOW_METRICS_ADDRESS',
    type: 'string',
    description:
      'Where the worker serves Prometheus metrics (`host:port`, e.g. `0.0.0.0:9464`; path `/metrics`): Temporal SDK metrics plus enrichflow calls, latency, 429s, misses and rows written. Off when unset.',
  },
  {
    env: 'LOG_LEVEL',
    type: 'string',
    default: 'info',
    description: 'pino level: trace, debug, info, warn, error, fatal, silent.',
  },
] as const satisfies readonly Setting[];

export type SettingName = (typeof SETTINGS)[number]['env'];
