# osb — build, test, lint, install.
GO      ?= go
PKG     := github.com/osb-dev/osb
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X $(PKG)/internal/build.Version=$(VERSION) -X $(PKG)/internal/build.Commit=$(COMMIT) -X $(PKG)/internal/build.Date=$(DATE)

.PHONY: build sandbox-program sandbox-programs install test test-short lint docs docs-check release-check bench interop differential

build: sandbox-program
	CGO_ENABLED=0 $(GO) build -tags sandboxprogram -trimpath -ldflags '$(LDFLAGS)' -o bin/osb ./cmd/osb

# cmd/osb-sandbox, the program a sandbox's init and execd run, for osb
# built with -tags sandboxprogram to carry (see package
# internal/server/sandbox/program); PROGRAM_OS and PROGRAM_ARCH pick the
# platform, sandbox-programs builds every Linux one the release has.
PROGRAM_OS   ?= $(shell $(GO) env GOOS)
PROGRAM_ARCH ?= $(shell $(GO) env GOARCH)
PROGRAM_DIR  := internal/server/sandbox/program

sandbox-program:
	GOOS=$(PROGRAM_OS) GOARCH=$(PROGRAM_ARCH) CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o $(PROGRAM_DIR)/osb-sandbox_$(PROGRAM_OS)_$(PROGRAM_ARCH) ./cmd/osb-sandbox

sandbox-programs:
	$(MAKE) sandbox-program PROGRAM_OS=linux PROGRAM_ARCH=amd64
	$(MAKE) sandbox-program PROGRAM_OS=linux PROGRAM_ARCH=arm64

# osb goes where go install puts it ($GOBIN, else $GOPATH/bin), its man
# pages beside it in ../share/man, where man finds them once that bin
# directory is on PATH (man-db and macOS man look there); MANDIR=… moves them.
BINDIR = $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
MANDIR ?= $(BINDIR)/../share/man

install: sandbox-program
	CGO_ENABLED=0 $(GO) install -tags sandboxprogram -trimpath -ldflags '$(LDFLAGS)' ./cmd/osb
	install -d '$(MANDIR)/man1'
	install -m 0644 docs/man/*.1 '$(MANDIR)/man1/'

# Most tests wait on processes, servers and timeouts rather than the CPU:
# four test binaries at once, eight parallel tests in each. go test starts
# them in the order named, so the longest go first rather than last, with
# a core idle beside them. lint has vetted every package, so go test does
# not again, and test binaries are linked without symbol tables and DWARF
# (a third of the linking; stack traces keep their lines). See
# docs/decisions/parallel-tests.md.
SLOW_TESTS := ./internal/server ./internal/server/execd ./internal/faults ./internal/e2e ./internal/commands/command ./internal/commands/file ./internal/contract ./internal/commands/cp
test: lint
	$(GO) test -race -count=1 -p 4 -parallel 8 -vet=off -ldflags='-s -w' -timeout 30m $(SLOW_TESTS) ./...

test-short:
	$(GO) test -short -count=1 ./...

# gofmt, go vet here and for macOS and Windows (osb builds there; the
# server's Linux-only parts sit behind build tags), staticcheck (pinned by
# go.mod's tool directive, so it builds offline after 'go mod download';
# settings in staticcheck.conf).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	$(GO) tool staticcheck ./...

# Reference pages and man pages come from the command tree; a test fails when
# the committed ones are stale.
docs:
	$(GO) run ./internal/docsgen

docs-check:
	$(GO) test -count=1 -run 'TestCommittedDocsAreCurrent|TestManPagesRender' ./internal/docsgen

# Cross-compiles every release target and checks goreleaser.yaml: minutes,
# so not part of 'make test'; .ci/run runs it after.
release-check:
	$(GO) test -tags release -count=1 -run 'Release|Goreleaser|Version' ./internal/docsgen

# Every row of bench/rows beside its outside baseline, interleaved, with CPU
# time and peak RSS; writes bench/results.md (see bench/README.md).
bench:
	bench/run

# The official clients (Python CLI and SDK, JavaScript SDK) against osb
# server: scripts/interop-setup installs them under .interop/, then the
# suite in internal/interop drives them. The official MCP client drives the
# built `osb mcp`, and the official opensandbox-mcp, which lists its tools
# beside ours and runs against osb server (TestMCPInterop* in internal/e2e).
# Both suites run, whichever fails. Needs python3 (3.10+) and node (20+).
# scripts/code-interpreter-setup adds Jupyter where sandboxes see it and the
# official code-interpreter SDK (TestCodeInterpreterSDK).
interop:
	scripts/interop-setup
	scripts/code-interpreter-setup
	status=0; \
	OSB_INTEROP_DIR=$(CURDIR)/.interop $(GO) test -count=1 -timeout 15m ./internal/interop || status=1; \
	OSB_INTEROP_DIR=$(CURDIR)/.interop $(GO) test -count=1 -timeout 10m -run 'TestMCPInterop' ./internal/e2e || status=1; \
	exit $$status

# The real OpenSandbox (the official server with Docker and the real execd,
# started by ../shared/peers/opensandbox/realstack.sh and left running) and
# osb server play the same scenarios; a difference that docs/server.md does
# not list fails (internal/differential). Skips, saying why, without root,
# ../shared or Docker; the MCP scenarios need scripts/interop-setup.
differential:
	scripts/interop-setup || echo "differential: the official MCP client did not install; the mcp scenario skips"
	OSB_DIFFERENTIAL=1 OSB_INTEROP_DIR=$(CURDIR)/.interop $(GO) test -count=1 -timeout 25m -parallel 4 -v -run 'TestDifferential' ./internal/differential
