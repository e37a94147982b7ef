#!/usr/bin/env bash
# The whole test suite: typecheck, the formatter check, build dist/copperhead, then every test
# file, unit, integration (real kicad-cli) and binary-level (test/e2e/, against the fresh build),
# in one `bun test` over two worker processes, with the few files that mostly wait in a second
# `bun test` beside it. Ends with the plain line "N passed, N failed", where an unformatted tree
# counts as one failure more.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0

# kicad-cli runs dominate test time; a test without its own timeout gets this one (bun's
# default is 5 s, too tight for a kicad-cli round trip while the other worker runs one too).
TEST_TIMEOUT_MS=60000
# One worker per core. Most of a test's time is kicad-cli, a process of its own, so two workers
# keep both cores busy; the recorded durations in test/timings.json start the longest files first.
WORKERS=${COPPERHEAD_TEST_WORKERS:-2}

echo "== typecheck" >&2
bun run typecheck || status=1

# Biome (biome.json) names each file it would change; `bun run format` rewrites them.
echo "== format:check" >&2
format_failed=0
bun run format:check >&2 || { status=1; format_failed=1; }

echo "== build" >&2
bun run build || status=1

# Files that spend most of their time waiting, not computing (slow-model's first answer is
# streamed over 200 s), run in a lane of their own beside the workers: in a worker they would
# hold a core's share of the suite idle. Their output follows the workers' in the log.
WAITING=(test/e2e/slow-model.test.ts)

echo "== tests (unit, integration, and test/e2e against dist/copperhead)" >&2
log=$(mktemp)
lane_log=$(mktemp)
bun test --timeout "$TEST_TIMEOUT_MS" "${WAITING[@]}" >"$lane_log" 2>&1 &
lane=$!
ignore=()
for file in "${WAITING[@]}"; do ignore+=(--path-ignore-patterns "$file"); done
bun test --timeout "$TEST_TIMEOUT_MS" --parallel="$WORKERS" --timings=test/timings.json "${ignore[@]}" test/ 2>&1 |
  tee "$log"
rc=${PIPESTATUS[0]}
wait "$lane"
lane_rc=$?
# bun's summary of each run, the workers' and the lane's, added up.
count() { grep -Eo "^ *[0-9]+ $1\$" "$2" | tail -n1 | grep -Eo '[0-9]+' || echo 0; }
passed=$(($(count pass "$log") + $(count pass "$lane_log")))
failed=$(($(count fail "$log") + $(count fail "$lane_log")))
echo "== tests that wait (${WAITING[*]})"
tee -a "$log" <"$lane_log"
# Each failure again, with what the test printed before it (at most 60 lines), just above the
# summary: a CI log is often read from its tail, and bun lists only the failing names there.
if [ "$failed" -gt 0 ]; then
  echo
  echo "== failures again"
  awk -v keep=60 '
    /^\(pass\) / || /^test\/.*\.test\.ts:$/ { n = 0; next }
    /^\(fail\) / {
      if (!($0 in shown)) {
        shown[$0] = 1
        print ""
        for (i = (n > keep ? n - keep : 0); i < n; i++) print buf[i % keep]
        print
      }
      n = 0
      next
    }
    { buf[n % keep] = $0; n++ }
  ' "$log"
fi
rm -f "$log" "$lane_log"
for code in "$rc" "$lane_rc"; do
  if [ "$code" -ne 0 ]; then
    status=1
    # A crash before any summary must still count as a failure.
    [ "$failed" -eq 0 ] && failed=1
  fi
done

failed=$((failed + format_failed))

echo "$passed passed, $failed failed"
exit $status
