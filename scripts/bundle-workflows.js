// Bundles the compiled workflows once, at build time, into dist/workflow-bundle.js. A worker started from
// dist/ loads that file instead of running webpack at start, which saves seconds and leaves ~100 MB
// of bundler memory out of every worker process. A second bundle, dist/workflow-bundle-traced.js, adds
// Temporal's OpenTelemetry workflow interceptors; workers load it only when tracing is on.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';

const workflowsPath = fileURLToPath(new URL('../dist/workflows/index.js', import.meta.url));
const tracingInterceptors = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);
const quiet = () => undefined;
const logger = {
  trace: quiet,
  debug: quiet,
  info: quiet,
  warn: console.warn,
  error: console.error,
  log: quiet,
};
for (const [name, workflowInterceptorModules] of [
  ['workflow-bundle.js', []],
  ['workflow-bundle-traced.js', [tracingInterceptors]],
]) {
  const target = fileURLToPath(new URL(`../dist/${name}`, import.meta.url));
  const { code } = await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules, logger });
  writeFileSync(target, code);
  process.stdout.write(`workflow bundle: ${target} (${(code.length / 1024).toFixed(0)} KiB)\n`);
}
