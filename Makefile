# Herald: two commands do everything on a fresh Debian machine.
#   make run    local RabbitMQ + PostgreSQL, migrate, declare, all workers, a demo of each flow
#   make test   the same set-up, then unit and integration tests against the real servers
#   make test-later  the parallel suites as if it were a year later (HERALD_LATER_DAYS), servers included
#   make bench  benchmarks (ratios against a baseline run in the same invocation)
#   make fuzz   the libFuzzer targets, 300 s each (FUZZ_SECONDS)
#   make chaos  the fleet under faults and load (docs/reliability.md), then make fuzz
#   make chaos-cluster  the fleet on a three-node RabbitMQ cluster: a node killed, partitioned, restarted in turn

SHELL := /bin/bash
SWIFT ?= swift
CONFIG ?= Config/herald.yaml
BIN = .build/debug
export HERALD_CONFIG := $(CURDIR)/$(CONFIG)

.PHONY: deps services stop build run test test-later bench fuzz chaos chaos-cluster graphs clean

deps:
	@scripts/services.sh install

services: deps
	@scripts/services.sh start

stop:
	@scripts/services.sh stop

build: deps
	$(SWIFT) build

# scripts/run-local.sh builds only the products it starts.
run: services
	@SWIFT="$(SWIFT)" scripts/run-local.sh

test: services build
	@scripts/test.sh

# What make test's last step runs; arguments for swift test in LATER_ARGS (default: all but the disruptive suites).
test-later: deps
	$(SWIFT) build --build-tests
	@scripts/test-later.sh $(LATER_ARGS)

# Its own packages (wrk, the Go peer's Go and libraries: scripts/services.sh install-bench) are installed here only.
bench: services
	@scripts/services.sh install-bench
	@scripts/bench.sh

fuzz:
	@scripts/fuzz.sh $${FUZZ_SECONDS:-300}

chaos: services
	@scripts/chaos.sh
	@scripts/fuzz.sh $${FUZZ_SECONDS:-300}

# The fleet on a three-node RabbitMQ cluster and a PostgreSQL primary with a synchronous standby
# (scripts/cluster.sh): a node killed, partitioned, restarted in turn; the primary killed, the standby promoted.
chaos-cluster: services
	@scripts/chaos.sh --cluster

# docs/architecture/*.svg from Package.swift (needs Graphviz: apt-get install graphviz).
graphs:
	@python3 scripts/architecture-graph.py

clean: stop
	rm -rf .build .build-fuzz .run
