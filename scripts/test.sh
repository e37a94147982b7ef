#!/usr/bin/env bash
# The whole test suite: typecheck, unit and integration tests (real kicad-cli), then the
# binary-level tests in test/e2e/ against a freshly built dist/copperhead. Ends with the plain
# line "N passed, N failed" summed over both bun test runs.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
status=0

# kicad-cli runs dominate test time; a test without its own timeout gets this one (bun's
# default is 5 s, too tight for a kicad-cli round trip on a busy 2-core machine).
TEST_TIMEOUT_MS=30000

# Runs `bun test` with the given arguments, echoing its output and adding up its summary.
run_tests() {
  local log
  log=$(mktemp)
  bun test --timeout "$TEST_TIMEOUT_MS" "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local p f
  p=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -n1 | grep -Eo '[0-9]+' || echo 0)
  f=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -n1 | grep -Eo '[0-9]+' || echo 0)
  rm -f "$log"
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" -ne 0 ]; then
    status=1
    # A crash before any summary must still count as a failure.
    [ "$f" -eq 0 ] && failed=$((failed + 1))
  fi
}

echo "== typecheck" >&2
bun run typecheck || status=1

echo "== unit and integration tests" >&2
run_tests --path-ignore-patterns 'test/e2e/**' test/

echo "== build" >&2
bun run build || status=1

echo "== binary tests (test/e2e)" >&2
run_tests test/e2e/

echo "$passed passed, $failed failed"
exit $status
