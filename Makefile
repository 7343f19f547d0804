# schedlab: the two entry points are `make run` and `make test`; both first run
# scripts/setup.sh, which installs whatever is missing (and nothing else).

CARGO ?= cargo
# rustup's cargo, for shells whose PATH lacks it.
export PATH := $(HOME)/.cargo/bin:$(PATH)

# Extra arguments for `schedlab run`, e.g. RUN_ARGS="--config schedlab.toml --dry-run".
RUN_ARGS ?=
# The daemon needs root (BPF, changing other processes).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# What `make simulate` simulates: the built-in hackbench job (10 groups of 20 senders
# and 20 receivers, 100 loops of 100-byte messages over pipes) under EEVDF.
WORKLOAD ?= hackbench:groups=10,fds=20,loops=100,size=100,ipc=pipe
FAIR ?= eevdf
# Extra arguments for `schedlab simulate`, e.g. SIM_ARGS="--cpus 4 --trace t.json".
SIM_ARGS ?=

.PHONY: run simulate test fuzz setup build install bench hackbench-ratio readme fmt lint

## run: build in release mode, then run the daemon in the foreground with the built-in configuration (Ctrl-C stops it and restores everything)
run: build
	$(SUDO) target/release/schedlab run $(RUN_ARGS)

## simulate: build in release mode and simulate $(WORKLOAD) under $(FAIR), printing the summary
simulate: build
	$(CARGO) run --release -q -p schedlab-cli -- simulate $(WORKLOAD) --fair $(FAIR) $(SIM_ARGS)

# Seconds each fuzz target runs in `make test` (`make fuzz FUZZ_SECONDS=600` for a long run).
FUZZ_SECONDS ?= 15

## test: every test of the workspace (and, optimized, the one too slow unoptimized:
## the shipped model's leave-one-program-out recomputation, 525 trees), then every fuzz
## target for FUZZ_SECONDS
test: setup
	@scripts/setup.sh --vm
	$(CARGO) test --workspace
	$(CARGO) test --release -p schedlab-behavior --test learn_shipped -- --include-ignored
	scripts/fuzz.sh $(FUZZ_SECONDS)

## fuzz: every parser of untrusted input fuzzed for FUZZ_SECONDS each (cargo-fuzz, nightly)
fuzz: setup
	scripts/fuzz.sh $(FUZZ_SECONDS)

## setup: install missing Debian packages, check the Rust toolchain (idempotent)
setup:
	@scripts/setup.sh

## build: release build of the schedlab binary
build: setup
	$(CARGO) build --release -p schedlab-cli

## install: the release binary to /usr/local/bin, the systemd unit (dist/schedlab.service),
## and the built-in configuration as /etc/schedlab/schedlab.toml unless one is there; then
## `systemctl enable --now schedlab` starts it (`systemctl reload schedlab` re-reads the file)
install: build
	$(SUDO) install -D -m 0755 target/release/schedlab $(DESTDIR)/usr/local/bin/schedlab
	$(SUDO) install -D -m 0644 dist/schedlab.service $(DESTDIR)/etc/systemd/system/schedlab.service
	[ -e $(DESTDIR)/etc/schedlab/schedlab.toml ] || { $(SUDO) install -d -m 0755 $(DESTDIR)/etc/schedlab && \
		target/release/schedlab config --default | $(SUDO) tee $(DESTDIR)/etc/schedlab/schedlab.toml >/dev/null; }
	-[ -n "$(DESTDIR)" ] || $(SUDO) systemctl daemon-reload

## bench: the simulator's criterion benchmarks
bench: setup
	$(CARGO) bench -p schedlab-sim

## hackbench-ratio: real hackbench's defaults vs the same run simulated, timed in one go
hackbench-ratio: build
	scripts/hackbench-vs-kernel.sh

## readme: rerun the commands README.md shows and refresh their output
readme: build
	scripts/update-readme.py

## fmt: format every crate
fmt:
	$(CARGO) fmt --all

## lint: clippy on everything, warnings as errors
lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## profiles: regenerate the default model's data set (real programs on this machine, as root) and retrain it
.PHONY: profiles
profiles: build
	scripts/collect-profiles.sh
