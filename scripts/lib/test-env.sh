# shellcheck shell=bash
# The environment the test suites run in (scripts/test.sh, scripts/test-later.sh; sourced from the
# project's root with the servers up): the servers' addresses, the database herald_test (make
# run's herald stays clean), the built executables the tests start, and the bound on how many
# tests run at once.
eval "$(scripts/services.sh env)"
export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/herald_test"
export HERALD_TEST_BIN_DIR="$PWD/.build/debug"
export HERALD_SERVICES_SCRIPT="$PWD/scripts/services.sh"
export HERALD_LOG_LEVEL="${HERALD_LOG_LEVEL:-warning}"
# At most 24 tests at once (Swift Testing starts every test at once otherwise): the suites
# run workers, servers and real processes, and 300 of them together on 2 cores starved the
# broker's heartbeats and pushed tests past their waits (10-30 failures a run, none alone).
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${HERALD_TEST_PARALLEL:-24}"
