#!/usr/bin/env bash
# Runs the test bundle `swift build --build-tests` made (it builds nothing) and, when it fails,
# repeats at the end every failed expectation and, per failed test, the command that runs it
# alone: a CI log keeps only its tail, and the tail of a 500-test run is otherwise just "failed
# with 2 issues".
#
#   scripts/swift-test.sh [-c debug|release] [--lanes] [--filter REGEX] [--skip REGEX] ...
#
# --lanes runs the daemon's end-to-end suites in two processes of their own beside a third for
# everything else, on a machine with four cores or more that are mostly idle (see below). Those
# suites run one test at a time and spend most of it waiting for sound played in real time, so
# one process (whose test threads are as many as the cores) would leave the CPU idle for most of
# the run; each lane is a separate process because swift-testing runs at most one test per core
# in a process. The test bundle is run directly, not through `swift test`, which would hold the
# build directory's lock for the whole run.
set -uo pipefail
configuration=debug
lanes=false
arguments=()
while [ $# -gt 0 ]; do
	case "$1" in
	-c) configuration=$2; shift 2 ;;
	--lanes) lanes=true; shift ;;
	*) arguments+=("$1"); shift ;;
	esac
done
bundle=".build/$configuration/ribbitPackageTests.xctest"
[ -x "$bundle" ] || { echo "error: $bundle is missing; build it first (make test-build)" >&2; exit 66; }
logs=$(mktemp -d -t ribbit-test.XXXXXX)
trap 'rm -rf "$logs"' EXIT
export NO_COLOR=1

# One process: its output, each line prefixed with the lane's name when there are several.
run() {
	local name=$1
	shift
	if $lanes; then
		"$bundle" --testing-library swift-testing "$@" "${arguments[@]}" 2>&1 | tee "$logs/$name.log" | sed -u "s/^/[$name] /"
	else
		"$bundle" --testing-library swift-testing "$@" "${arguments[@]}" 2>&1 | tee "$logs/$name.log"
	fi
	echo "${PIPESTATUS[0]}" >"$logs/$name.status"
}

# Lanes only on a machine with CPU to spare: on one already busy (other work, a build beside
# it), four daemon tests at once beside the unit tests leave JACK's periods too little CPU, and
# the tests' recordings more xruns than glitch-aware judging can work around (a loaded run with
# lanes: seven tests failed). On two idle cores the three lanes starve each other just the same
# (a quiet clean clone of 52f8b31: a daemon that answered nothing for 5 and 10 s, a listener's
# answers late, five tests failed; in one process, quiet or beside stress-ng, four of them never
# failed and the fifth only in a milder form). So lanes need four cores or more and half of them
# idle; elsewhere the suites run in one process, slower and sure. Idleness is judged over three
# seconds before the tests start (the load average would still count the build that just ended).
idle_percent() {
	local a b
	read -r -a a </proc/stat
	sleep 3
	read -r -a b </proc/stat
	local idle=$((b[4] + b[5] - a[4] - a[5])) total=0 i
	for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
	echo $((total > 0 ? 100 * idle / total : 100))
}
if $lanes && [ "$(nproc)" -lt 4 ]; then
	echo "$(nproc) CPUs: the suites run in one process (lanes need four or more)."
	lanes=false
fi
if $lanes; then
	idle=$(idle_percent)
	if [ "$idle" -lt 50 ]; then
		echo "The CPUs were $idle % idle over 3 s: the suites run in one process (lanes need an idle machine)."
		lanes=false
	else
		echo "The CPUs were $idle % idle over 3 s: the suites run in three lanes."
	fi
fi
if $lanes; then
	# The daemon's end-to-end suites (each runs one test at a time), three to a lane: in each
	# process two run side by side and the third when one ends (balanced on their durations).
	daemon='\.(DaemonTests|CalibrationDaemonTests|VerifyDaemonTests)\b'
	hearingAndWeb='\.(HearingTestDaemonTests|WebDaemonTests|WearLogDaemonTests)\b'
	run daemon --filter "$daemon" &
	run hearing-web --filter "$hearingAndWeb" &
	run rest --skip "$daemon" --skip "$hearingAndWeb" &
	wait
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
