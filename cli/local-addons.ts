// The in-process services that join the local stack: the sandbox Data Service and a worker.
// Kept behind one small seam so `dev`, `demo` and tests start them the same way.
import type { Logger } from '../lib/logger.js';
import type { LocalStack } from '../stack/local-stack.js';

export interface AddOnOptions {
  stack: LocalStack;
  dataDir: string;
  freePorts: boolean;
  sandbox: boolean;
  worker: boolean;
  logger: Logger;
}

export interface RunningAddOns {
  env: Record<string, string>;
  describe: string[];
  stop(): Promise<void>;
}

export const localAddOns = {
  start(_options: AddOnOptions): Promise<RunningAddOns> {
    return Promise.resolve({ env: {}, describe: [], stop: () => Promise.resolve() });
  },
};
