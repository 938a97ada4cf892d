#!/bin/bash
# The daemon's bench, against a private jackd with the dummy driver (real-time if allowed):
#  1. added latency through ribbit, measured with jack_iodelay, minus the same measurement
#     through jack_thru (the loop itself costs one period), at periods 32, 64, 128 and 256;
#  2. xruns, DSP load and RSS over BENCH_SECONDS (default 60) at period 64 while ribbit-probe
#     plays through ribbit, against the same run through jack_thru (a minimal C client): the
#     audio process (ribbit-audio, which holds the JACK client) and the daemon (ribbitd run)
#     each, with their memory by mapping;
#  3. the cost of a dump client (`ribbitd dump`) and of a voice client (`ribbitd voice`) to the
#     audio thread and to the daemon;
#  4. what a wearer's control costs: a volume step and a program switch, in CPU time of the
#     daemon and of its audio process, and until `ribbitd` returns.
# Usage: bench/jack-bench.sh   (make bench builds ribbitd, ribbit-audio and ribbit-probe first)
set -euo pipefail
RIBBITD=${RIBBITD:-.build/release/ribbitd}
PROBE=${PROBE:-.build/release/ribbit-probe}
RX=${RX:-Prescriptions/mild-presbycusis.rx}
LOAD_SECONDS=${BENCH_SECONDS:-60}

# Everything the daemon and the clients write (the history, the active prescription, the
# config, caches) goes into a private directory removed at exit, never into the user's own.
work=$(mktemp -d)
export HOME=$work/home XDG_RUNTIME_DIR=$work/run XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config \
    XDG_STATE_HOME=$work/state XDG_CACHE_HOME=$work/cache
mkdir -p -m 700 "$HOME" "$XDG_RUNTIME_DIR" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
export JACK_DEFAULT_SERVER=ribbit-bench-$$ JACK_NO_START_SERVER=1
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

