# The README's commands. Each target first does whatever set-up a fresh machine still lacks.
.PHONY: setup demo test check dev

setup:
	@bash scripts/setup.sh

## Run the main job on the embedded default (local Temporal dev server, sandbox, local output).
demo: setup
	@node bin/enrichflow.js demo

## Types, lint and format, then the whole test suite against real servers.
test: setup
	@npm run --silent check
	@npm test

check: setup
	@npm run --silent check

## The local stack in the foreground (Temporal + UI, S3, sandbox, worker) until Ctrl-C.
dev: setup
	@node bin/enrichflow.js dev
