#!/usr/bin/env bash
# Runs the test bundle `swift build --build-tests` made (it builds nothing) and, when it fails,
# repeats at the end every failed expectation and, per failed test, the command that runs it
# alone: a CI log keeps only its tail, and the tail of a 500-test run is otherwise just "failed
# with 2 issues".
#
#   scripts/swift-test.sh [-c debug|release] [--staged] [--filter REGEX] [--skip REGEX] ...
#
# --staged (what `make test` uses) runs the unit suites first, in one process, then the
# end-to-end suites (a real jackd, ribbitd, browser or package build: the `.endToEnd` trait) in
# a second, several tests at a time: those tests spend most of their time waiting for sound
# played in real time, each on a thread of its own, and RIBBIT_END_TO_END_AT_ONCE says how many
# run at once (see below). The test bundle is run directly, not through `swift test`, which
# would hold the build directory's lock for the whole run.
set -uo pipefail
configuration=debug
staged=false
arguments=()
while [ $# -gt 0 ]; do
	case "$1" in
	-c) configuration=$2; shift 2 ;;
	--staged) staged=true; shift ;;
	*) arguments+=("$1"); shift ;;
	esac
done
bundle=".build/$configuration/ribbitPackageTests.xctest"
[ -x "$bundle" ] || { echo "error: $bundle is missing; build it first (make test-build)" >&2; exit 66; }
logs=$(mktemp -d -t ribbit-test.XXXXXX)
export NO_COLOR=1

# One process, its output kept for the summary at the end. It runs in a session (and process
# group) of its own, which is ended with it: a test process that crashes would otherwise leave
# its jackd servers (JACK keeps 8 at most per machine), daemons and browsers running for good.
# It runs in the background and is waited for, so that Ctrl-C or a TERM (a cancelled CI job)
# ends it at once, and its output goes through a FIFO to tee, so that a child left holding that
# output cannot keep the script waiting: the session is ended before tee is.
stop_groups() {
	local file group
	for file in "$logs"/*.group; do
		[ -f "$file" ] || continue
		group=$(cat "$file")
		rm -f "$file"
		[ -n "$group" ] && kill -TERM -- "-$group" 2>/dev/null && sleep 2 && kill -KILL -- "-$group" 2>/dev/null
	done
	return 0
}
trap 'stop_groups; rm -rf "$logs"' EXIT
trap 'stop_groups; exit 130' INT TERM
run() {
	local name=$1 tests output
	shift
	mkfifo "$logs/$name.fifo"
	tee "$logs/$name.log" <"$logs/$name.fifo" &
	output=$!
	setsid --wait bash -c 'echo $$ >"$0"; exec "$@"' "$logs/$name.group" \
		"$bundle" --testing-library swift-testing "$@" "${arguments[@]}" >"$logs/$name.fifo" 2>&1 &
	tests=$!
	wait "$tests"
	echo "$?" >"$logs/$name.status"
	stop_groups
	# tee ends when the last writer has; one outside the session gets 10 s.
	for _ in $(seq 50); do kill -0 "$output" 2>/dev/null || break; sleep 0.2; done
	kill "$output" 2>/dev/null
	wait "$output" 2>/dev/null
	return 0
}

# How many end-to-end tests at once. Measured on 2 idle cores: two at a time (what the old
# single process ran) left the CPU 70-95 % idle for most of the run. More at once only when the
# cores are idle once the unit tests are done, judged over three seconds (the load average would
# still count the unit tests): on a busy machine (other work, or a loaded proof run beside
# stress-ng) each test's JACK server needs its share of the CPU, and two at a time is what such
# runs have passed with. Without --staged, the gate's default (2) applies.
idle_percent() {
	local a b
	read -r -a a </proc/stat
	sleep 3
	read -r -a b </proc/stat
	local idle=$((b[4] + b[5] - a[4] - a[5])) total=0 i
	for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
	echo $((total > 0 ? 100 * idle / total : 100))
}
if $staged; then
	endToEnd='\.(DaemonTests|CalibrationDaemonTests|VerifyDaemonTests|HearingTestDaemonTests|WebDaemonTests|WearLogDaemonTests|DebianPackageTests)\b'
	run unit --skip "$endToEnd"
	cores=$(nproc)
	idle=$(idle_percent)
	if [ "$idle" -ge 70 ]; then
		atOnce=$((2 * cores > 6 ? 6 : 2 * cores))
	else
		atOnce=2
	fi
	atOnce=${RIBBIT_END_TO_END_AT_ONCE:-$atOnce}
	echo "The CPUs were $idle % idle over 3 s: the end-to-end tests run $atOnce at a time on $cores cores."
	RIBBIT_END_TO_END_AT_ONCE=$atOnce run end-to-end --filter "$endToEnd"
	for log in "$logs"/*.log; do grep -h 'Test run with' "$log" | sed "s/^/[$(basename "$log" .log)] /"; done
else
	run all
fi
status=0
for file in "$logs"/*.status; do [ "$(cat "$file")" -eq 0 ] || status=1; done
if [ "$status" -ne 0 ]; then
	echo
	echo "== what failed (repeated from above) =="
	# Each issue line, and the comment lines (↳) Swift Testing prints under it.
	cat "$logs"/*.log | awk '/recorded an issue|error:|Fatal error|Crash|signal [0-9]/ { print; n = 4; next }
		n > 0 && /^↳/ { print; n--; next } { n = 0 }' | cut -c1-600 | tail -n 60
	echo
	echo "== to run a failed test alone =="
	cat "$logs"/*.log | grep -oE '✘ Test [A-Za-z0-9_]+\(' | sed -E 's/✘ Test ([A-Za-z0-9_]+)\(/\1/' | sort -u | while read -r test; do
		echo "scripts/swift-test.sh -c $configuration --filter '$test'"
	done
	cat "$logs"/*.log | grep -q 'Fatal error\|Crash\|signal [0-9]' &&
		echo "(a crash ends its process: the tests after it there did not run; run them again with --filter)"
fi
exit "$status"
