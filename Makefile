# hostfw: the two commands of the README, plus helpers.
#   make demo          build, start Temporal + BMC simulators + worker, run a real rollout
#   make demo EXIT=1   same, but stop everything right after the report
#   make test          install what is missing and run the whole test suite

SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: demo test tools build clean

demo:
	@EXIT=$(EXIT) scripts/demo.sh

test:
	@scripts/test.sh

tools:
	@scripts/tools.sh

build: tools
	cargo build --workspace --bins

clean:
	rm -rf .demo
	cargo clean
