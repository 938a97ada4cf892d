#!/usr/bin/env python3
"""Speech in noise through ribbit and through the noise suppressors people compare it with
(issue 30): output SNR change (Hagerman), STOI and ESTOI, and wideband PESQ on clean speech.
Prints a Markdown table; `--json FILE` writes every figure.

- Speech: Harvard sentences (list 1) spoken by espeak-ng in two voices, 0.3 s apart, at 48 kHz,
  at 65 dB SPL on ribbit's uncalibrated scale (a 0 dBFS sine is 100 dB SPL, so RMS 1 is
  103.01 dB SPL), its long-term RMS taken over the speech with its pauses. Synthetic speech:
  no recordings of real talkers ship with ribbit or can be fetched by the bench.
- Noise, made here and seeded: `ssn`, stationary noise with the speech's own long-term spectrum
  (Welch, 4096 points); `babble`, six espeak-ng talkers (Harvard lists 2 to 7, six voices, each
  at the same RMS, started at random offsets); `clatter`, dish-like impacts (Poisson, 4 a second,
  each a few damped resonances from 1.5 to 7 kHz decaying in 5 to 40 ms, levels spread over
  20 dB). The noise runs 2 s before the speech (every suppressor and detector gets that long to
  learn it) and the figures are read over the speech only.
- SNR: 0, 5 and 10 dB, speech RMS over noise RMS over the speech's stretch.
- Hagerman & Olofsson (2004): each condition processes speech + noise and speech - noise; half
  their sum is the speech through the aid, half their difference the noise. ΔSNR is the output
  SNR less the input SNR, both broadband at 16 kHz, unweighted.
- STOI / ESTOI (pystoi): the clean input speech against the processed mixture, 16 kHz.
- PESQ (wideband, ITU-T P.862.2, `pesq`): the clean input against the processed clean speech.
- Conditions: the input; ribbit (`ribbitd process`, stereo file, left channel read) with a
  moderate flat loss fitted by CAMFIT (the thresholds of Prescriptions/moderate-flat.rx, rule
  camfit) in program quiet and in program noisy, the same fitting played linearly (explicit gains
  at what CAMFIT plays for 65 dB SPL speech, per band: compression off), and a flat 0 dB fitting
  in program noisy; Speex's noise suppressor (speexdsp, 10 ms frames at 16 kHz), WebRTC's (level
  2, 10 ms at 16 kHz, its high-pass included) and RNNoise (10 ms at 48 kHz). The peers run at
  their own rates; their delay is measured (cross-correlation of clean speech in and out) and
  removed before any figure, and printed. ribbit's output is time-aligned by `process` itself.

Needs espeak-ng, a release ribbitd and, in an environment of its own (never shipped):

    python3 -m venv /tmp/sin-venv
    /tmp/sin-venv/bin/pip install numpy scipy soundfile pystoi pesq speexdsp-ns webrtc-noise-gain pyrnnoise
    /tmp/sin-venv/bin/python bench/speech-in-noise.py [--ribbitd .build/release/ribbitd] [--jobs 2]
"""
import argparse
import ctypes
import importlib.util
import json
import math
import multiprocessing
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly, welch

