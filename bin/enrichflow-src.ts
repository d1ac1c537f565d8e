// The CLI from TypeScript sources, for development, tests and benchmarks: node --import tsx bin/enrichflow-src.ts <command>
import { main } from '../cli/main.js';

await main(process.argv);
