# The two commands: `make run` and `make test`. Everything else supports them.
GO          ?= go
BIN         := $(CURDIR)/.bin
SQLC_VERSION := v1.31.1
SQLC        := $(BIN)/sqlc
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(BIN)/staticcheck

.PHONY: run test stress-test verify fmt-check vet lint sqlc sqlc-check pg-stop build web clean

## run: start the service on http://localhost:8080 (private PostgreSQL unless DATABASE_URL is set)
run: build
	exec ./bin/backtestd serve

## test: the whole test suite with the race detector against a real PostgreSQL. The
## browser tests (internal/e2e) took 745-805 s of a 2-core machine with both cores hogged:
## a package may take 25 minutes before it counts as hung.
test: web
	$(GO) test -race -count=1 -timeout 25m ./...
	./web/test.sh

## stress-test: `make test` three times in a row while a CPU hog keeps every core busy, as
## on a loaded CI machine; stops at the first failure
stress-test: web
	@hogs=""; for i in $$(seq $$(nproc)); do yes >/dev/null & hogs="$$hogs $$!"; done; \
	trap 'kill $$hogs 2>/dev/null' EXIT INT TERM; \
	for run in 1 2 3; do \
		echo "== stress run $$run of 3 (CPU hogs:$$hogs)"; \
		$(MAKE) --no-print-directory test || exit 1; \
	done; echo "== stress test passed 3 times"

## build: the binary in bin/
build: web
	$(GO) build -o bin/backtestd ./cmd/backtestd

## web: build the web page into web/dist when Node is available and the build is missing or stale
web:
	@./web/build.sh

## verify: static checks CI runs before the tests
verify: fmt-check vet lint sqlc-check

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

$(STATICCHECK):
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## lint: staticcheck (unused code, suspicious constructs)
lint: $(STATICCHECK)
	$(STATICCHECK) ./...

$(SQLC):
	GOBIN=$(BIN) $(GO) install github.com/sqlc-dev/sqlc/cmd/sqlc@$(SQLC_VERSION)

## sqlc: regenerate internal/store from db/queries and db/migrations
sqlc: $(SQLC)
	$(SQLC) generate

## sqlc-check: fail when the generated code is not what sqlc would write now
sqlc-check: $(SQLC)
	$(SQLC) diff

## pg-stop: stop the private clusters started by `make run` and `make test`
pg-stop:
	-@$(GO) run ./cmd/backtestd pgctl stop .data/pg .data/testpg

clean: pg-stop
	rm -rf .data bin web/dist
