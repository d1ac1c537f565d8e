// Finds the Go-built servers of the local stack: an explicit env var, then the versioned cache that
// scripts/install-tools.sh fills, then PATH. Versions here must match the installer's defaults.
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

export const TOOL_VERSIONS = { temporal: 'v1.5.1', versitygw: 'v1.7.0' } as const;
export type ToolName = keyof typeof TOOL_VERSIONS;

const ENV_VARS: Record<ToolName, string> = {
  temporal: 'ENRICHFLOW_TEMPORAL_BIN',
  versitygw: 'ENRICHFLOW_VERSITYGW_BIN',
};

/** Thrown when a tool binary is neither configured, cached, nor on PATH. */
export class ToolNotFoundError extends Error {
  override readonly name = 'ToolNotFoundError';
  readonly code = 'TOOL_NOT_FOUND';
  constructor(readonly tool: ToolName) {
    super(
      `${tool} ${TOOL_VERSIONS[tool]} was not found. Run 'npm run tools' (or 'make setup') to build it into ` +
        `${toolsCacheDir()}, or set ${ENV_VARS[tool]} to an existing binary.`,
    );
  }
}

export function toolsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ENRICHFLOW_TOOLS_DIR) return env.ENRICHFLOW_TOOLS_DIR;
  const cacheHome = env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(cacheHome, 'enrichflow', 'tools');
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function resolveTool(tool: ToolName, env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[ENV_VARS[tool]];
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw new ToolNotFoundError(tool);
  }
  const cached = path.join(toolsCacheDir(env), tool, TOOL_VERSIONS[tool], tool);
  if (isExecutable(cached)) return cached;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, tool);
    if (isExecutable(candidate)) return candidate;
  }
  throw new ToolNotFoundError(tool);
}

/**
 * The Temporal server and its SQL schema tool, built from one module by `install-tools.sh --cluster`
 * into `<cache>/temporal-server/<version>/` (only the cluster test needs them). The version must match
 * the installer's TEMPORAL_SERVER_VERSION, docker-compose.yml and docs/deployment.md.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.30.6';
export type ClusterToolName = 'temporal-server' | 'temporal-sql-tool';

export function resolveClusterTool(tool: ClusterToolName, env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.ENRICHFLOW_TEMPORAL_SERVER_BIN;
  const dir = configured
    ? path.dirname(configured)
    : path.join(toolsCacheDir(env), 'temporal-server', TEMPORAL_SERVER_VERSION);
  const file = configured && tool === 'temporal-server' ? configured : path.join(dir, tool);
  if (isExecutable(file)) return file;
  throw new Error(
    `${tool} ${TEMPORAL_SERVER_VERSION} was not found at ${file}. Build it with 'bash scripts/install-tools.sh --cluster' ` +
      `(or set ENRICHFLOW_TEMPORAL_SERVER_BIN to a temporal-server binary with temporal-sql-tool beside it).`,
  );
}
