// Injected faults for testing clients: added latency, 5xx answers, 429 bursts, requests that never get
// an answer, and bodies cut short or made unparseable. Rules select endpoints by operationId or path
// (with `*` wildcards) and fire on every match, on the next N matches (`count`), or with a probability
// drawn from a seeded stream, so tests see the same sequence every run. A `reject` rule answers 422, as
// the service does for a value it refuses, for requests whose body contains a given text (an id). A
// `no_credits` rule answers 403 with the service's insufficient-credits body, as an exhausted key gets;
// removing the rule is the sandbox's way of topping the credits up.
import { Type, type Static } from 'typebox';
import { SeededRandom, hashString } from '../data/random.js';

export const FAULT_KINDS = [
  'latency',
  'error',
  'rate_limit',
  'hang',
  'truncate',
  'malformed',
  'reject',
  'no_credits',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const FaultRuleSchema = Type.Object(
  {
    /** operationId (`bulkEnrichFirmographics`) or path (`/v1/businesses/*`); `*` matches any run of characters. */
    match: Type.String({ minLength: 1 }),
    kind: Type.Enum(FAULT_KINDS),
    /** Chance that a matching request gets the fault, 0..1; default 1. */
    rate: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    /** The fault applies to at most this many requests, then the rule is spent. */
    count: Type.Optional(Type.Integer({ minimum: 1 })),
    /** latency: milliseconds added, fixed or uniform in [min, max]. */
    latencyMs: Type.Optional(
      Type.Union([
        Type.Integer({ minimum: 0, maximum: 600_000 }),
        Type.Object(
          { min: Type.Integer({ minimum: 0 }), max: Type.Integer({ minimum: 0, maximum: 600_000 }) },
          { additionalProperties: false },
        ),
      ]),
    ),
    /** error: HTTP status, 500–599; default 503. */
    status: Type.Optional(Type.Integer({ minimum: 500, maximum: 599 })),
    /** rate_limit: the `Retry-After` seconds; default 1. */
    retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600 })),
    /** reject: only requests whose JSON body contains this text (e.g. one business id) get the 422. */
    bodyContains: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false, title: 'FaultRule' },
);
export type FaultRule = Static<typeof FaultRuleSchema>;

export const FaultConfigSchema = Type.Object(
  {
    rules: Type.Array(FaultRuleSchema, { maxItems: 100 }),
    /** Seed of the probability draws; default 1. */
    seed: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false, title: 'FaultConfig' },
);
export type FaultConfig = Static<typeof FaultConfigSchema>;

interface ActiveRule {
  rule: FaultRule;
  pattern: RegExp;
  remaining: number;
  fired: number;
}

/** What happens to one request: total added latency, and at most one other fault. */
export interface FaultPlan {
  latencyMs: number;
  fault: FaultRule | null;
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`);
}

export class FaultInjector {
  private rules: ActiveRule[] = [];
  private random = new SeededRandom(1, 2, 3, 4);
  private seed = 1;

  constructor(config?: FaultConfig) {
    if (config) this.configure(config);
  }

  /** Replaces every rule and restarts the probability stream. */
  configure(config: FaultConfig): void {
    this.seed = config.seed ?? 1;
    this.random = new SeededRandom(this.seed, hashString('faults'), 0x9e3779b9, 7);
    this.rules = config.rules.map((rule) => ({
      rule,
      pattern: globToRegExp(rule.match),
      remaining: rule.count ?? Infinity,
      fired: 0,
    }));
  }

  /** The rules with how often each fired and how many firings remain (null: unlimited). */
  describe(): { seed: number; rules: (FaultRule & { fired: number; remaining: number | null })[] } {
    return {
      seed: this.seed,
      rules: this.rules.map((active) => ({
        ...active.rule,
        fired: active.fired,
        remaining: Number.isFinite(active.remaining) ? active.remaining : null,
      })),
    };
  }

  get active(): boolean {
    return this.rules.some((rule) => rule.remaining > 0);
  }

  /** Decides the faults of a request to `operationId` at `path` (route pattern or URL path). */
  plan(operationId: string | undefined, path: string): FaultPlan {
    const plan: FaultPlan = { latencyMs: 0, fault: null };
    for (const active of this.rules) {
      if (active.remaining <= 0) continue;
      if (active.rule.kind === 'reject') continue; // needs the body: see `rejection`
      if (!(operationId !== undefined && active.pattern.test(operationId)) && !active.pattern.test(path))
        continue;
      if (active.rule.kind !== 'latency' && plan.fault) continue;
      const rate = active.rule.rate ?? 1;
      if (rate < 1 && this.random.next() >= rate) continue;
      active.remaining -= 1;
      active.fired += 1;
      if (active.rule.kind === 'latency') plan.latencyMs += this.latencyOf(active.rule);
      else plan.fault = active.rule;
    }
    return plan;
  }

  /** The `reject` rule that refuses this request's body, if any (and counts it as fired). */
  rejection(operationId: string | undefined, path: string, body: string): FaultRule | null {
    for (const active of this.rules) {
      if (active.rule.kind !== 'reject' || active.remaining <= 0) continue;
      if (!(operationId !== undefined && active.pattern.test(operationId)) && !active.pattern.test(path))
        continue;
      if (active.rule.bodyContains !== undefined && !body.includes(active.rule.bodyContains)) continue;
      const rate = active.rule.rate ?? 1;
      if (rate < 1 && this.random.next() >= rate) continue;
      active.remaining -= 1;
      active.fired += 1;
      return active.rule;
    }
    return null;
  }

  private latencyOf(rule: FaultRule): number {
    const latency = rule.latencyMs ?? 1000;
    if (typeof latency === 'number') return latency;
    const low = Math.min(latency.min, latency.max);
    const high = Math.max(latency.min, latency.max);
    return low + Math.floor(this.random.next() * (high - low + 1));
  }
}
