# enrichflow's image: the CLI, worker, sandbox and webhook receiver in one, run as the unprivileged
# `node` user. Stage 1 installs everything and compiles TypeScript; stage 2 keeps only the compiled
# code and production dependencies (DuckDB and Temporal ship native binaries for linux/glibc). The base
# is the newest Node LTS line the whole suite passes on in CI (.ci/run: 24 and 26), at the version the
# tools installer pins for that line (scripts/node-lines.sh).
# Build: docker build -t enrichflow:0.1.0 .     Run: docker run --rm enrichflow:0.1.0 --help

FROM node:26.10.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY activities ./activities
COPY cli ./cli
COPY client ./client
COPY config ./config
COPY contract ./contract
COPY events ./events
COPY jobs ./jobs
COPY lib ./lib
COPY pipeline ./pipeline
COPY sandbox ./sandbox
COPY stack ./stack
COPY storage ./storage
COPY workers ./workers
COPY workflows ./workflows
COPY scripts/bundle-workflows.js ./scripts/bundle-workflows.js
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:26.10.0-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY bin/enrichflow.js ./bin/enrichflow.js
COPY samples ./samples
COPY deploy/create-bucket.js ./deploy/create-bucket.js
# Named volumes mounted here start with this ownership, so the non-root user can write to them.
RUN mkdir -p /var/lib/enrichflow/sandbox /var/lib/enrichflow/webhooks \
    && chown -R node:node /var/lib/enrichflow
USER node
ENV ENRICHFLOW_DATA_DIR=/var/lib/enrichflow
ENTRYPOINT ["node", "bin/enrichflow.js"]
CMD ["--help"]
