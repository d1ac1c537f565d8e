// The production-like deployment cannot run here (no Docker engine), so its files are checked for what
// would break `docker compose up`: every service, port, variable, volume, file and dependency it names
// is defined; images are pinned; long-running services have health checks; enrichflow commands and
// flags exist; the settings each enrichflow process gets load without error; the image runs as non-root.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../cli/main.js';
import { loadConfig, SETTINGS } from '../../config/index.js';
import { TEMPORAL_SERVER_VERSION } from '../../stack/tools.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

interface Service {
  image?: string;
  build?: { context: string; dockerfile?: string };
  restart?: string;
  profiles?: string[];
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  expose?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] | string; interval?: string; retries?: number };
  deploy?: { replicas?: number | string };
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const services = Object.entries(compose.services);
const names = new Set(Object.keys(compose.services));
const packageVersion = (JSON.parse(read('package.json')) as { version: string }).version;

/** Compose variables `${NAME}`, `${NAME:-default}`, … in any string of the file. */
const INTERPOLATION = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}/g;

/** A value as compose sees it with no `.env`: each `${NAME:-default}` replaced by its default. */
function withDefaults(value: string): string {
  return value.replace(
    INTERPOLATION,
    (_, _name: string, _op: string | undefined, fallback: string | undefined) => fallback ?? '',
  );
}

const isOneShot = (s: Service) => s.restart === 'no';
const isTool = (s: Service) => (s.profiles?.length ?? 0) > 0;
const runsEnrichflow = (s: Service) => s.image?.startsWith('enrichflow:') ?? false;

/** Ports a service listens on inside the network: published container ports and `expose`. */
function listening(service: Service): Set<number> {
  const ports = new Set<number>();
  for (const spec of service.ports ?? []) ports.add(Number(spec.split(':').at(-1)));
  for (const port of service.expose ?? []) ports.add(Number(port));
  return ports;
}

/** Every string a service passes to its process: environment values, command and entrypoint. */
function strings(service: Service): string[] {
  return [
    ...Object.values(service.environment ?? {}),
    ...(service.command ?? []),
    ...(service.entrypoint ?? []),
  ].map(String);
}

