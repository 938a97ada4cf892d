#!/usr/bin/python3
"""A simulated listener taking `ribbitd hearing-test` as a person would: it reads the screen
in a pty, presses Enter to start and Space when it hears a beep, and it hears through JACK,
from ribbit's output ports, not from the daemon's word: each beep's level (dBFS) and
frequency are measured in the samples, turned into dB HL through the calibration and the
headphones' RETSPL, and answered through a logistic psychometric function
P(yes) = (1 - lapse) / (1 + exp(-slope (L - T))).

With `interauralAttenuationDB` it hears with both ears as a head does: a tone reaches the other
cochlea that much weaker, and masking noise in one ear (an ear sounding without a break for
longer than any tone's pulse) raises that ear's threshold to the noise's effective level (dB EM,
from the noise's measured level through the calibration, the RETSPL and ISO 389-4's narrow-band
correction; powers add) and crosses back to the tested ear the same way.

Usage: simulated-listener.py CONFIG.json  (see the Swift test HearingTestCLITests for the keys)
Writes CONFIG["out"]: what it heard (one entry per presentation: time, ear, Hz, dBFS, dB HL,
answered), its presses, the screen's text and the CLI's exit status.
"""
import json, math, os, pty, random, select, sys, threading, time, collections

import jack

config = json.load(open(sys.argv[1]))
rng = random.Random(config.get("seed", 1))
mode = config.get("mode", "psychometric")  # psychometric, yes (to everything), never
slope = config.get("slopePerDB", 1.0)
lapse = config.get("lapse", 0.02)
# Presses with no beep: this probability per `falseAlarmEverySeconds` of silence.
false_alarm = config.get("falseAlarm", 0.0)
false_alarm_every = config.get("falseAlarmEverySeconds", 2.0)
thresholds = config.get("thresholds", {})  # {"right": {"1000": 35.0}}
calibration = config["calibrationDBSPL"]  # {"left": 100, "right": 100}
retspl = {int(k): v for k, v in config["retspl"].items()}
attenuation = config.get("interauralAttenuationDB")  # None: each ear hears only its own side
MASKER_SECONDS = 0.3  # longer than a pulse (200 ms and its ramps) without a silent period


def narrow_band_correction(hz):
    # ISO 389-4 / ANSI S3.6 third-octave noise: SPL of 0 dB EM above the tone's RETSPL.
    return 4 if hz < 630 else 5 if hz < 1000 else 6 if hz <= 3150 else 5


def power_sum(a, b):
    return 10 * math.log10(10 ** (a / 10) + 10 ** (b / 10))

try:
    client = jack.Client("listener", no_start_server=True)
except jack.JackOpenError as error:
    # Say what JACK said (the server's name and its status bits), for the test's failure message.
    sys.exit(f"cannot open the listener's JACK client on {os.environ.get('JACK_DEFAULT_SERVER')}: {error!r}")
ears = ["left", "right"]
ports = [client.inports.register("in_" + ear) for ear in ears]
periods = collections.deque()  # (frames, [mean square per ear], [zero crossings per ear], [peak per ear])


@client.set_process_callback
def process(frames):
    squares, crossings, peaks = [], [], []
    for port in ports:
        x = memoryview(port.get_buffer()).cast("f")
        total, count, peak, previous = 0.0, 0, 0.0, x[0]
        for v in x:
            total += v * v
            if (v >= 0) != (previous >= 0):
                count += 1
            previous = v
            if abs(v) > peak:
                peak = abs(v)
        squares.append(total / frames)
        crossings.append(count)
        peaks.append(peak)
    periods.append((frames, squares, crossings, peaks))


client.activate()
for port, source in zip(ports, config["ports"]):
    client.connect(source, port)
rate = client.samplerate

# The CLI in a pty, its screen drained into `screen` by a thread.
pid, fd = pty.fork()
if pid == 0:
    os.execve(config["command"][0], config["command"], dict(os.environ, TERM="xterm", COLUMNS="80", LINES="24"))
screen = bytearray()


def drain():
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    return
                screen.extend(chunk)
        except OSError:
            return


threading.Thread(target=drain, daemon=True).start()
deadline = time.monotonic() + config.get("timeoutSeconds", 600)
while b"Press Enter to start" not in screen and time.monotonic() < deadline:
    time.sleep(0.05)
os.write(fd, b"\r")

heard = []  # one entry per presentation
presses = []
silence_frames = 10**9  # since the last sound, per presentation detection
sounding_frames = [0, 0]  # per ear, frames since its last silent period
recent = [collections.deque(), collections.deque()]  # per ear: (frames, mean square) of the last second
masker_peak_dbfs = -200.0
current = None  # the presentation being heard
press_at = None
started = time.monotonic()
next_false_alarm = started + false_alarm_every
peak_dbfs = -200.0
WINDOW = int(0.05 * rate)  # the level is the loudest 50 ms mean square (a pulse is flat 175 ms)
SILENT = 1e-20  # exact silence is 0; the quietest tone ribbit plays is far above this


name_ear = config.get("nameEar", False)


def press(now, ear=None):
    # Naming the ear: the Right or Left arrow key.
    os.write(fd, {"right": b"\x1b[C", "left": b"\x1b[D"}[ear] if name_ear and ear else b" ")
    presses.append(round(now - started, 3))


