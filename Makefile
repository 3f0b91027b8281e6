SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.install-stamp

.PHONY: run test bench typecheck install clean

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(NODE_MODULES_STAMP)

install: $(NODE_MODULES_STAMP)

run: install
	GATEWAY_DATA_DIR=$${GATEWAY_DATA_DIR:-./data} npx tsx lib/run-demo.ts

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
	rm -rf node_modules data
