#!/bin/bash
# What ribbit costs before it processes anything (issue 18), each figure beside openMHA 4.18's
# (measured on this kind of machine for issue 18, not re-measured here) and beside jack_thru
# (a minimal C client from jackd2's examples) measured in the same run:
#  1. from exec to connectable JACK ports, and to the first processed period (noise in, the
#     first non-silent sample back; bench/start-watch.c), for `ribbitd run` with FFTW's wisdom
#     cached (every start after the first) and without it (the first start on a machine);
#  2. the CPU time (user + system) of `ribbitd process` on a 1 s stereo file, with and without
#     the wisdom;
#  3. reconnecting: a running daemon while jackd restarts, from jackd's exec to ribbit's ports
#     connectable and its first processed period, beside jackd's own start (to the first client
#     it let in).
# Runs alternate (jack_thru, ribbit warm, ribbit cold, ...) and the medians are printed, so a
# busy machine moves every column alike. RIBBITD_BEFORE=path/to/ribbitd adds another build
# (with its ribbit-audio beside it) to every round, for a before/after in one run.
# Usage: bench/start-bench.sh   (ROUNDS, default 7; release ribbitd and ribbit-audio built)
set -euo pipefail
RIBBITD=${RIBBITD:-.build/release/ribbitd}
RX=${RX:-Prescriptions/mild-presbycusis.rx}
ROUNDS=${ROUNDS:-7}
RIBBITD=$(realpath "$RIBBITD")
RX=$(realpath "$RX")
BEFORE=${RIBBITD_BEFORE:+$(realpath "$RIBBITD_BEFORE")}

# openMHA 4.18 (issue 18: alternated runs on this kind of machine, medians; not re-measured).
OPENMHA_PORTS_MS=421
OPENMHA_FILE_MS=20.5

work=$(mktemp -d)
export HOME=$work/home XDG_RUNTIME_DIR=$work/run XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config \
    XDG_STATE_HOME=$work/state XDG_CACHE_HOME=$work/cache
