#!/usr/bin/env node
// Entry of the `enrichflow` command: runs the compiled CLI, or says how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    "enrichflow is not built yet: run 'npm run build' (or 'make setup') in the project folder.\n",
  );
  process.exit(1);
}
const cli = await import(entry.href);
await cli.main(process.argv);