describe('docker-compose.yml', () => {
  test('has the deployment the issue asks for', () => {
    for (const name of [
      'postgres',
      'temporal-schema',
      'temporal',
      'temporal-namespace',
      'temporal-ui',
      's3',
      'sandbox',
      'worker',
      'webhooks',
    ]) {
      expect(names, name).toContain(name);
    }
    // Temporal on PostgreSQL, its schema set up before the server starts.
    expect(compose.services.temporal!.environment).toMatchObject({ POSTGRES_SEEDS: 'postgres' });
    expect(read('deploy/temporal/server.yaml')).toMatch(
      /pluginName: postgres12\n[\s\S]*pluginName: postgres12\n/,
    );
    expect(compose.services.temporal!.depends_on).toEqual({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    expect(compose.services['temporal-schema']!.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
    });
  });

  test('images are pinned to exact versions; enrichflow is built here at the package version', () => {
    for (const [name, service] of services) {
      expect(service.image, name).toBeDefined();
      const image = service.image!;
      expect(image, name).not.toMatch(/:latest$/);
      expect(image, `${name}: ${image}`).toMatch(
        /(@sha256:[0-9a-f]{64}$)|(:v?\d+\.\d+\.\d+([-.][\w.]+)?$)|(:\d+\.\d+-[\w.]+$)/,
      );
      if (runsEnrichflow(service)) {
        expect(image).toBe(`enrichflow:${packageVersion}`);
        expect(service.build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
      }
    }
  });

  test('every long-running service has a health check; one-shot jobs do not restart', () => {
    for (const [name, service] of services) {
      if (isOneShot(service) || isTool(service)) {
        expect(service.healthcheck, name).toBeUndefined();
        continue;
      }
      expect(service.restart, name).toBe('unless-stopped');
      const check = service.healthcheck?.test;
      expect(check, name).toBeDefined();
      expect(Array.isArray(check) ? check[0] : check, name).toMatch(/^(CMD|CMD-SHELL)$/);
      expect(service.healthcheck!.retries, name).toBeGreaterThan(0);
    }
  });

  test('depends_on names defined services, with conditions they can meet, and no cycle', () => {
    for (const [name, service] of services) {
      for (const [target, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(names, `${name} -> ${target}`).toContain(target);
        const dependency = compose.services[target]!;
        if (condition === 'service_healthy')
          expect(dependency.healthcheck, `${name} -> ${target}`).toBeDefined();
        else if (condition === 'service_completed_successfully')
          expect(isOneShot(dependency), `${name} -> ${target}`).toBe(true);
        else expect(condition, `${name} -> ${target}`).toBe('service_started');
      }
    }
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (name: string) => {
      if (done.has(name)) return;
      expect(visiting.has(name), `cycle through ${name}`).toBe(false);
      visiting.add(name);
      for (const target of Object.keys(compose.services[name]?.depends_on ?? {})) visit(target);
      visiting.delete(name);
      done.add(name);
    };
    for (const name of names) visit(name);
  });

  test('named volumes are declared (and every declared one is used); mounted files exist', () => {
    const used = new Set<string>();
    for (const [name, service] of services) {
      for (const volume of service.volumes ?? []) {
        const [source = ''] = volume.split(':');
        if (source.startsWith('.') || source.startsWith('/')) {
          expect(existsSync(path.join(ROOT, source)), `${name}: ${source}`).toBe(true);
        } else {
          expect(Object.keys(compose.volumes), `${name}: volume ${source}`).toContain(source);
          used.add(source);
        }
      }
    }
    expect([...used].sort()).toEqual(Object.keys(compose.volumes).sort());
  });

  test('published host ports are unique; the scaled worker publishes none', () => {
    const hostPorts = services.flatMap(([, s]) =>
      (s.ports ?? []).map((p) => p.split(':').slice(0, -1).join(':')),
    );
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
    const worker = compose.services.worker!;
    expect(worker.ports).toBeUndefined();
    expect(Number(withDefaults(String(worker.deploy?.replicas)))).toBeGreaterThanOrEqual(2);
  });

  test('every service:port the deployment refers to is a defined service listening on that port', () => {
    const references: [string, string, number][] = [];
    const collect = (from: string, text: string) => {
      for (const [, host, port] of withDefaults(text).matchAll(
        /(?:\/\/|^|[\s'"[,])([a-z][a-z0-9-]*):(\d{2,5})\b/gm,
      ))
        references.push([from, host!, Number(port)]);
    };
    for (const [name, service] of services) for (const text of strings(service)) collect(name, text);
    collect(
      'prometheus.yml',
      read('deploy/prometheus/prometheus.yml').replace(/names: \[(\w+)\][\s\S]*?port: (\d+)/g, '$1:$2'),
    );
    expect(references.length).toBeGreaterThan(10);
    for (const [from, host, port] of references) {
      expect(names, `${from} refers to ${host}:${port}`).toContain(host);
      expect([...listening(compose.services[host]!)], `${from} refers to ${host}:${port}`).toContain(port);
    }
  });

  test('each process listens where its ports and health check say', () => {
    const published = (name: string) => [...listening(compose.services[name]!)];
    const sandbox = compose.services.sandbox!;
    expect(published('sandbox')).toContain(Number(sandbox.command![sandbox.command!.indexOf('--port') + 1]));
    const webhooks = compose.services.webhooks!;
    expect(published('webhooks')).toContain(Number(webhooks.environment!.ENRICHFLOW_WEBHOOK_PORT));
    expect(webhooks.environment!.ENRICHFLOW_WEBHOOK_HOST).toBe('0.0.0.0');
    const worker = compose.services.worker!;
    const metricsPort = Number(worker.environment!.ENRICHFLOW_METRICS_ADDRESS!.split(':').at(-1));
    expect(published('worker')).toEqual([metricsPort]);
    expect(JSON.stringify(worker.healthcheck!.test)).toContain(`127.0.0.1:${metricsPort}/metrics`);
    for (const [name, service] of services) {
      for (const [, port] of JSON.stringify(service.healthcheck?.test ?? '').matchAll(
        /127\.0\.0\.1:(\d+)/g,
      )) {
        expect([...listening(service)], `${name} health check port ${port}`).toContain(Number(port));
      }
    }
  });

  test('every ENRICHFLOW_* variable is a real setting, and each process gets a configuration that loads', () => {
    const known = new Set<string>(SETTINGS.map((s) => s.env));
    for (const [name, service] of services) {
      const env = service.environment ?? {};
      for (const key of Object.keys(env).filter((k) => k.startsWith('ENRICHFLOW_'))) {
        expect(known, `${name}: ${key}`).toContain(key);
      }
      // The sandbox takes flags, not settings (its environment only sizes Node's heap).
      if (!runsEnrichflow(service) || !Object.keys(env).some((k) => k.startsWith('ENRICHFLOW_'))) continue;
      const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, withDefaults(String(v))]));
      const config = loadConfig({ env: resolved, require: ['ENRICHFLOW_API_KEY'] });
      expect(config.temporal.address, name).toBe('temporal:7233');
      expect(config.s3.endpoint, name).toBe('http://s3:7070');
    }
    // The sandbox accepts the key the workers send.
    const key = withDefaults(compose.services.worker!.environment!.ENRICHFLOW_API_KEY!);
    expect(withDefaults(compose.services.sandbox!.command!.join(' '))).toContain(`--api-key compose:${key}`);
  });

  test('every ${VARIABLE} has a default, so `docker compose up` needs no .env', () => {
    const values: string[] = [];
    const walk = (node: unknown): void => {
      if (typeof node === 'string') values.push(node);
      else if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') Object.values(node).forEach(walk);
    };
    walk(compose);
    const variables = values.flatMap((v) => [...v.matchAll(INTERPOLATION)]);
    expect(variables.length).toBeGreaterThan(5);
    for (const [whole, , operator] of variables) expect(operator, whole).toBe(':-');
  });

  test('enrichflow commands and flags the services run exist in the CLI', () => {
    const program = buildProgram();
    const check = (from: string, args: string[]) => {
      let command = program;
      const words = args.filter((a) => !a.startsWith('-'));
      for (const word of words) {
        const sub = command.commands.find((c) => c.name() === word);
        if (!sub) break;
        command = sub;
      }
      expect(command, `${from}: ${args.join(' ')}`).not.toBe(program);
      const flags = new Set(command.options.map((o) => o.long));
      for (const flag of args.filter((a) => a.startsWith('--')))
        expect(flags, `${from}: ${flag}`).toContain(flag);
    };
    for (const [name, service] of services) {
      if (!runsEnrichflow(service)) continue;
      if (service.command) check(name, service.command.map(withDefaults));
      const shell = (service.entrypoint ?? []).join(' ');
      const cli = /node bin\/enrichflow\.js (.*)$/.exec(withDefaults(shell))?.[1];
      if (cli) check(name, cli.split(/\s+/));
      if (service.entrypoint?.[0] === 'node' && service.entrypoint[1] !== 'bin/enrichflow.js') {
        expect(existsSync(path.join(ROOT, service.entrypoint[1]!)), name).toBe(true);
      }
    }
    check('deploy/jobs', ['run']);
    check('deploy/jobs', ['schedule', 'create', '--cron', '--timezone']);
  });

  test('the job spec shipped for the deployment is valid and reads the seeded sample', async () => {
    const { readJobSpecFile } = await import('../../jobs/job-spec.js');
    const spec = readJobSpecFile(path.join(ROOT, 'deploy/jobs/sample-daily.yaml'));
    const seeded = compose.services['s3-bucket']!.entrypoint!.at(-1)!.split('=')[1];
    expect(spec.input.location).toBe(`s3://enrichflow/${seeded}`);
  });

  test('the set-up scripts are valid shell', () => {
    for (const script of ['deploy/temporal/setup-postgres.sh', 'deploy/temporal/create-namespace.sh']) {
      expect(() => execFileSync('sh', ['-n', path.join(ROOT, script)]), script).not.toThrow();
    }
  });
});

// The cluster test (test/cluster) runs the Temporal server natively, built from source at one version,
// with deploy/temporal's configuration and scripts. Compose and the deployment guide must describe that
// same server: the same version, the same schema steps, the same settings.
describe('docker-compose.yml, docs/deployment.md and the cluster test agree', () => {
  const version = TEMPORAL_SERVER_VERSION.replace(/^v/, '');
  const temporal = compose.services.temporal!;
  const env = temporal.environment ?? {};
  const mounted = (file: string) =>
    (temporal.volumes ?? []).find((v) => v.startsWith(`./deploy/temporal/${file}:`))?.split(':')[1];

  test('one Temporal server version: the tools installer, the test, the images and the guide', () => {
    expect(read('scripts/install-tools.sh')).toContain(
      `TEMPORAL_SERVER_VERSION="\${ENRICHFLOW_TEMPORAL_SERVER_VERSION:-${TEMPORAL_SERVER_VERSION}}"`,
    );
    const temporalImages = services
      .map(([, service]) => service.image ?? '')
      .filter((image) => /^temporalio\/(server|admin-tools):/.test(image));
    expect(temporalImages.length).toBe(3);
    for (const image of temporalImages) expect(image.split(':')[1]).toBe(version);
    const guide = read('docs/deployment.md');
    const named = [...guide.matchAll(/temporalio\/(?:server|admin-tools):([\w.-]+)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThanOrEqual(3);
    expect(new Set(named)).toEqual(new Set([version]));
    expect(guide).toContain(`go.temporal.io/server/cmd/server@${TEMPORAL_SERVER_VERSION}`);
  });

  test('the server reads the configuration file the test starts it with', () => {
    expect(env.TEMPORAL_SERVER_CONFIG_FILE_PATH).toBe(mounted('server.yaml'));
    expect(env.DYNAMIC_CONFIG_FILE_PATH).toBe(mounted('dynamicconfig.yaml'));
    const source = read('stack/temporal-server.ts');
    for (const file of ['server.yaml', 'dynamicconfig.yaml', 'setup-postgres.sh', 'create-namespace.sh'])
      expect(source, file).toContain(`'${file}'`);
    // Every variable compose gives the server is one the configuration reads (or the server itself:
    // the configuration path and the no-authorizer switch), and the other way round for PostgreSQL's.
    const config = read('deploy/temporal/server.yaml');
    expect(config.split('\n')[0]).toBe('# enable-template');
    const reads = new Set([...config.matchAll(/env "(\w+)"/g)].map((m) => m[1]));
    for (const name of Object.keys(env)) {
      if (['TEMPORAL_SERVER_CONFIG_FILE_PATH', 'TEMPORAL_ALLOW_NO_AUTH'].includes(name)) continue;
      expect(reads, name).toContain(name);
    }
    for (const name of ['POSTGRES_SEEDS', 'DB_PORT', 'POSTGRES_USER', 'POSTGRES_PWD'])
      expect(Object.keys(env), name).toContain(name);
  });

  test('the same schema and namespace jobs, against the same PostgreSQL user and password', () => {
    const schema = compose.services['temporal-schema']!;
    expect(schema.entrypoint).toEqual(['/bin/sh', '/deploy/setup-postgres.sh']);
    expect(schema.volumes).toContain('./deploy/temporal/setup-postgres.sh:/deploy/setup-postgres.sh:ro');
    const namespace = compose.services['temporal-namespace']!;
    expect(namespace.volumes).toContain(
      './deploy/temporal/create-namespace.sh:/deploy/create-namespace.sh:ro',
    );
    const postgres = compose.services.postgres!.environment ?? {};
    expect(schema.environment?.POSTGRES_USER).toBe(postgres.POSTGRES_USER);
    expect(env.POSTGRES_USER).toBe(postgres.POSTGRES_USER);
    expect(withDefaults(schema.environment?.SQL_PASSWORD ?? '')).toBe(
      withDefaults(postgres.POSTGRES_PASSWORD ?? ''),
    );
    expect(withDefaults(env.POSTGRES_PWD ?? '')).toBe(withDefaults(postgres.POSTGRES_PASSWORD ?? ''));
    // The test's PostgreSQL cluster has the same superuser and password (stack/postgres.ts defaults).
    const cluster = read('stack/postgres.ts');
    expect(cluster).toContain(`options.user ?? '${postgres.POSTGRES_USER}'`);
    expect(cluster).toContain(`options.password ?? '${withDefaults(postgres.POSTGRES_PASSWORD ?? '')}'`);
    // Schemas come from the tool itself, so they always match the server version.
    const script = read('deploy/temporal/setup-postgres.sh');
    expect(script).toContain('--schema-name postgresql/v12/temporal');
    expect(script).toContain('--schema-name postgresql/v12/visibility');
    const guide = read('docs/deployment.md');
    for (const step of [
      'setup-postgres.sh',
      'create-namespace.sh',
      'deploy/temporal/server.yaml',
      'npm run test:cluster',
    ])
      expect(guide, step).toContain(step);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const lines = dockerfile.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));

  test('multi-stage, from pinned images, running as a non-root user', () => {
    const from = lines.filter((l) => l.startsWith('FROM '));
    expect(from.length).toBeGreaterThanOrEqual(2);
    for (const line of from) expect(line).toMatch(/^FROM node:\d+\.\d+\.\d+-[\w.-]+ AS \w+$/);
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(finalStage).toMatch(/\nUSER (node|\d{3,})\n/);
    expect(finalStage).not.toMatch(/\nUSER root/);
    expect(finalStage).toContain('ENTRYPOINT ["node", "bin/enrichflow.js"]');
    expect(dockerfile).toContain('RUN npm ci');
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  test('everything it copies from the build context exists', () => {
    for (const line of lines.filter((l) => l.startsWith('COPY ') && !l.includes('--from='))) {
      const parts = line
        .split(/\s+/)
        .slice(1)
        .filter((p) => !p.startsWith('--'));
      for (const source of parts.slice(0, -1)) expect(existsSync(path.join(ROOT, source)), line).toBe(true);
    }
    // Every folder the TypeScript build compiles is copied in.
    const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    for (const folder of build.include) expect(dockerfile, folder).toContain(`COPY ${folder} ./${folder}`);
  });

  test('the base image is the pinned build of the newest supported Node line, and engines allow every line', () => {
    const pins: Record<string, string> = Object.fromEntries(
      [...read('scripts/node-lines.sh').matchAll(/^\s+(\d+)\) echo "(\d+\.\d+\.\d+)" ;;$/gm)].map(
        (m): [string, string] => [m[1] ?? '', m[2] ?? ''],
      ),
    );
    const lines = /^NODE_SUPPORTED_LINES="([\d ]+)"$/m.exec(read('scripts/node-lines.sh'))![1]!.split(' ');
    expect(Object.keys(pins).sort()).toEqual([...lines].sort());
    const newest = String(Math.max(...lines.map(Number)));
    const from = dockerfile.split('\n').filter((l) => l.startsWith('FROM '));
    for (const line of from) expect(line).toContain(`FROM node:${pins[newest]}-`);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe(`>=${Math.min(...lines.map(Number))}`);
  });

  test('the build context leaves out local state', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', '.data', '.env']) expect(ignored).toContain(entry);
  });
});
