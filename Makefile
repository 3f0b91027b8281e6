SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.install-stamp
# `npm start` and `make run` execute compiled JavaScript with plain node: esbuild bundles
# lib/main.ts and lib/run-demo.ts into dist/ (gitignored), one file each, so a start resolves
# no module graph (ready in ≈ 0.3–0.5 s instead of 2 s under tsx). tsx is for development and tests.
DIST_STAMP := dist/.build-stamp
# The node flags of `npm start` (package.json), so `make run` runs the gateway as `npm start` does
# (README, "Memory").
NODE_FLAGS := $(shell node -p "require('./package.json').scripts.start.split(' ').filter((w) => w.startsWith('--')).join(' ')")
SOURCES := $(shell find lib schemas -type f) package-lock.json

.PHONY: run test bench typecheck install build clean

# npm ci where the lock is complete. opencode-ai's lock entry lists only its linux-x64 binaries
# (the registry serves only those), which npm ci reads as out of sync: then npm install, which
# keeps every locked version and skips the platform packages it cannot get.
$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund || npm install --no-audit --no-fund
	@touch $(NODE_MODULES_STAMP)

$(DIST_STAMP): $(NODE_MODULES_STAMP) $(SOURCES)
	node build.mjs
	@touch $(DIST_STAMP)

build: $(DIST_STAMP)

install: $(NODE_MODULES_STAMP) $(DIST_STAMP)

run: install
	GATEWAY_DATA_DIR=$${GATEWAY_DATA_DIR:-./data} node $(NODE_FLAGS) dist/lib/run-demo.mjs

typecheck: install
	npx tsc --noEmit -p .

test: install typecheck
	@node --import tsx test/helpers/pg-status.ts
	@files=$$(find test -name '*.test.ts' | sort); \
	if [ -z "$$files" ]; then echo "no test files found"; exit 1; fi; \
	node --import tsx --test --test-concurrency=2 $$files

bench: install
	npx tsx bench/run.ts

clean:
	rm -rf node_modules data dist