start_jackd() {  # period
    jackd -n "$JACK_DEFAULT_SERVER" $REALTIME -d dummy -r 48000 -p "$1" >"$work/jackd.log" 2>&1 &
    jackd_pid=$!
    pids+=("$jackd_pid")
    jack_wait -w -t 10 >/dev/null 2>&1 || { echo "jackd did not start: $(cat "$work/jackd.log")" >&2; exit 69; }
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# jackd -R works as root or with an rtprio limit; otherwise measure without it and say so.
REALTIME=-R
start_jackd 64
if grep -q "Cannot use real-time scheduling" "$work/jackd.log"; then REALTIME=--no-realtime; fi
stop "$jackd_pid"

wait_port() {  # port
    for _ in $(seq 100); do jack_lsp 2>/dev/null | grep -qx "$1" && return 0; sleep 0.05; done
    echo "port $1 did not appear" >&2; exit 70
}

# The daemon on a prescription, unconnected, its ports up; sets $daemon.
start_daemon() {  # rx
    "$RIBBITD" run --no-connect --rx "$1" >"$work/ribbitd.log" 2>&1 &
    daemon=$!
    pids+=("$daemon")
    wait_port ribbit:in_left
}

# A port is listed as soon as it is registered, but JACK refuses to connect it until its client
# has activated: try for up to 5 s (on a busy machine the first try can come too early).
connect() {  # source destination
    for _ in $(seq 50); do jack_connect "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
    echo "cannot connect $1 to $2" >&2; exit 70
}

iodelay() {  # in-port out-port -> round trip in frames (jack_iodelay's last estimate)
    stdbuf -o0 jack_iodelay >"$work/iodelay.txt" 2>&1 &
    local pid=$!
    wait_port jack_delay:out
    connect jack_delay:out "$1"
    connect "$2" jack_delay:in
    sleep 2
    stop "$pid"
    grep "total roundtrip latency" "$work/iodelay.txt" | tail -1 | awk '{ printf "%.0f", $1 }'
}

# Resident KiB of a process outside JACK's shared memory (the server's segments, which every
# client maps and which count towards RSS; tens of MiB with the dummy driver).
own_rss() {
    awk '/^[0-9a-f]+-[0-9a-f]+ / { jack = ($6 ~ /^\/dev\/shm\/jack/) } /^Rss:/ { if (!jack) own += $2 } END { print own }' "/proc/$1/smaps"
}

mib() { echo "$1 / 1024" | bc -l; }

# The daemon's audio process (ribbit-audio, its only child).
audio_process() {  # daemon pid -> child pid
    local child
    for _ in $(seq 50); do
        child=$(tr -s ' ' '\n' <"/proc/$1/task/$1/children" | head -1)
        [ -n "$child" ] && { echo "$child"; return; }
        sleep 0.1
    done
    echo "error: ribbitd (pid $1) has no audio process" >&2
    exit 1
}

# Where a process's resident pages are, outside JACK's shared memory: per mapping, in KiB, the
# binary's text (r-x), the rest of the binary (read-only data, relocated and writable data), each
# shared library (all its mappings), the heap and anonymous memory, thread stacks, other files.
rss_by_mapping() {  # pid -> "KiB<TAB>what" lines, largest first
    local binary
    binary=$(readlink "/proc/$1/exe")
    awk -v binary="$binary" '
        /^[0-9a-f]+-[0-9a-f]+ / {
            path = $6; perms = $2
            if (path ~ /^\/dev\/shm\/jack/) what = ""
            else if (path == binary) what = (perms ~ /x/) ? "binary: text" : "binary: data (read-only, relocated, writable)"
            else if (path == "[heap]" || path == "") what = "heap and anonymous"
            else if (path ~ /^\[stack/) what = "stacks"
            else if (path ~ /\.so/) { n = split(path, parts, "/"); what = "library: " parts[n] }
            else if (path ~ /^\/usr\/lib\/locale\//) what = "files: locale data"
            else if (path ~ /^\[/) what = "kernel: " path
            else what = "file: " path
            next
        }
        /^Rss:/ { if (what != "") rss[what] += $2 }
        END { for (w in rss) if (rss[w] > 0) printf "%d\t%s\n", rss[w], w }' "/proc/$1/smaps" | sort -rn
}

# Two breakdowns side by side: KiB per mapping for ribbitd and for jack_thru, with the totals.
print_breakdowns() {  # our-file jack_thru-file our-name
    echo
    echo "Resident memory by mapping at the end of the load run (KiB, without JACK's shm):"
    echo
    echo "| $3 | KiB | jack_thru | KiB |"
    echo "| --- | --- | --- | --- |"
    awk -F'\t' '
        FNR == 1 { file++ }
        { n[file]++; what[file, n[file]] = $2; kib[file, n[file]] = $1; total[file] += $1 }
        END {
            rows = n[1] > n[2] ? n[1] : n[2]
            for (i = 1; i <= rows; i++)
                printf "| %s | %s | %s | %s |\n", what[1, i], kib[1, i], what[2, i], kib[2, i]
            printf "| total | %d | total | %d |\n", total[1], total[2]
        }' "$1" "$2"
}

json_number() {  # key json
    sed -n "s/.*\"$1\":\([0-9.eE+-]*\).*/\1/p" <<<"$2"
}

# Which parts to run: BENCH_SECTIONS="latency load dump controls" (the default runs all four).
SECTIONS=${BENCH_SECTIONS:-latency load dump controls}

# 1. Added latency per period.
latency() {
    echo
    echo "| period | through jack_thru | through ribbit | added by ribbit | added (ms) | reported to JACK |"
    echo "| --- | --- | --- | --- | --- | --- |"
    for period in 32 64 128 256; do
        start_jackd "$period"
        jack_thru >/dev/null 2>&1 &
        thru=$!
        pids+=("$thru")
        wait_port jack_thru:input_1
        baseline=$(iodelay jack_thru:input_1 jack_thru:output_1)
        stop "$thru"
        start_daemon "$RX"
        through=$(iodelay ribbit:in_left ribbit:out_left)
        reported=$(json_number latencyFrames "$("$RIBBITD" status --json)")
        "$RIBBITD" stop >/dev/null
        wait "$daemon" 2>/dev/null || true
        stop "$jackd_pid"
        added=$((through - baseline))
        printf "| %d | %d | %d | %d | %.2f | %d |\n" "$period" "$baseline" "$through" "$added" "$(echo "$added / 48" | bc -l)" "$reported"
    done
}

# 2. xruns, load and memory over LOAD_SECONDS.
load() {

    echo
    echo "Over $LOAD_SECONDS s at period 64, with ribbit-probe playing noise (-40 dBFS) through the client and"
    echo "recording it (counting xruns while it does), first through jack_thru as the baseline:"
    run_probe() {  # in-left,in-right out-left,out-right -> the probe's xruns
        "$PROBE" --seconds "$LOAD_SECONDS" --signal noise --level -40 --to "$1" --from "$2" --out "$work/probe.wav" |
            awk '{ for (i = 1; i < NF; i++) if ($i == "xruns") print $(i + 1) }'
    }

    start_jackd 64
    jack_thru >/dev/null 2>&1 &
    thru=$!
    pids+=("$thru")
    wait_port jack_thru:input_1
    thru_xruns=$(run_probe jack_thru:input_1,jack_thru:input_2 jack_thru:output_1,jack_thru:output_2)
    thru_rss=$(own_rss "$thru")
    rss_by_mapping "$thru" >"$work/thru-mappings.txt"
    thru_total=$(awk '/VmRSS/ { print $2 }' "/proc/$thru/status")
    stop "$thru"
    stop "$jackd_pid"

    start_jackd 64
    start_daemon "$RX"
    at_start=$(json_number xruns "$("$RIBBITD" status --json)")
    ribbit_xruns=$(run_probe ribbit:in_left,ribbit:in_right ribbit:out_left,ribbit:out_right)
    status=$("$RIBBITD" status --json)
    audio=$(audio_process "$daemon")
    rss=$(own_rss "$audio")
    rss_by_mapping "$audio" >"$work/ribbit-audio-mappings.txt"
    rss_by_mapping "$daemon" >"$work/ribbitd-mappings.txt"
    total=$(awk '/VmRSS/ { print $2 }' "/proc/$audio/status")
    hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$audio/status")
    daemon_rss=$(own_rss "$daemon")
    "$RIBBITD" stop >/dev/null
    wait "$daemon" 2>/dev/null || true
    stop "$jackd_pid"

    printf "  xruns while the probe recorded   %s through ribbit, %s through jack_thru (ribbit's own callback: %s in that time)\n" \
        "$ribbit_xruns" "$thru_xruns" "$(($(json_number xruns "$status") - at_start))"
    printf "  JACK DSP load (whole graph)      %.1f %%\n" "$(json_number dspLoadPercent "$status")"
    printf "  ribbit's share of each period    %.2f %% (longest callback %.0f us of %.0f us)\n" \
        "$(json_number ribbitLoadPercent "$status")" "$(json_number longestCallbackMicroseconds "$status")" "$(echo "64 / 48 * 1000" | bc -l)"
    printf "  audio process RSS w/o JACK's shm %.1f MiB; %.1f MiB with it (high-water mark %.1f MiB)\n" \
        "$(mib "$rss")" "$(mib "$total")" "$(mib "$hwm")"
    printf "  jack_thru (baseline), same       %.1f MiB; %.1f MiB with it; ribbit-audio / jack_thru = %.2fx\n" \
        "$(mib "$thru_rss")" "$(mib "$thru_total")" "$(echo "$rss / $thru_rss" | bc -l)"
    printf "  the daemon (ribbitd run), same   %.1f MiB (control side: history, socket, dump; no audio thread)\n" "$(mib "$daemon_rss")"
    print_breakdowns "$work/ribbit-audio-mappings.txt" "$work/thru-mappings.txt" ribbit-audio
    print_breakdowns "$work/ribbitd-mappings.txt" "$work/thru-mappings.txt" "ribbitd run"
}

# 3. What a dump client costs: the same daemon and noise, DUMP_SECONDS (default 20) without a
#    client, then as long with `ribbitd dump --json` reading every frame. The audio thread's
#    share of each period comes from the status' cycle count and cumulative load, taken at the
#    edges of each window; the daemon's whole CPU time (all threads) from /proc.
dump() {
    DUMP_SECONDS=${DUMP_SECONDS:-20}
    echo
    echo "The dump's cost over $DUMP_SECONDS s without and $DUMP_SECONDS s with a dump client (period 64, noise at -40 dBFS):"
    start_jackd 64
    start_daemon "$RX"
    "$PROBE" --seconds $((2 * DUMP_SECONDS + 4)) --signal noise --level -40 --to ribbit:in_left,ribbit:in_right \
        --from ribbit:out_left,ribbit:out_right --out "$work/probe-dump.wav" >/dev/null &
    probe=$!
    pids+=("$probe")
    sleep 1
    busy_seconds() {  # status json -> seconds spent in the process callback since the client started
        echo "$(json_number ribbitLoadPercent "$1") / 100 * $(json_number cycles "$1") * 64 / 48000" | bc -l
    }
    audio=$(audio_process "$daemon")
    cpu_seconds() { cat "/proc/$daemon/stat" "/proc/$audio/stat" | awk '{ total += ($14 + $15) / 100 } END { print total }'; }
    window() {  # seconds -> "callback-share-% daemon-cpu-%"
        local s0 c0 s1 c1
        s0=$("$RIBBITD" status --json); c0=$(cpu_seconds)
        sleep "$1"
        s1=$("$RIBBITD" status --json); c1=$(cpu_seconds)
        local busy frames
        busy=$(echo "$(busy_seconds "$s1") - $(busy_seconds "$s0")" | bc -l)
        frames=$(echo "($(json_number cycles "$s1") - $(json_number cycles "$s0")) * 64 / 48000" | bc -l)
        echo "$(echo "100 * $busy / $frames" | bc -l) $(echo "100 * ($c1 - $c0) / $1" | bc -l)"
    }
    read -r quiet_share quiet_cpu <<<"$(window "$DUMP_SECONDS")"
    quiet_rss=$(($(own_rss "$daemon") + $(own_rss "$audio")))
    "$RIBBITD" dump --json --duration $((DUMP_SECONDS + 2)) >"$work/dump.jsonl" &
    dump=$!
    pids+=("$dump")
    sleep 1
    read -r dump_share dump_cpu <<<"$(window "$DUMP_SECONDS")"
    dump_rss=$(($(own_rss "$daemon") + $(own_rss "$audio")))
    wait "$dump" 2>/dev/null || true
    frames=$(wc -l <"$work/dump.jsonl")
    dropped=$(tail -1 "$work/dump.jsonl" | sed -n 's/.*"droppedFrames":\([0-9]*\).*/\1/p')
    # The voice exercises' stream: the same copy on the audio thread, pitch and voicing on the daemon's.
    "$RIBBITD" voice --json --duration $((DUMP_SECONDS + 2)) >"$work/voice.jsonl" &
    voice=$!
    pids+=("$voice")
    sleep 1
    read -r voice_share voice_cpu <<<"$(window "$DUMP_SECONDS")"
    voice_rss=$(($(own_rss "$daemon") + $(own_rss "$audio")))
    wait "$voice" 2>/dev/null || true
    voice_frames=$(wc -l <"$work/voice.jsonl")
    stop "$probe"
    "$RIBBITD" stop >/dev/null
    wait "$daemon" 2>/dev/null || true
    stop "$jackd_pid"
    printf "| | audio thread's share of each period | ribbitd + ribbit-audio CPU, all threads (%% of one core) | both RSS without JACK's shm |\n| --- | --- | --- | --- |\n"
    printf "| no dump client | %.3f %% | %.2f %% | %.1f MiB |\n" "$quiet_share" "$quiet_cpu" "$(mib "$quiet_rss")"
    printf "| dump client reading every frame | %.3f %% | %.2f %% | %.1f MiB |\n" "$dump_share" "$dump_cpu" "$(mib "$dump_rss")"
    printf "| voice client (\`ribbitd voice\`) | %.3f %% | %.2f %% | %.1f MiB |\n" "$voice_share" "$voice_cpu" "$(mib "$voice_rss")"
    printf "  with the voice client: +%.2f %% of a core for the daemon and its audio process; %d voice frames in %d s\n" \
        "$(echo "$voice_cpu - $quiet_cpu" | bc -l)" "$voice_frames" "$((DUMP_SECONDS + 2))"
    printf "  with the client: %.2fx the audio thread's time, +%.2f %% of a core for the daemon and its audio process; %d frames in %d s, %s sample frames dropped (ring or link)\n" \
        "$(echo "$dump_share / $quiet_share" | bc -l)" "$(echo "$dump_cpu - $quiet_cpu" | bc -l)" "$frames" "$((DUMP_SECONDS + 2))" "${dropped:-?}"

}

# 4. What a wearer's control costs, with a compressive fitting (CONTROL_RX, default CAMFIT's
#    sample) and no sound connected: CONTROL_STEPS volume steps (+1 and -1 dB in turn) and as
#    many program switches (noisy and quiet in turn) and status requests (a screen's poll), 0.5 s
#    apart, and as long with none. The CPU time of the daemon and of its audio process (every
#    thread's, from /proc/PID/task/*/schedstat in ns) per step, net of the same time idle; the
#    wall time until `ribbitd volume`, `program` or `status` returned.
controls() {
    local rx=${CONTROL_RX:-Prescriptions/camfit-sloping.rx} steps=${CONTROL_STEPS:-20}
    echo
    echo "A wearer's controls, $steps of each, 0.5 s apart ($rx, period 64, no sound connected):"
    start_jackd 64
    start_daemon "$rx"
    sleep 2
    audio=$(audio_process "$daemon")
    ticks() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'; }  # ns on a CPU (%d stops at 2^31 in mawk)
    window() {  # kind -> "daemon-ticks audio-ticks wall-ms-of-the-commands"
        local d0 a0 spent=0 i t0 t1
        d0=$(ticks "$daemon"); a0=$(ticks "$audio")
        for i in $(seq "$steps"); do
            t0=$(date +%s%N)
            case $1 in
            volume) "$RIBBITD" volume "$([ $((i % 2)) = 1 ] && echo +1 || echo -1)" >/dev/null ;;
            program) "$RIBBITD" program "$([ $((i % 2)) = 1 ] && echo noisy || echo quiet)" >/dev/null ;;
            status) "$RIBBITD" status >/dev/null ;;
            idle) ;;
            esac
            t1=$(date +%s%N)
            spent=$((spent + (t1 - t0) / 1000000))
            sleep 0.5
        done
        echo "$(($(ticks "$daemon") - d0)) $(($(ticks "$audio") - a0)) $spent"
    }
    read -r idle_d idle_a _ <<<"$(window idle)"
    read -r vol_d vol_a vol_ms <<<"$(window volume)"
    read -r prog_d prog_a prog_ms <<<"$(window program)"
    read -r stat_d stat_a stat_ms <<<"$(window status)"
    "$RIBBITD" stop >/dev/null
    wait "$daemon" 2>/dev/null || true
    stop "$jackd_pid"
    per_step() { echo "($1 - $2) / 1000000 / $steps" | bc -l; }  # ns over the idle ones -> ms per step
    printf "| per step | ribbitd CPU | ribbit-audio CPU | until the command returned |\n| --- | --- | --- | --- |\n"
    printf "| volume +-1 dB | %.2f ms | %.2f ms | %.0f ms |\n" "$(per_step "$vol_d" "$idle_d")" "$(per_step "$vol_a" "$idle_a")" \
        "$(echo "$vol_ms / $steps" | bc -l)"
    printf "| program noisy/quiet | %.2f ms | %.2f ms | %.0f ms |\n" "$(per_step "$prog_d" "$idle_d")" "$(per_step "$prog_a" "$idle_a")" \
        "$(echo "$prog_ms / $steps" | bc -l)"
    printf "| status (nothing changes) | %.2f ms | %.2f ms | %.0f ms |\n" "$(per_step "$stat_d" "$idle_d")" "$(per_step "$stat_a" "$idle_a")" \
        "$(echo "$stat_ms / $steps" | bc -l)"
}

echo "ribbit JACK bench: $(nproc) cores, jackd $REALTIME, dummy driver, 48 kHz, prescription $RX"
for section in $SECTIONS; do "$section"; done
