#!/bin/bash
# The main job: ribbitd processing live sound through JACK with the wearer's active prescription,
# or a sample one when the history is empty (RX=FILE loads FILE instead, and makes it active).
# Uses the JACK server that is running (jackd or PipeWire's JACK); when there is none, starts
# jackd on the first sound card, or with the dummy driver (silent) when there is no card, and
# stops it again on exit. Ctrl-C stops both. Under PipeWire: `pw-jack make run`.
set -euo pipefail
RIBBITD=${RIBBITD:-.build/release/ribbitd}
RX=${RX:-}
SAMPLE_RX=Prescriptions/mild-presbycusis.rx
PERIOD=${PERIOD:-64}

WEB=${WEB:-1}

jackd_pid=
web_pid=
cleanup() {
    [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null && wait "$web_pid" 2>/dev/null
    [ -n "$jackd_pid" ] && kill "$jackd_pid" 2>/dev/null && wait "$jackd_pid" 2>/dev/null
    true
}
trap cleanup EXIT

if jack_wait --check 2>/dev/null | grep -q '^running'; then
    echo "ribbit: using the JACK server that is already running"
else
    if grep -qs '^ *[0-9]' /proc/asound/cards; then
        echo "ribbit: starting jackd on the first sound card (hw:0), 48 kHz, period $PERIOD"
        driver=(-d alsa -d hw:0 -r 48000 -p "$PERIOD" -n 3)
    else
        echo "ribbit: no sound card found; starting jackd with the dummy driver (silent: for trying ribbit out)"
        driver=(-d dummy -r 48000 -p "$PERIOD")
    fi
    jackd "${driver[@]}" >jackd.log 2>&1 &
    jackd_pid=$!
    if ! jack_wait --wait --timeout 10 >/dev/null 2>&1; then
        echo "ribbit: jackd did not start; see jackd.log" >&2
        exit 69
    fi
fi

# Loading a file at every start would replace the wearer's own prescription and add the file to
# the history again each time: load the sample only into an empty history.
rx=()
if [ -n "$RX" ]; then
    echo "ribbit: starting with $RX (given as RX; it becomes the active prescription)"
    rx=(--rx "$RX")
elif ! history=$("$RIBBITD" list --json); then
    echo "ribbit: cannot read the prescription history (see above); ribbitd starts with the copy of the last active one, if any" >&2
elif [ "$(tr -d '[:space:]' <<<"$history")" = "[]" ]; then
    echo "ribbit: the history is empty; starting with the sample $SAMPLE_RX (\`$RIBBITD load RX\` loads your own)"
    rx=(--rx "$SAMPLE_RX")
else
    listing=$("$RIBBITD" list)
    if grep -q '^\*' <<<"$listing"; then
        echo "ribbit: starting with the active prescription of your history (\`$RIBBITD list\` shows them all):"
        sed -n '1p;/^\*/p' <<<"$listing"
    else
        echo "ribbit: no prescription in your history is active, so sound passes through unchanged; \`$RIBBITD use ID\` picks one"
    fi
fi
# The web app beside the daemon (WEB=0: not), on this machine only; its link is personal.
if [ "$WEB" != 0 ]; then
    "$RIBBITD" web >web.log 2>&1 &
    web_pid=$!
    url=
    for _ in $(seq 50); do
        url=$("$RIBBITD" web --url 2>/dev/null) && break
        kill -0 "$web_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -n "$url" ]; then
        echo "ribbit: the web app: $url (a personal link: whoever opens it controls the hearing aid; \`$RIBBITD web --url\` shows it again)"
    else
        echo "ribbit: the web app did not start (see web.log); the hearing aid runs without it" >&2
        web_pid=
    fi
fi
echo "ribbit: in another terminal: $RIBBITD status | pause | resume | bypass on | load RX | stop"
"$RIBBITD" run "${rx[@]}"
