// A worker in a process of its own, configured from the environment, for tests that kill it with
// SIGKILL mid-run. Run with: node --import tsx test/support/worker-process.ts
import { main } from '../../cli/main.js';

await main([process.argv[0] ?? 'node', 'enrichflow', 'worker']);
