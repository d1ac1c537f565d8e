// HTTP conventions the service keeps and fastify does not by default: a known path asked with a method
// it does not serve is a 405 naming the methods it does serve (header `Allow`), not a 404.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendJson } from './context.js';

/** A registered path as a matcher: `:name` segments match any one segment; a trailing slash is optional. */
function pathMatcher(url: string): RegExp {
  const trimmed = url.length > 1 ? url.replace(/\/$/, '') : url;
  const pattern = trimmed
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, (c) => `\\${c}`),
    )
    .join('/');
  return new RegExp(`^${pattern}/?$`);
}

/** Methods per registered path, collected as routes are added (register before any route). */
export class RouteMethods {
  private readonly routes = new Map<string, { matcher: RegExp; methods: Set<string> }>();

  constructor(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      let entry = this.routes.get(route.url);
      if (!entry) {
        entry = { matcher: pathMatcher(route.url), methods: new Set() };
        this.routes.set(route.url, entry);
      }
      for (const method of [route.method].flat()) entry.methods.add(method);
    });
  }

  /** The methods served at a concrete path, sorted; empty when no route has this path. */
  allowedAt(path: string): string[] {
    const methods = new Set<string>();
    for (const { matcher, methods: served } of this.routes.values()) {
      if (matcher.test(path)) served.forEach((method) => methods.add(method));
    }
    return [...methods].sort();
  }

  /** Not-found handler: 405 with `Allow` for a known path, else FastAPI's 404 body. */
  notFound = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = this.allowedAt(path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendJson(reply, JSON.stringify({ detail: 'Method Not Allowed' }), 405);
    }
    return sendJson(reply, JSON.stringify({ detail: 'Not Found' }), 404);
  };
}
