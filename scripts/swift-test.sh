#!/usr/bin/env bash
# Runs the test suite and, when it fails, repeats every failed expectation at the end: a CI log
# keeps only its tail, and the tail of a 300-test run is otherwise just "failed with 2 issues".
set -uo pipefail
log=$(mktemp -t ribbit-test.XXXXXX)
trap 'rm -f "$log"' EXIT
swift test --disable-xctest "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
	echo
	echo "== what failed (repeated from above) =="
	# Each issue line, and the comment lines (↳) Swift Testing prints under it.
	awk '/recorded an issue|error:|Fatal error|Crash|signal [0-9]/ { print; n = 4; next }
		n > 0 && /^↳/ { print; n--; next } { n = 0 }' "$log" | cut -c1-600 | tail -n 60
fi
exit "$status"
