// `enrichflow config`: prints the effective configuration (secrets as set/unset) or the settings table.
import type { Command } from 'commander';
import { describeConfig, loadConfig, SETTINGS } from '../../config/index.js';

export function registerConfigCommand(program: Command): void {
  const config = program.command('config').description('Show configuration');
  config
    .command('show', { isDefault: true })
    .description('Print the effective configuration; secrets only as [set]/[unset]')
    .action(() => {
      const described = describeConfig(loadConfig());
      for (const [key, value] of Object.entries(described))
        process.stdout.write(`${key.padEnd(28)} ${value}\n`);
    });
  config
    .command('settings')
    .description('List every environment variable enrichflow reads, as a Markdown table')
    .action(() => {
      process.stdout.write('| Variable | Default | Meaning |\n|---|---|---|\n');
      for (const s of SETTINGS) {
        const fallback = 'default' in s ? `\`${s.default}\`` : '';
        process.stdout.write(`| \`${s.env}\` | ${fallback} | ${s.description} |\n`);
      }
    });
}