def decide(entry):
    if mode == "yes":
        return True
    if mode == "never":
        return False
    threshold = thresholds.get(entry["ear"], {}).get(str(entry["hz"]))
    if threshold is None:
        return False
    if attenuation is not None:
        other = "left" if entry["ear"] == "right" else "right"
        other_threshold = thresholds.get(other, {}).get(str(entry["hz"]))
        noise = entry.get("maskerDBEM")
        if noise is not None:
            threshold = power_sum(threshold, noise - attenuation)  # the noise crossing back
        if other_threshold is not None:
            if noise is not None:
                other_threshold = power_sum(other_threshold, noise)
            threshold = min(threshold, other_threshold + attenuation)
    p = (1 - lapse) / (1 + math.exp(-slope * (entry["dBHL"] - threshold)))
    return rng.random() < p


exit_status = None
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done == pid:
        exit_status = os.waitstatus_to_exitcode(status)
        break
    now = time.monotonic()
    while periods:
        frames, squares, crossings, peaks = periods.popleft()
        for e in range(2):
            sounding_frames[e] = sounding_frames[e] + frames if squares[e] > SILENT else 0
            recent[e].append((frames, squares[e]))
            while sum(f for f, _ in recent[e]) > 0.8 * rate:
                recent[e].popleft()
        masker = [sounding_frames[e] > MASKER_SECONDS * rate for e in range(2)]
        for e in range(2):
            if peaks[e] > 0:
                if masker[e]:
                    masker_peak_dbfs = max(masker_peak_dbfs, 20 * math.log10(peaks[e]))
                else:
                    peak_dbfs = max(peak_dbfs, 20 * math.log10(peaks[e]))
        # Tones are heard in an ear without masking noise.
        candidates = [e for e in range(2) if not masker[e]] or [0]
        loud = max(candidates, key=lambda e: squares[e])
        if squares[loud] <= SILENT:
            silence_frames += frames
            continue
        if current is None or silence_frames > 0.4 * rate:
            # A new presentation: its first pulse starts now.
            current = {"time": round(now - started, 3), "ear": ears[loud], "frames": 0, "window": collections.deque(),
                       "crossings": 0, "best": 0.0, "decided": False}
            heard.append(current)
        silence_frames = 0
        if ears[loud] != current["ear"]:
            continue
        current["frames"] += frames
        current["crossings"] += crossings[loud]
        current["window"].append((frames, squares[loud]))
        while sum(f for f, _ in current["window"]) - current["window"][0][0] >= WINDOW:
            current["window"].popleft()
        if sum(f for f, _ in current["window"]) >= WINDOW:
            mean = sum(f * s for f, s in current["window"]) / sum(f for f, _ in current["window"])
            current["best"] = max(current["best"], mean)
        # The first pulse measured (200 ms in): how loud, which frequency, heard or not.
        if not current["decided"] and current["frames"] >= 0.2 * rate and current["best"] > 0:
            current["decided"] = True
            hz_measured = current["crossings"] / 2 / (current["frames"] / rate)
            hz = min(retspl, key=lambda f: abs(math.log(f / hz_measured)))
            dbfs = 10 * math.log10(2 * current["best"])
            current.update(hz=hz, hzMeasured=round(hz_measured, 1), levelDBFS=round(dbfs, 3),
                           dBHL=round(dbfs + calibration[current["ear"]] - retspl[hz], 2))
            other = 1 - loud
            if masker[other]:
                # The noise's level over its last 0.8 s (its level was set at the wait's start).
                total = sum(f for f, _ in recent[other])
                mean = sum(f * m for f, m in recent[other]) / total
                noise_dbfs = 10 * math.log10(2 * mean)
                em = noise_dbfs + calibration[ears[other]] - retspl[hz] - narrow_band_correction(hz)
                current.update(maskerEar=ears[other], maskerDBFS=round(noise_dbfs, 3), maskerDBEM=round(em, 2))
            current["answered"] = decide(current)
            if current["answered"]:
                press_at = now + rng.uniform(0.15, 0.45)  # 350-650 ms after the onset
                press_ear = current["ear"]
    if press_at is not None and now >= press_at:
        press(now, press_ear)
        press_at = None
    if mode == "yes" and now >= next_false_alarm:
        press(now)  # yes to everything: presses all the time
        next_false_alarm = now + 0.7
    elif false_alarm > 0 and now >= next_false_alarm:
        if silence_frames > rate and rng.random() < false_alarm:
            press(now)
        next_false_alarm = now + false_alarm_every
    time.sleep(0.005)

if exit_status is None:
    os.write(fd, b"q")  # out of time: stop the test, as a person would
    _, status = os.waitpid(pid, 0)
    exit_status = os.waitstatus_to_exitcode(status)
time.sleep(0.2)
client.deactivate()
client.close()
for entry in heard:
    for key in ("window", "frames", "crossings", "best", "decided"):
        entry.pop(key, None)
json.dump({"presentations": heard, "presses": presses, "peakDBFS": round(peak_dbfs, 3),
           "maskerPeakDBFS": round(masker_peak_dbfs, 3), "exit": exit_status,
           "screen": screen.decode("utf-8", "replace")}, open(config["out"], "w"), indent=1)
