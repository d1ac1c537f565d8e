// Fixtures of the sandbox tests: a small generated world in a temporary folder, an app over it, and
// request helpers that send the API key and check bodies against the contract.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { checkResponse, type RouteSpec } from '../../contract/index.js';
import { buildSandbox, type SandboxOptions } from '../../sandbox/app.js';

export const API_KEY = 'sandbox-test-key-0001';
export const OTHER_KEY = 'sandbox-test-key-0002';
export const ADMIN_KEY = 'sandbox-test-admin';
/** Small enough to generate in about a second, big enough for every dataset to have rows. */
export const TEST_WORLD = { seed: 'sandbox-tests', businesses: 1500, prospects: 6000 } as const;

export interface TestSandbox {
  app: FastifyInstance;
  dataDir: string;
  close: () => Promise<void>;
}

export function tempDir(prefix = 'sandbox-test-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startTestSandbox(options: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  const { dir, remove } = tempDir();
  const app = await buildSandbox({
    dataDir: dir,
    ...TEST_WORLD,
    apiKeys: [
      { name: 'alpha', key: API_KEY },
      { name: 'beta', key: OTHER_KEY },
    ],
    adminKey: ADMIN_KEY,
    rateLimitPerMinute: 0,
    events: false,
    ...options,
  });
  await app.sandbox.records.settle();
  return {
    app,
    dataDir: dir,
    close: async () => {
      await app.close();
      remove();
    },
  };
}

/** Injects a request with the test API key (unless headers say otherwise). */
export function call(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = { api_key: API_KEY },
): Promise<LightMyRequestResponse> {
  const options: InjectOptions = { method, url, headers };
  if (payload !== undefined) {
    options.payload = typeof payload === 'string' ? payload : JSON.stringify(payload);
    options.headers = { 'content-type': 'application/json', ...headers };
  }
  return app.inject(options);
}

/** The JSON body of a 200 response, after checking it against the route's contract schema. */
export function okBody<T = Record<string, unknown>>(route: RouteSpec, response: LightMyRequestResponse): T {
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json<T>();
  const check = checkResponse(route.response, body);
  expect(check.ok ? [] : check.errors).toEqual([]);
  return body;
}

/** The detail items of a 422 response. */
export function detailOf(
  response: LightMyRequestResponse,
): { loc: (string | number)[]; msg: string; type: string }[] {
  expect(response.statusCode, response.body).toBe(422);
  return response.json<{ detail: { loc: (string | number)[]; msg: string; type: string }[] }>().detail;
}