RATE = 48000
ANALYSIS_RATE = 16000
RMS1_DBSPL = 100 + 20 * math.log10(math.sqrt(2))
SPEECH_DBSPL = 65
LEAD_SECONDS = 2.0
SNRS = [0, 5, 10]
NOISES = ["ssn", "babble", "clatter"]
HARVARD = [
    # List 1: the target talker(s).
    ["The birch canoe slid on the smooth planks.", "Glue the sheet to the dark blue background.",
     "It's easy to tell the depth of a well.", "These days a chicken leg is a rare dish.",
     "Rice is often served in round bowls.", "The juice of lemons makes fine punch.",
     "The box was thrown beside the parked truck.", "The hogs were fed chopped corn and garbage.",
     "Four hours of steady work faced us.", "Large size in stockings is hard to sell."],
    # Lists 2 to 7: one babble talker each.
    ["The boy was there when the sun rose.", "A rod is used to catch pink salmon.",
     "The source of the huge river is the clear spring.", "Kick the ball straight and follow through.",
     "Help the woman get back to her feet.", "A pot of tea helps to pass the evening."],
    ["The small pup gnawed a hole in the sock.", "The fish twisted and turned on the bent hook.",
     "Press the pants and sew a button on the vest.", "The swan dive was far short of perfect.",
     "The beauty of the view stunned the young boy.", "Two blue fish swam in the tank."],
    ["Her purse was full of useless trash.", "The colt reared and threw the tall rider.",
     "It snowed, rained, and hailed the same morning.", "Read verse out loud for pleasure.",
     "Hoist the load to your left shoulder.", "Take the winding path to reach the lake."],
    ["Note closely the size of the gas tank.", "Wipe the grease off his dirty face.",
     "Mend the coat before you go out.", "The wrist was badly strained and hung limp.",
     "The stray cat gave birth to kittens.", "The young girl gave no clear response."],
    ["The meal was cooked before the bell rang.", "What joy there is in living.",
     "A king ruled the state in the early days.", "The ship was torn apart on the sharp reef.",
     "Sickness kept him home the third week.", "The wide road shimmered in the hot sun."],
    ["The lazy cow lay in the cool grass.", "Lift the square stone over the fence.",
     "The rope will bind the seven books at once.", "Hop over the fence and plunge in.",
     "The friendly gang left the drug store.", "Mesh wire keeps chicks inside."],
]
TARGET_VOICES = ["en-us", "en-us+f3"]
BABBLE_VOICES = ["en-us+m3", "en-gb", "en-us+f2", "en+m5", "en-gb+f4", "en-us+m7"]


