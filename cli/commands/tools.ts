// `enrichflow tools`: builds or finds the Temporal CLI and versitygw binaries (scripts/install-tools.sh).
import type { Command } from 'commander';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { resolveTool, TOOL_VERSIONS, type ToolName } from '../../stack/tools.js';

export function registerToolsCommand(program: Command): void {
  program
    .command('tools')
    .description('Build (once, into a versioned cache) or locate the Temporal CLI and versitygw')
    .action(() => {
      const script = fileURLToPath(new URL('../../../scripts/install-tools.sh', import.meta.url));
      const result = spawnSync('bash', [script], { stdio: 'inherit' });
      if (result.status !== 0) {
        process.exitCode = result.status ?? 1;
        return;
      }
      for (const tool of Object.keys(TOOL_VERSIONS) as ToolName[]) {
        process.stdout.write(`${tool} ${TOOL_VERSIONS[tool]}: ${resolveTool(tool)}\n`);
      }
    });
}
