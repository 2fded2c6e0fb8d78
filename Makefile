# Pulka — make help lists every target.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT      := $(abspath .)
BIN       := $(ROOT)/bin
# Every module of the workspace (go.work "use" lines).
MODULES   := $(shell go work edit -json | sed -n 's/.*"DiskPath": "\.\/\(.*\)".*/\1/p')
# Every go.mod of the repository: the workspace's and the two built on their
# own (the Docker healthcheck, the pinned code generators).
ALL_MODULES := $(MODULES) deploy/docker/healthcheck tools/codegen
GO        ?= go
FUZZTIME  ?= 5s
GOLANGCI_LINT_VERSION := v2.15.0

export PATH := $(BIN):$(PATH)

##@ Everyday

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_.-]+:.*##/ {printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2} /^##@/ {printf "\n%s\n", substr($$0, 5)}' $(MAKEFILE_LIST)

.PHONY: run
run: build ## Run all of Pulka on this machine: Redis, every service, the web client at http://localhost:8080 (Ctrl-C stops it).
	$(BIN)/pulka-local $(RUN_FLAGS)

.PHONY: demo
demo: build ## Play one classic game of four bots in the terminal and print its score sheet.
	$(BIN)/pulkactl demo

# The checks come first, quickest first, so a stale go.mod, a broken contract
# or a lint finding fails in seconds to minutes rather than after the
# long Go tests. The Go tests of every module of go.work run as one `go test`,
# so that its scheduler keeps both cores busy across modules instead of
# waiting for each module's slowest package; the slowest packages are named
# first (SLOW_TEST_PKGS), so that they start first rather than last.
# -timeout 20m bounds a package's test binary, not a test: the property tests
# of services/table-runner/internal/table play hundreds of games (2-3 min, 5-8
# under -race on a loaded 2-core machine), and Go's default of 10 min is too
# close. The Docker healthcheck is its own module outside the workspace.
SLOW_TEST_PKGS := ./services/wallet/internal/service ./e2e/...
TEST_PKGS := $(SLOW_TEST_PKGS) $(foreach m,$(MODULES),./$(m)/...)
# Packages that start no goroutine, in their code or their tests, run without
# -race, beside the others: the race detector has nothing to watch in one
# goroutine and makes them 2-3 times slower (the table's property tests: 5 min
# under -race, 2 without, strong bots included). The recipe refuses one whose
# files have a go statement.
NORACE_TEST_PKGS := ./services/table-runner/internal/table
.PHONY: test
test: tidy-check breaking check-generated standalone lint test-deps web web-test ## Run every check and test: tidy-check, breaking, check-generated, standalone, lint, then Go (with -race) in every module (the operator's and the Helm chart's against a real kube-apiserver and etcd, built once by scripts/envtest-bins.sh; the chart's with helm from scripts/helm-bin.sh), a short fuzz of every fuzz target, the web client's unit and browser tests.
	@assets=$$(scripts/envtest-bins.sh) || { echo "test: the operator's envtest binaries could not be built (scripts/envtest-bins.sh, above)" >&2; exit 1; }; \
	export KUBEBUILDER_ASSETS=$$assets; \
	helm=$$(scripts/helm-bin.sh) || { echo "test: helm could not be built for the chart's tests (scripts/helm-bin.sh, above)" >&2; exit 1; }; \
	helm_docs=$$(scripts/helm-bin.sh helm-docs) || { echo "test: helm-docs could not be built for the chart's tests (scripts/helm-bin.sh helm-docs, above)" >&2; exit 1; }; \
	export PULKA_HELM=$$helm PULKA_HELM_DOCS=$$helm_docs; \
	for d in $(NORACE_TEST_PKGS); do \
		if grep -nE '(^|[^[:alnum:]_.])go[[:space:]]+(func|[[:alnum:]_.]+[(])' $$d/*.go; then \
			echo "test: $$d has a go statement (above): it must run under -race; take it out of NORACE_TEST_PKGS" >&2; exit 1; fi; \
	done; \
	norace=$$($(GO) list $(NORACE_TEST_PKGS)); race=$$($(GO) list $(TEST_PKGS) | grep -vxF "$$norace"); \
	failed=""; norace_log=$$(mktemp); \
	echo "==> go test (no goroutines, without -race): $(NORACE_TEST_PKGS)"; \
	$(GO) test -count=1 -timeout 20m $(NORACE_TEST_PKGS) >"$$norace_log" 2>&1 & norace_pid=$$!; \
	echo "==> go test -race (every other package of every module of go.work)"; \
	$(GO) test -race -count=1 -timeout 20m $$race || failed=" go.work"; \
	wait $$norace_pid || failed="$$failed $(NORACE_TEST_PKGS)"; \
	echo "==> go test (without -race) $(NORACE_TEST_PKGS):"; cat "$$norace_log"; rm -f "$$norace_log"; \
	echo "==> go test -race deploy/docker/healthcheck"; \
	(cd deploy/docker/healthcheck && GOWORK=off $(GO) test -race -count=1 ./...) || failed="$$failed deploy/docker/healthcheck"; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed (the failing packages are marked FAIL above)" >&2; exit 1; fi
	@FUZZTIME=$(FUZZTIME) scripts/fuzz-smoke.sh $(MODULES)
	@$(MAKE) --no-print-directory browser-test

.PHONY: test-deps
test-deps: ## Check (and on Debian as root, install) what the tests need: redis-server.
	@scripts/need.sh redis-server redis-server

.PHONY: build
build: web ## Build the web client and every binary into bin/.
	@mkdir -p $(BIN)
	@for m in $(MODULES); do if [ -d $$m/cmd ]; then echo "==> go build $$m/cmd/..."; (cd $$m && $(GO) build -o $(BIN)/ ./cmd/...); fi; done

.PHONY: bench
bench: ## Run the benchmarks of every module.
	@for m in $(MODULES); do (cd $$m && $(GO) test -run='^$$' -bench=. -benchmem ./...); done

.PHONY: fmt
fmt: ## Format the Go code.
	@for m in $(MODULES); do (cd $$m && $(GO) fmt ./...); done

# Tidy the go.mod and go.sum of every module (what tidy-check asks for).
.PHONY: tidy
tidy: ## go mod tidy in every module.
	@for m in $(ALL_MODULES); do echo "==> go mod tidy $$m"; (cd $$m && GOWORK=off $(GO) mod tidy); done

# go mod tidy -diff changes nothing: it prints what tidy would change and
# fails if that is anything, so a clean clone stays clean either way.
.PHONY: tidy-check
tidy-check: ## Fail if go mod tidy would change any module's go.mod or go.sum.
	@failed=""; for m in $(ALL_MODULES); do \
		(cd $$m && GOWORK=off $(GO) mod tidy -diff) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "tidy-check: not tidy:$$failed (run 'make tidy' and commit the result)" >&2; exit 1; fi; \
	echo "tidy-check: every go.mod and go.sum is tidy"

# Each module must build from its own go.mod (its replace lines point at the
# pkg module beside it), as a container build or a reader outside the workspace
# sees it. Build and vet only: the tests run once already, in the workspace
# (below); running every module's tests a second time would double the suite.
.PHONY: standalone
standalone: ## Build and vet every module of go.work on its own (GOWORK=off).
	@for m in $(MODULES); do echo "==> GOWORK=off go build+vet $$m"; (cd $$m && GOWORK=off $(GO) build ./... && GOWORK=off $(GO) vet ./...); done

# proto/ holds durable formats (streams, snapshots, game records): no change
# may break what the previous commit of main wrote. scripts/check-breaking.sh
# says what "previous" means on main, on a branch and in a shallow clone.
.PHONY: breaking
breaking: $(BIN)/buf ## buf breaking: proto/ against the previous commit of main (BREAKING_AGAINST=<commit> to choose).
	@scripts/check-breaking.sh

.PHONY: lint
# No separate go vet: golangci-lint runs govet, and standalone runs go vet on
# every module already.
lint: $(BIN)/golangci-lint $(BIN)/buf web-lint ## golangci-lint (govet included), buf lint, and the web client's type-check and lint.
	@for m in $(MODULES); do echo "==> lint $$m"; (cd $$m && $(BIN)/golangci-lint run ./...); done
	cd proto && $(BIN)/buf lint

##@ Web client (web/: TypeScript, Preact, Vite; built into the gateway binary)

WEB_DEPS := web/node_modules/.installed

$(WEB_DEPS): web/package.json web/package-lock.json
	@scripts/need.sh node nodejs
	@scripts/need.sh npm npm
	cd web && npm ci --no-audit --no-fund
	@touch $@

.PHONY: web
web: $(WEB_DEPS) ## Build the web client into the gateway (services/gateway/internal/webui/dist/app).
	cd web && npm run build

.PHONY: web-test
web-test: $(WEB_DEPS) ## The web client's unit tests (Vitest).
	cd web && npm test

.PHONY: web-lint
web-lint: $(WEB_DEPS) ## Type-check and lint the web client.
	cd web && npm run typecheck && npm run lint

.PHONY: browser-test
browser-test: build ## The web client's tests in headless Chromium against all of Pulka (scripts/browser-test.sh).
	@scripts/browser-test.sh

.PHONY: web-size
web-size: web ## Gzipped size of the built web client.
	cd web && npm run size

##@ Generated code

# The Go code of every contract into pkg/gen; the TypeScript of the client
# protocol (pulka.gateway.v1 and what it imports) into web/src/gen, with
# protoc-gen-es from web/node_modules.
.PHONY: generate
generate: $(BIN)/buf $(BIN)/protoc-gen-go $(WEB_DEPS) operator-generate ## Regenerate the Go and TypeScript code from proto/, and the operator's deepcopy, CRD and RBAC.
	cd proto && $(BIN)/buf generate
	cd proto && PATH="$(ROOT)/web/node_modules/.bin:$$PATH" $(BIN)/buf generate --template buf.gen.web.yaml --path pulka/gateway/v1

.PHONY: check-generated
check-generated: $(BIN)/buf $(BIN)/protoc-gen-go $(WEB_DEPS) $(BIN)/controller-gen ## Fail if regenerating proto/ or the operator's markers would change the committed code (Go, TypeScript, CRD, RBAC).
	@scripts/check-generated.sh
	@scripts/check-operator-generated.sh

##@ Operator (services/operator: controller-runtime, CRDs from markers, envtest)

# The RunnerPool's deepcopy code, its CRD (config/crd) and the operator's
# RBAC (config/rbac), all from the kubebuilder markers of api/ and
# internal/controller; scripts/operator-generate.sh says what runs.
.PHONY: operator-generate
operator-generate: $(BIN)/controller-gen ## Regenerate the operator's deepcopy code, CRD and RBAC from its markers (and the chart's copy of the CRD).
	@scripts/operator-generate.sh services/operator
	@# The chart ships the same CRD files (deploy/helmtest fails when they differ).
	@rm -f charts/pulka/crds/*.yaml && cp services/operator/config/crd/*.yaml charts/pulka/crds/

# The operator's tests run a real kube-apiserver and etcd (envtest), built from
# the Go module proxy once per version into $(TOOL_CACHE) (minutes, first time).
.PHONY: envtest-bins
envtest-bins: ## Build kube-apiserver and etcd for the operator's tests (once per version, into the cache).
	@scripts/envtest-bins.sh >/dev/null

##@ Helm chart (charts/pulka; its tests are the module deploy/helmtest)

.PHONY: helm-bin
helm-bin: ## Build helm (v4) and helm-docs from the Go module proxy for the chart's tests (once per version, into the cache).
	@scripts/helm-bin.sh >/dev/null
	@scripts/helm-bin.sh helm-docs >/dev/null

.PHONY: chart-test
chart-test: helm-bin envtest-bins ## Run the chart's tests alone: lint, rendered objects, schema, CRD, README, dry-run, install and upgrade.
	@cd deploy/helmtest && KUBEBUILDER_ASSETS=$$($(ROOT)/scripts/envtest-bins.sh) PULKA_HELM=$$($(ROOT)/scripts/helm-bin.sh) \
		PULKA_HELM_DOCS=$$($(ROOT)/scripts/helm-bin.sh helm-docs) $(GO) test -race -count=1 ./...

.PHONY: chart-readme
chart-readme: helm-bin ## Regenerate charts/pulka/README.md with helm-docs from the comments of its values.yaml.
	@cd deploy/helmtest && PULKA_HELM_DOCS=$$($(ROOT)/scripts/helm-bin.sh helm-docs) $(GO) test -count=1 -run TestReadmeIsCurrent ./... -update

##@ Tools (built once per pinned version into a cache outside the clone, then copied into bin/)

# A fresh clone on the same machine (CI) reuses what an earlier build made: buf
# alone takes minutes to build on two cores. The cache key is the pinned
# versions themselves (tools/codegen/go.mod and go.sum, GOLANGCI_LINT_VERSION);
# the prerequisites are order-only, since a fresh clone's files are always
# newer than the cache's binaries.
TOOL_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/pulka
TOOLS_KEY  := $(shell cat tools/codegen/go.mod tools/codegen/go.sum 2>/dev/null | sha256sum | cut -c1-16)
TOOLS_DIR  := $(TOOL_CACHE)/tools-$(TOOLS_KEY)

$(TOOLS_DIR)/buf: | tools/codegen/go.mod tools/codegen/go.sum
	@mkdir -p $(TOOLS_DIR)
	@echo "building buf into $(TOOLS_DIR) (first time takes minutes)"; cd tools/codegen && GOWORK=off $(GO) build -o $@.tmp github.com/bufbuild/buf/cmd/buf && mv $@.tmp $@

$(TOOLS_DIR)/protoc-gen-go: | tools/codegen/go.mod tools/codegen/go.sum
	@mkdir -p $(TOOLS_DIR)
	cd tools/codegen && GOWORK=off $(GO) build -o $@.tmp google.golang.org/protobuf/cmd/protoc-gen-go && mv $@.tmp $@

$(TOOLS_DIR)/controller-gen: | tools/codegen/go.mod tools/codegen/go.sum
	@mkdir -p $(TOOLS_DIR)
	cd tools/codegen && GOWORK=off $(GO) build -o $@.tmp sigs.k8s.io/controller-tools/cmd/controller-gen && mv $@.tmp $@

$(BIN)/controller-gen: $(TOOLS_DIR)/controller-gen
	@mkdir -p $(BIN) && cp $< $@
$(BIN)/buf: $(TOOLS_DIR)/buf
	@mkdir -p $(BIN) && cp $< $@
$(BIN)/protoc-gen-go: $(TOOLS_DIR)/protoc-gen-go
	@mkdir -p $(BIN) && cp $< $@

$(TOOL_CACHE)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint:
	@mkdir -p $(dir $@)
	@echo "building golangci-lint $(GOLANGCI_LINT_VERSION) into $(dir $@) (first time takes minutes)"
	GOWORK=off GOBIN=$(dir $@) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
$(BIN)/golangci-lint: $(TOOL_CACHE)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
	@mkdir -p $(BIN) && cp $< $@

.PHONY: tools
tools: $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/controller-gen $(BIN)/golangci-lint ## Build every tool into bin/.

.PHONY: clean
clean: ## Remove bin/ and test output.
	rm -rf $(BIN) tmp web/e2e/out
