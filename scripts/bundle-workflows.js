// Bundles the compiled workflows once, at build time, into dist/workflow-bundle.js. A worker started from
// dist/ loads that file instead of running webpack at start, which saves seconds and leaves ~100 MB
// of bundler memory out of every worker process.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';

const workflowsPath = fileURLToPath(new URL('../dist/workflows/index.js', import.meta.url));
const target = fileURLToPath(new URL('../dist/workflow-bundle.js', import.meta.url));
const quiet = () => undefined;
const { code } = await bundleWorkflowCode({
  workflowsPath,
  logger: { trace: quiet, debug: quiet, info: quiet, warn: console.warn, error: console.error, log: quiet },
});
writeFileSync(target, code);
process.stdout.write(`workflow bundle: ${target} (${(code.length / 1024).toFixed(0)} KiB)\n`);