def espeak(directory, name, sentences, voices, gap_seconds):
    parts = []
    for i, sentence in enumerate(sentences):
        path = directory / f"{name}-{i}.wav"
        subprocess.run(["espeak-ng", "-v", voices[i % len(voices)], "-s", "150", "-w", str(path), sentence], check=True)
        x, rate = sf.read(path)
        parts += [resample_poly(x, RATE // 150, rate // 150), np.zeros(int(gap_seconds * RATE))]
    return np.concatenate(parts[:-1])


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def speech_shaped_noise(speech, length, rng):
    """Gaussian noise whose spectrum is the speech's long-term spectrum (Welch, 4096 points)."""
    f, psd = welch(speech, RATE, nperseg=4096)
    spectrum = np.fft.rfft(rng.standard_normal(length))
    bins = np.fft.rfftfreq(length, 1 / RATE)
    return np.fft.irfft(spectrum * np.sqrt(np.interp(bins, f, psd)), length)


def babble(directory, length, rng):
    total = np.zeros(length)
    for t, sentences in enumerate(HARVARD[1:]):
        talker = espeak(directory, f"babble-{t}", sentences, [BABBLE_VOICES[t]], 0.15)
        talker = np.tile(talker, length // len(talker) + 2)
        start = rng.integers(0, len(talker) - length)
        total += talker[start:start + length] / rms(talker)
    return total


def clatter(length, rng):
    total = np.zeros(length)
    t = np.arange(int(0.2 * RATE)) / RATE
    at = 0.0
    while True:
        at += rng.exponential(1 / 4)
        start = int(at * RATE)
        if start >= length:
            return total
        impact = np.zeros(len(t))
        for _ in range(3):
            hz, tau = rng.uniform(1500, 7000), rng.uniform(0.005, 0.04)
            impact += np.sin(2 * math.pi * hz * t + rng.uniform(0, 2 * math.pi)) * np.exp(-t / tau)
        impact *= 10 ** (rng.uniform(-20, 0) / 20)
        end = min(length, start + len(t))
        total[start:end] += impact[:end - start]


def material(directory):
    """Clean speech with the lead-in, and each noise as long, seeded."""
    rng = np.random.default_rng(30)
    speech = espeak(directory, "target", HARVARD[0], TARGET_VOICES, 0.3)
    speech *= 10 ** ((SPEECH_DBSPL - RMS1_DBSPL) / 20) / rms(speech)
    lead = int(LEAD_SECONDS * RATE)
    tail = int(0.3 * RATE)
    clean = np.concatenate([np.zeros(lead), speech, np.zeros(tail)])
    length = len(clean)
    noises = {
        "ssn": speech_shaped_noise(speech, length, rng),
        "babble": babble(directory, length, rng),
        "clatter": clatter(length, rng),
    }
    return clean, noises, slice(lead, lead + len(speech))


# --- the processors -------------------------------------------------------------------------


def ribbit(ribbitd, rx, program, signal, directory, tag):
    source, out = directory / f"{tag}-in.wav", directory / f"{tag}-out.wav"
    sf.write(source, np.stack([signal, signal], axis=1).astype(np.float32), RATE, subtype="FLOAT")
    command = [ribbitd, "process", str(source), str(out), "--rx", str(rx)]
    if program:
        command += ["--program", program]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=ribbit_environment(directory))
    y, rate = sf.read(out)
    assert rate == RATE and y.shape == (len(signal), 2), (rate, y.shape)
    return y[:, 0]


def ribbit_environment(directory):
    """A calibration with headroom: the input as uncalibrated (100 dB SPL at 0 dBFS, so 65 dB SPL
    speech is the same samples for every condition), headphones that play 0 dBFS at 115 dB SPL
    (within the 90-125 dB SPL real ones span), so amplified speech in noise stays under the
    sample ceiling and the figures are the processing's, not the clipping's."""
    config = directory / "config"
    (config / "ribbit").mkdir(parents=True, exist_ok=True)
    (config / "ribbit" / "ribbitd.conf").write_text(
        'calibration = "bench"\n[profile.bench]\noutput-left = 115.0\noutput-right = 115.0\ninput = 100.0\n')
    return dict(os.environ, XDG_CONFIG_HOME=str(config), XDG_STATE_HOME=str(directory / "state"))


def frames_int16(signal, rate, frame):
    """The signal resampled to `rate`, as int16 frames of `frame` samples (1.0 is 32767), and its length there."""
    x = resample_poly(signal, rate // 1000, RATE // 1000) if rate != RATE else signal
    x = np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)
    x = np.concatenate([x, np.zeros(-len(x) % frame, dtype=np.int16)])
    return x.reshape(-1, frame), len(signal) * rate // RATE


def back(frames, length, rate):
    y = np.concatenate(frames).astype(np.float64)[:length] / 32767
    return resample_poly(y, RATE // 1000, rate // 1000) if rate != RATE else y


def speex(signal):
    import speexdsp_ns
    suppressor = speexdsp_ns.NoiseSuppression.create(160, 16000)
    frames, length = frames_int16(signal, 16000, 160)
    out = [np.frombuffer(suppressor.process(f.tobytes()), dtype=np.int16) for f in frames]
    return back(out, length, 16000)


def webrtc(signal):
    from webrtc_noise_gain import AudioProcessor
    processor = AudioProcessor(0, 2)
    frames, length = frames_int16(signal, 16000, 160)
    out = [np.frombuffer(processor.Process10ms(f.tobytes()).audio, dtype=np.int16) for f in frames]
    return back(out, length, 16000)


def rnnoise(signal):
    # librnnoise from the pyrnnoise wheel, called directly (its Python wrapper needs ffmpeg bindings).
    where = pathlib.Path(importlib.util.find_spec("pyrnnoise").submodule_search_locations[0])
    lib = ctypes.CDLL(str(where / "librnnoise.so"))
    lib.rnnoise_create.restype = ctypes.c_void_p
    lib.rnnoise_create.argtypes = [ctypes.c_void_p]
    lib.rnnoise_process_frame.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
    lib.rnnoise_destroy.argtypes = [ctypes.c_void_p]
    state = lib.rnnoise_create(None)
    frames, length = frames_int16(signal, RATE, 480)
    out = []
    for f in frames:
        buffer = np.ascontiguousarray(f, dtype=np.float32)
        pointer = buffer.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        lib.rnnoise_process_frame(state, pointer, pointer)
        out.append(np.clip(np.round(buffer), -32768, 32767).astype(np.int16))
    lib.rnnoise_destroy(state)
    return back(out, length, RATE)


PEERS = {"Speex noise suppressor": speex, "WebRTC NS level 2": webrtc, "RNNoise": rnnoise}


def delay_samples(clean, processed):
    """Integer delay of `processed` behind `clean` (48 kHz), by cross-correlation over +-50 ms."""
    n = len(clean)
    spectrum = np.fft.rfft(processed, 2 * n) * np.conj(np.fft.rfft(clean, 2 * n))
    correlation = np.fft.irfft(spectrum, 2 * n)
    span = int(0.05 * RATE)
    lags = np.concatenate([correlation[:span + 1], correlation[-span:]])
    lag = int(np.argmax(lags))
    return lag if lag <= span else lag - len(lags)


def shifted(x, lag):
    return np.concatenate([x[lag:], np.zeros(lag)]) if lag >= 0 else np.concatenate([np.zeros(-lag), x[:lag]])


# --- the figures ----------------------------------------------------------------------------


def to16k(x):
    return resample_poly(x, 1, RATE // ANALYSIS_RATE)


def snr_db(speech, noise):
    return 10 * math.log10(np.sum(np.square(speech)) / np.sum(np.square(noise)))


def figures(job):
    from pesq import pesq
    from pystoi import stoi
    clean, speech_part, outputs = job["clean"], job["part"], job["outputs"]
    step = RATE // ANALYSIS_RATE
    part16 = slice(speech_part.start // step, speech_part.stop // step)
    result = {}
    if "clean" in outputs:
        reference, degraded = to16k(clean), to16k(outputs["clean"])
        result["pesq"] = float(pesq(ANALYSIS_RATE, reference[part16], degraded[part16], "wb"))
    for name, pair in job["mixtures"].items():
        plus, minus, noise = pair
        s_out, n_out = to16k((plus + minus) / 2)[part16], to16k((plus - minus) / 2)[part16]
        reference, n_in = to16k(clean)[part16], to16k(noise)[part16]
        mixture = to16k(plus)[part16]
        result[name] = {
            "deltaSNR": snr_db(s_out, n_out) - snr_db(reference, n_in),
            "stoi": float(stoi(reference, mixture, ANALYSIS_RATE, extended=False)),
            "estoi": float(stoi(reference, mixture, ANALYSIS_RATE, extended=True)),
        }
    return job["condition"], result


RIBBIT_CONDITIONS = [
    "ribbit, moderate flat loss, CAMFIT, program quiet",
    "ribbit, the same fitting linear (CAMFIT's 65 dB SPL gains, compression off)",
    "ribbit, the same CAMFIT fitting, program noisy",
    "ribbit, flat 0 dB fitting, program noisy",
]


def rx_files(ribbitd, directory):
    """The fittings: CAMFIT for the moderate flat loss, the same played linearly, a flat 0 dB."""
    text = pathlib.Path("Prescriptions/moderate-flat.rx").read_text().splitlines()
    ears = [line for line in text if line.startswith(("left:", "right:"))]
    camfit = directory / "camfit.rx"
    camfit.write_text("\n".join(["RIBBIT-RX 2", "name: Moderate flat loss, CAMFIT", "env: quiet", "rule: camfit"] + ears
                                + ["lowpass: 8000", "max-output: -1", ""]))
    report = json.loads(subprocess.run([ribbitd, "rx", "show", str(camfit), "--json"], check=True,
                                       capture_output=True, text=True, env=ribbit_environment(directory)).stdout)
    gains = {ear: " ".join(f"{int(b['centreHz'])}={b['gain65DB']:g}" for b in report["ears"][ear]["bands"])
             for ear in ("left", "right")}
    linear = directory / "linear.rx"
    linear.write_text("\n".join(["RIBBIT-RX 1", "name: Moderate flat loss, CAMFIT's gains for 65 dB SPL, linear",
                                 "env: quiet", "rule: explicit", f"gain-left: {gains['left']}",
                                 f"gain-right: {gains['right']}", "lowpass: 8000", "max-output: -1", ""]))
    files = [(camfit, "quiet"), (linear, None), (camfit, "noisy"), (pathlib.Path("Prescriptions/flat.rx"), "noisy")]
    return dict(zip(RIBBIT_CONDITIONS, files))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ribbitd", default=".build/release/ribbitd")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument("--only", help="run only conditions whose name contains this")
    parser.add_argument("--keep", help="keep the processed WAV files in this directory")
    args = parser.parse_args()
    directory = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="speech-in-noise-"))
    directory.mkdir(parents=True, exist_ok=True)
    clean, noises, part = material(directory)
    scaled = {}
    for noise, n in noises.items():
        for snr in SNRS:
            scaled[(noise, snr)] = n * rms(clean[part]) / rms(n[part]) * 10 ** (-snr / 20)

    wanted = lambda name: not args.only or args.only in name or name.startswith("input")
    processors = {"input (unprocessed)": lambda x, tag: x}
    if any(wanted(name) for name in RIBBIT_CONDITIONS):
        for name, (rx, program) in rx_files(args.ribbitd, directory).items():
            processors[name] = (lambda rx, program: lambda x, tag: ribbit(args.ribbitd, rx, program, x, directory, tag))(rx, program)
    latency = {}
    for name, peer in PEERS.items():
        if wanted(name):
            lag = delay_samples(clean, peer(clean))
            latency[name] = lag
            processors[name] = (lambda peer, lag: lambda x, tag: shifted(peer(x), lag))(peer, lag)
    processors = {k: v for k, v in processors.items() if wanted(k)}

    jobs = []
    for c, (name, process) in enumerate(processors.items()):
        outputs = {"clean": process(clean, f"c{c}-clean")}
        mixtures = {}
        for (noise, snr), n in scaled.items():
            plus = process(clean + n, f"c{c}-{noise}{snr}-plus")
            minus = process(clean - n, f"c{c}-{noise}{snr}-minus")
            mixtures[f"{noise}/{snr}"] = (plus, minus, n)
        print(f"processed: {name}", file=sys.stderr)
        jobs.append({"condition": name, "clean": clean, "part": part, "outputs": outputs, "mixtures": mixtures})
    with multiprocessing.Pool(args.jobs) as pool:
        results = dict(pool.map(figures, jobs))

    head = "| at 0 / 5 / 10 dB SNR | PESQ clean | " + " | ".join(
        f"{noise}: ΔSNR dB | STOI | ESTOI" for noise in NOISES) + " |"
    print(head)
    print("|---" * (2 + 3 * len(NOISES)) + "|")
    for name, r in results.items():
        cells = [name + (f" ({latency[name] / RATE * 1000:.1f} ms)" if name in latency else ""), f"{r['pesq']:.2f}"]
        for noise in NOISES:
            row = [r[f"{noise}/{snr}"] for snr in SNRS]
            cells.append(" / ".join(f"{x['deltaSNR']:+.1f}" for x in row))
            cells.append(" / ".join(f"{x['stoi']:.3f}" for x in row))
            cells.append(" / ".join(f"{x['estoi']:.3f}" for x in row))
        print("| " + " | ".join(cells) + " |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"latencySamples48k": latency, "results": results}, indent=1))


if __name__ == "__main__":
    main()
