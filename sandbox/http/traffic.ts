// The sandbox's traffic journal: what it received per route, how it answered and how long the answers
// took, read with `GET /_admin/traffic` and cleared with `DELETE /_admin/traffic` (admin key). A test
// or a benchmark counts what the service received without a proxy in front of it.

/** Answer times kept per route; past this, calls and statuses are still counted. */
const KEPT_TIMES = 200_000;

interface RouteTraffic {
  method: string;
  route: string;
  calls: number;
  statuses: Map<number, number>;
  /** Milliseconds from the request's arrival to its answer's end. */
  times: number[];
}

export interface RouteTrafficView {
  method: string;
  route: string;
  calls: number;
  /** Calls per answered status, e.g. `{"200": 840, "429": 10}`. */
  statuses: Record<string, number>;
  median_ms: number;
  p95_ms: number;
  max_ms: number;
}

export interface TrafficView {
  /** When counting started: the sandbox's start or the last `DELETE /_admin/traffic`. */
  since: string;
  calls: number;
  routes: RouteTrafficView[];
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number);

const rounded = (ms: number) => Math.round(ms * 10) / 10;

export class TrafficJournal {
  private routes = new Map<string, RouteTraffic>();
  private since: number;

  constructor(private readonly clock: () => number = Date.now) {
    this.since = clock();
  }

  /** One answered request; `route` is the route's pattern (`/v1/businesses/{id}`), not the raw URL. */
  record(method: string, route: string, status: number, ms: number): void {
    const key = `${method} ${route}`;
    let entry = this.routes.get(key);
    if (!entry) {
      entry = { method, route, calls: 0, statuses: new Map(), times: [] };
      this.routes.set(key, entry);
    }
    entry.calls += 1;
    entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    if (entry.times.length < KEPT_TIMES) entry.times.push(ms);
  }

  reset(): void {
    this.routes.clear();
    this.since = this.clock();
  }

  view(): TrafficView {
    const routes = [...this.routes.values()]
      .sort((a, b) => b.calls - a.calls || a.route.localeCompare(b.route))
      .map((entry): RouteTrafficView => {
        const sorted = [...entry.times].sort((a, b) => a - b);
        return {
          method: entry.method,
          route: entry.route,
          calls: entry.calls,
          statuses: Object.fromEntries([...entry.statuses].map(([status, n]) => [String(status), n])),
          median_ms: rounded(percentile(sorted, 0.5)),
          p95_ms: rounded(percentile(sorted, 0.95)),
          max_ms: rounded(sorted[sorted.length - 1] ?? 0),
        };
      });
    return {
      since: new Date(this.since).toISOString(),
      calls: routes.reduce((sum, r) => sum + r.calls, 0),
      routes,
    };
  }
}