mkdir -p -m 700 "$HOME" "$XDG_RUNTIME_DIR" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
export JACK_DEFAULT_SERVER=ribbit-start-bench-$$ JACK_NO_START_SERVER=1
jackd_pid=""
cleanup() {
    [ -n "$jackd_pid" ] && { kill "$jackd_pid" 2>/dev/null || true; wait "$jackd_pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT

# The C compiler of the system, else the Swift toolchain's clang.
"${CC:-$(command -v cc || command -v clang)}" -O2 -o "$work/start-watch" "$(dirname "$0")/start-watch.c" -ljack
sox -q -n -r 48000 -c 2 -b 16 "$work/one.wav" synth 1 pinknoise vol 0.1

REALTIME=-R
start_jackd() {
    jackd -n "$JACK_DEFAULT_SERVER" $REALTIME -d dummy -r 48000 -p 64 >"$work/jackd.log" 2>&1 &
    jackd_pid=$!
    jack_wait -w -t 10 >/dev/null 2>&1 || { echo "jackd did not start: $(cat "$work/jackd.log")" >&2; exit 69; }
}
start_jackd
if grep -q "Cannot use real-time scheduling" "$work/jackd.log"; then
    kill "$jackd_pid"; wait "$jackd_pid" 2>/dev/null || true
    REALTIME=--no-realtime
    start_jackd
fi

# One start: "ports_ms first_ms" (start-watch stops the command with SIGTERM afterwards).
watch() {  # in-port out-port command...
    local in=$1 out=$2
    shift 2
    "$work/start-watch" "$in" "$out" -- "$@" 2>>"$work/watch.log" </dev/null | tail -1
}
ribbit_start() {  # ribbitd cache-directory
    XDG_CACHE_HOME=$2 watch ribbit:in_left ribbit:out_left "$1" run --no-connect --rx "$RX"
}
# CPU ms (user + system) of one `ribbitd process` of the 1 s file: perf's task-clock when perf
# may count (to 0.01 ms), else the shell's `times` (to 1 ms).
if perf stat -x, -e task-clock true >/dev/null 2>&1; then
    file_cost() {  # ribbitd cache-directory
        XDG_CACHE_HOME=$2 perf stat -x, -e task-clock "$1" process "$work/one.wav" "$work/out.wav" --rx "$RX" 2>&1 >/dev/null |
            awk -F, '/task-clock/ { printf "%.2f\n", $1 }'
    }
else
    file_cost() {  # ribbitd cache-directory
        (
            XDG_CACHE_HOME=$2 "$1" process "$work/one.wav" "$work/out.wav" --rx "$RX" >/dev/null
            times
        ) | awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%.1f\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }'
    }
fi

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

builds=("$RIBBITD")
[ -n "$BEFORE" ] && builds+=("$BEFORE")
# Warm up: each build's history, page cache and wisdom (ribbit-audio writes it after its first start).
for build in "${builds[@]}"; do
    ribbit_start "$build" "$work/cache-$(basename "$(dirname "$build")")" >/dev/null || true
    file_cost "$build" "$work/cache-$(basename "$(dirname "$build")")" >/dev/null
done
watch jack_thru:input_1 jack_thru:output_1 jack_thru >/dev/null || true

for round in $(seq "$ROUNDS"); do
    watch jack_thru:input_1 jack_thru:output_1 jack_thru >>"$work/thru.txt" || true
    for b in "${!builds[@]}"; do
        build=${builds[$b]}
        warm=$work/cache-$(basename "$(dirname "$build")")
        ribbit_start "$build" "$warm" >>"$work/warm-$b.txt" || true
        ribbit_start "$build" "$work/cold-$b-$round" >>"$work/cold-$b.txt" || true
        file_cost "$build" "$warm" >>"$work/file-warm-$b.txt"
        file_cost "$build" "$work/cold-file-$b-$round" >>"$work/file-cold-$b.txt"
    done
done

# 3. Reconnect: ROUNDS restarts of jackd under a running daemon (wisdom cached).
for b in "${!builds[@]}"; do
    build=${builds[$b]}
    XDG_CACHE_HOME=$work/cache-$(basename "$(dirname "$build")") "$build" run --no-connect --rx "$RX" >"$work/daemon-$b.log" 2>&1 &
    daemon=$!
    watch ribbit:in_left ribbit:out_left true >/dev/null || true
    for round in $(seq "$ROUNDS"); do
        kill "$jackd_pid"
        wait "$jackd_pid" 2>/dev/null || true
        jackd_started=$(date +%s%N)
        jackd -n "$JACK_DEFAULT_SERVER" $REALTIME -d dummy -r 48000 -p 64 >"$work/jackd.log" 2>&1 &
        jackd_pid=$!
        START_WATCH_T0=$jackd_started watch ribbit:in_left ribbit:out_left true >>"$work/reconnect-$b.txt" || true
    done
    kill -TERM "$daemon"
    wait "$daemon" 2>/dev/null || true
done

column() { awk "{ print \$$2 }" "$1" 2>/dev/null | median; }
echo "ribbit start bench: $(nproc) cores, jackd $REALTIME, dummy driver, 48 kHz, period 64, prescription $(basename "$RX"),"
echo "medians of $ROUNDS alternated rounds (failed starts: $(grep -c "^start-watch:" "$work/watch.log" || true))"
echo
echo "| start (ms after exec) | connectable ports | first processed period |"
echo "| --- | --- | --- |"
printf "| jack_thru (this run) | %s | %s |\n" "$(column "$work/thru.txt" 1)" "$(column "$work/thru.txt" 2)"
for b in "${!builds[@]}"; do
    name="ribbitd run"
    [ "$b" = 1 ] && name="ribbitd run (RIBBITD_BEFORE)"
    printf "| %s, wisdom cached | %s | %s |\n" "$name" "$(column "$work/warm-$b.txt" 1)" "$(column "$work/warm-$b.txt" 2)"
    printf "| %s, no wisdom (first start) | %s | %s |\n" "$name" "$(column "$work/cold-$b.txt" 1)" "$(column "$work/cold-$b.txt" 2)"
done
printf "| openMHA 4.18 (issue 18, this kind of machine; not re-measured) | %s | - |\n" "$OPENMHA_PORTS_MS"
for b in "${!builds[@]}"; do
    name="ribbitd run"
    [ "$b" = 1 ] && name="ribbitd run (RIBBITD_BEFORE)"
    printf "| %s, reconnect: ms after jackd's exec (jackd itself: %s ms) | %s | %s |\n" "$name" \
        "$(column "$work/reconnect-$b.txt" 3)" "$(column "$work/reconnect-$b.txt" 1)" "$(column "$work/reconnect-$b.txt" 2)"
done
echo
echo "| \`ribbitd process\`, 1 s stereo file, CPU ms (user + system) | wisdom cached | no wisdom |"
echo "| --- | --- | --- |"
for b in "${!builds[@]}"; do
    name=ribbitd
    [ "$b" = 1 ] && name="ribbitd (RIBBITD_BEFORE)"
    printf "| %s | %s | %s |\n" "$name" "$(median <"$work/file-warm-$b.txt")" "$(median <"$work/file-cold-$b.txt")"
done
printf "| openMHA 4.18 (issue 18, this kind of machine; not re-measured) | %s | |\n" "$OPENMHA_FILE_MS"
