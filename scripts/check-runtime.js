// Checks that this Node.js runs enrichflow's native and version-sensitive dependencies, for CI on each
// supported line: DuckDB and the Temporal core bridge (both N-API binaries) load and work, and the AWS
// SDK builds a client without warning about the Node version. Exits 1 on the first failure.
//   node scripts/check-runtime.js
const warnings = [];
process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message.split('\n')[0]}`));

const checks = {
  async duckdb() {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const reader = await connection.runAndReadAll('SELECT sum(range)::INTEGER AS n FROM range(1000)');
    const n = reader.getRowObjects()[0]?.n;
    connection.closeSync();
    instance.closeSync();
    if (n !== 499500) throw new Error(`unexpected result ${String(n)}`);
    return 'ran a query';
  },
  async temporal() {
    // Creating the runtime starts the Rust core (native module) with its own threads.
    const { Runtime, DefaultLogger } = await import('@temporalio/worker');
    const runtime = Runtime.install({ logger: new DefaultLogger('ERROR') });
    await runtime.shutdown();
    return 'core bridge runtime started and shut down';
  },
  async awsSdk() {
    const { S3Client, ListBucketsCommand } = await import('@aws-sdk/client-s3');
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9',
      credentials: { accessKeyId: 'check', secretAccessKey: 'check' },
      maxAttempts: 1,
    });
    // The version warning is emitted when the first command is sent; nothing listens at the endpoint.
    await client.send(new ListBucketsCommand({})).catch(() => undefined);
    client.destroy();
    return 'client built and sent a command';
  },
};

let failed = false;
for (const [name, check] of Object.entries(checks)) {
  try {
    console.log(`[runtime ${process.version}] ${name}: ${await check()}`);
  } catch (error) {
    failed = true;
    console.error(
      `[runtime ${process.version}] ${name}: FAILED ${error instanceof Error ? error.stack : error}`,
    );
  }
}
// Warnings are emitted on the next tick.
await new Promise((resolve) => setImmediate(resolve));
for (const warning of warnings) {
  failed = true;
  console.error(`[runtime ${process.version}] warning: ${warning}`);
}
process.exit(failed ? 1 : 0);
