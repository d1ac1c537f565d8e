// The foundation's promise: a worker on the real Temporal dev server runs a workflow that calls an activity.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import * as activities from '../fixtures/greeting-activities.js';

let connection: Connection;
let nativeConnection: NativeConnection;

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
});

afterAll(async () => {
  await connection?.close();
  await nativeConnection?.close();
});

test('a worker on the dev server runs a workflow that calls an activity', async () => {
  const taskQueue = `foundation-${Date.now()}`;
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: inject('temporalNamespace'),
    taskQueue,
    workflowsPath: fileURLToPath(new URL('../fixtures/greeting-workflow.ts', import.meta.url)),
    activities,
  });
  const client = new Client({ connection, namespace: inject('temporalNamespace') });
  const result: string = await worker.runUntil(
    client.workflow.execute<(name: string) => Promise<string>>('greetingWorkflow', {
      taskQueue,
      workflowId: `greeting-${taskQueue}`,
      args: ['enrichflow'],
    }),
  );
  expect(result).toBe(`Hello, enrichflow, from pid ${process.pid}`);
  const description = await client.workflow.getHandle(`greeting-${taskQueue}`).describe();
  expect(description.status.name).toBe('COMPLETED');
});
