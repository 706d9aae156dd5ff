#!/usr/bin/env bash
# `make test`: servers are up (make services); build, migrate, then run the tests.
# Parallel suites first; the disruptive ones (they restart RabbitMQ, stop PostgreSQL,
# kill worker processes) alone afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/test-env.sh
source scripts/lib/test-env.sh

swift build --build-tests
.build/debug/heraldctl migrate
# plpgsql_check on every function, squawk on every migration (docs/testing.md, "The SQL linters").
scripts/lint-sql.sh
python3 scripts/check-schemas.py 2>/dev/null || /usr/bin/python3 scripts/check-schemas.py
# The architecture: each module in its place (the wire, the checks, the workers; the door on no
# worker module) and SQL in .sql files (docs/architecture.md).
python3 scripts/check-structure.py
python3 scripts/check-docs.py
# /v1's generated code is docs/openapi.yaml's (docs/api.md, "The contract").
scripts/generate-openapi.sh --check
scripts/check-deploy.sh --broker
# The libFuzzer targets (fuzz/targets), briefly: `make fuzz` runs them longer.
scripts/fuzz.sh "${HERALD_FUZZ_SECONDS:-10}"

# Each step runs to the end whatever an earlier one did; the last lines say which failed and
# the failures themselves, so that the tail of a long log (all a CI page may show) names them.
failed=()
logs=.run/test-logs
rm -rf "$logs" && mkdir -p "$logs"
step() {
    local name=$1; shift
    "$@" 2>&1 | tee "$logs/$name.log" || failed+=("$name")
}
# At most HERALD_TEST_PARALLEL (24) tests at once: scripts/lib/test-env.sh says why.
step parallel swift test --skip-build --skip 'Disruptive'
# The disruptive suites run only where HERALD_TEST_DISRUPTIVE=1 (a trait): never beside others.
step disruptive env HERALD_TEST_DISRUPTIVE=1 swift test --skip-build --filter 'Disruptive' --no-parallel
# herald-api with Twilio's own Python library and a plain HTTP client (docs/api.md).
step api scripts/test-api.sh
# herald-api through the clients openapi-python-client and openapi-generator make from its
# OpenAPI document, each generated with no warning (docs/api.md, "The contract").
step generators scripts/test-generators.sh
# The fault and load harness, short: every scenario with small counts (make chaos: full size).
step chaos scripts/chaos.sh --short
# The same fleet on a three-node RabbitMQ cluster and a PostgreSQL primary with a synchronous
# standby (make chaos-cluster), short: the queue leader's node killed, a rolling restart, the
# primary killed and the standby promoted (about 2.5 min with the clusters' start). The partition
# scenario stays in make chaos-cluster: once in about 15 partitions a healed node hangs in
# Erlang's global sync (docs/reliability.md), which would fail CI for RabbitMQ's reasons.
step chaos-cluster scripts/chaos.sh --cluster --short --scenarios cluster-kill,cluster-rolling,cluster-failover
# The parallel suites again a year later (scripts/test-later.sh). Last: it restarts the servers.
step later scripts/test-later.sh
[ ${#failed[@]} -eq 0 ] && { echo "make test: every step passed"; exit 0; }
echo
echo "make test: failed: ${failed[*]} (logs in $logs)"
for name in "${failed[@]}"; do
    # Swift Testing's failed tests and recorded issues; the chaos report's failed scenarios
    # (a step that failed without such a line prints none, and the next one still prints).
    grep -h -E '✘|recorded an issue|FAILED|\| FAIL \||error:' "$logs/$name.log" | grep -v -E '^\[[0-9]+/[0-9]+\]' | tail -40 | sed "s/^/  $name: /" || true
done
exit 1
