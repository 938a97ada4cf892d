#!/usr/bin/env bash
# Runs the test suite and, when it fails, repeats at the end every failed expectation and, per
# failed test, the command that runs it alone: a CI log keeps only its tail, and the tail of a
# 500-test run is otherwise just "failed with 2 issues".
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
	echo
	echo "== to run a failed test alone (the release binaries as make test built them) =="
	grep -oE '✘ Test [A-Za-z0-9_]+\(' "$log" | sed -E 's/✘ Test ([A-Za-z0-9_]+)\(/\1/' | sort -u | while read -r test; do
		echo "swift test --disable-xctest --skip-build --filter '$test'"
	done
	grep -q 'Fatal error\|Crash\|signal [0-9]' "$log" && echo "(a crash ends the run: the tests after it did not run; run the suite again with --filter)"
fi
exit "$status"
