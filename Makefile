# The README's commands. Each target first does whatever set-up a fresh machine still lacks, and runs
# on a supported Node.js (22, 24 or 26): the machine's own, or else a pinned build from the tools cache
# (scripts/with-node.sh fetches it once from the npm registry).
.PHONY: setup demo test check dev

NODE := bash scripts/with-node.sh

setup:
	@$(NODE) bash scripts/setup.sh

## Run the main job on the embedded default (local Temporal dev server, sandbox, local output).
demo: setup
	@$(NODE) node bin/enrichflow.js demo

## Types, lint and format, then the whole test suite against real servers.
test: setup
	@$(NODE) npm run --silent check
	@$(NODE) npm test

check: setup
	@$(NODE) npm run --silent check

## The local stack in the foreground (Temporal + UI, S3, sandbox, worker) until Ctrl-C.
dev: setup
	@$(NODE) node bin/enrichflow.js dev
