// Keeps the Temporal SDK's own worker logs at WARN in tests so failures stay readable.
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Already installed in this process by an earlier test file.
}
