// The `enrichflow` command-line program: builds the command tree and is the only place that exits.
import { Command } from 'commander';
import { registerDemoCommand } from './commands/demo.js';
import { registerDevCommand } from './commands/dev.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerToolsCommand } from './commands/tools.js';
import { registerConfigCommand } from './commands/config.js';
import { registerEnrichCommands } from './commands/enrich.js';
import { registerExportCommands } from './commands/export.js';
import { registerRunsCommands } from './commands/runs.js';
import { registerScheduleCommands } from './commands/schedule.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerEnrollmentsCommands } from './commands/enrollments.js';
import { registerEventsCommands } from './commands/events.js';
import { registerWebhooksCommands } from './commands/webhooks.js';
import { exitCodeFor, formatCliError, verbose } from './errors.js';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('enrichflow')
    .description('Durable enrichment of companies and people into warehouse-ready Parquet, on Temporal.')
    .option('--verbose', 'print the stack of an error (also with LOG_LEVEL=debug)')
    .showHelpAfterError()
    .showSuggestionAfterError();
  registerEnrichCommands(program);
  registerExportCommands(program);
  registerRunsCommands(program);
  registerScheduleCommands(program);
  registerEnrollmentsCommands(program);
  registerWebhooksCommands(program);
  registerEventsCommands(program);
  registerWorkerCommand(program);
  registerDemoCommand(program);
  registerDevCommand(program);
  registerSandboxCommand(program);
  registerToolsCommand(program);
  registerConfigCommand(program);
  return program;
}

/**
 * The AWS SDK announces on every start that its future releases need Node 22; the README says so
 * once, so the CLI drops that one warning and keeps every other.
 */
function quietNodeVersionNotice(): void {
  const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.includes('NodeVersionSupportWarning')) return;
    emitWarning(warning, ...rest);
  };
}

export async function main(argv: string[]): Promise<void> {
  quietNodeVersionNotice();
  try {
    // `--verbose` is read from anywhere on the line, before or after the command.
    await buildProgram().parseAsync(argv.filter((a, i) => i < 2 || a !== '--verbose'));
  } catch (error) {
    process.stderr.write(`${formatCliError(error, { verbose: verbose(argv) })}\n`);
    process.exitCode = exitCodeFor(error);
  }
}
