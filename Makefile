# hostfw: the two commands of the README, plus helpers.
#   make demo          build, start Temporal + BMC simulators + worker, run a real rollout
#   make demo EXIT=1   same, but stop everything right after the report
#   make test          install what is missing and run the whole test suite
#   make bench         run the benchmarks, write docs/benchmarks.md (ARGS="--only pass" for a subset)
#   make chaos         the chaos suite: worker and server kills, outages, BMC faults (minutes)
#   make fuzz          every fuzz target for FUZZ_SECONDS each (default 60; docs/fuzzing.md)

SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: demo test chaos tools build clean bench fuzz

demo:
	@EXIT=$(EXIT) scripts/demo.sh

test:
	@scripts/test.sh

chaos:
	@scripts/chaos.sh

bench:
	@scripts/bench.sh $(ARGS)

fuzz:
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(TARGETS)

tools:
	@scripts/tools.sh

build: tools
	cargo build --workspace --bins

clean:
	rm -rf .demo
	cargo clean
