#!/usr/bin/env python3
"""HASPI v2 (the Clarity challenge's pyclarity 0.9.0) for speech through ribbit and through the
Clarity challenge's baseline hearing aid, for the IEC 60118-15 standard audiograms N3, N4, S2 and
S3 (Prescriptions/iec-*.rx, rule camfit) at 55, 65 and 80 dB SPL; prints a Markdown table.

- Speech: Harvard sentences (list 1) spoken by espeak-ng (two of its voices, alternating),
  0.3 s apart, resampled to 48 kHz. Synthetic speech: HASPI was fitted to real talkers.
- Levels: ribbit's scale, uncalibrated: a sine peaking at 0 dBFS is 100 dB SPL
  (`Calibration.uncalibrated`), so a signal of RMS 1 is 103.01 dB SPL, and speech at X dB SPL has
  a long-term RMS (pauses included, as `SpeechLikeSignal` measures it) of 10^((X - 103.01)/20).
  HASPI is told the same (`level1` = 103.01 dB SPL for RMS 1), for the reference and for every
  processed signal.
- ribbit: `ribbitd process IN OUT --rx iec-NAME.rx` on a stereo 32-bit float WAV (the same speech
  on both channels), its default program for the prescription (quiet: no noise reduction),
  volume 0. OUT comes back time-aligned (the engine's latency removed).
- Clarity baseline, as recipes/cec2/baseline/enhance.py does it: at 44.1 kHz, per ear
  `NALR(nfir=220, sample_rate=44100)` built from the ear's audiogram, then
  `Compressor(threshold=0.35, attenuation=0.1, attack=50, release=1000, rms_buffer_size=0.064)`,
  tanh soft clip, clip to +-1, 16-bit samples. Its scale is the challenge's: RMS 1 = 100 dB SPL
  (`haspi_v2_be`'s default), so its input is the same speech 3.01 dB higher in samples, and its
  output is brought back to ribbit's scale and to 48 kHz for HASPI: pyclarity's HASPI resamples to
  24 kHz by rounding the rate to whole kHz (44.1 kHz as 44), harmless when reference and output
  share a rate (as in the challenge) but a 0.2 % time warp against a 48 kHz reference (the
  unprocessed speech at 44.1 kHz scored 0.06 for N3 at 55 dB SPL against 0.96 at 48 kHz). Its
  NAL-R filter's delay stays in (as in the challenge); HASPI aligns each signal to the reference
  itself (broadband cross-correlation, then per band).
- No aid: the reference itself, through the impaired ear.
- HASPI: `haspi_v2(reference, 48000, processed, rate, audiogram, level1=103.01)`, the reference
  the clean speech at X dB SPL (HASPI's normal-hearing reference), the listener the audiogram
  (interpolated to 250 ... 6000 Hz), numpy's generator seeded with 0 before each call (HASPI
  dithers). The audiograms are the same in both ears and so is the input, so one ear (right)
  is computed; the script checks that ribbit's two output channels are equal, which makes the
  right ear's score the better ear's (the baseline treats both ears alike by construction).

Needs espeak-ng, a release ribbitd, and pyclarity 0.9.0 with numpy, scipy, numba and soundfile
(not its torch dependencies, which these modules do not import):

    python3 -m venv /tmp/clarity-venv
    /tmp/clarity-venv/bin/pip install --no-deps pyclarity==0.9.0
    /tmp/clarity-venv/bin/pip install numpy scipy numba soundfile
    /tmp/clarity-venv/bin/python bench/haspi-standard-audiograms.py [--ribbitd .build/release/ribbitd] [--jobs 2]
"""
import argparse
import math
import multiprocessing
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from clarity.enhancer.compressor import Compressor
from clarity.enhancer.nalr import NALR
from clarity.evaluator.haspi import haspi_v2
from clarity.utils.audiogram import Audiogram

AUDIOGRAMS = ["n3", "n4", "s2", "s3"]
LEVELS_DBSPL = [55, 65, 80]
RATE = 48000
CLARITY_RATE = 44100
# dB SPL of a signal of RMS 1: ribbit's 0 dBFS sine is 100 dB SPL; the challenge's RMS 1 is 100.
RIBBIT_RMS1_DBSPL = 100 + 20 * math.log10(math.sqrt(2))
CLARITY_RMS1_DBSPL = 100.0
HARVARD_LIST_1 = [
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.",
    "The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us.",
    "Large size in stockings is hard to sell.",
]
VOICES = ["en-us", "en-us+f3"]


def speech(directory, count):
    """The sentences at 48 kHz, 0.3 s apart, 0.2 s of silence at each end; peak-normalised."""
    parts = []
    for i, sentence in enumerate(HARVARD_LIST_1[:count]):
        path = directory / f"sentence-{i}.wav"
        subprocess.run(["espeak-ng", "-v", VOICES[i % len(VOICES)], "-s", "150", "-w", str(path), sentence], check=True)
        x, rate = sf.read(path)
        assert rate == 22050, rate
        parts += [resample_poly(x, RATE // 150, rate // 150), np.zeros(int(0.3 * RATE))]
    x = np.concatenate([np.zeros(int(0.2 * RATE))] + parts[:-1] + [np.zeros(int(0.2 * RATE))])
    return x / np.max(np.abs(x))


def at_level(x, dbspl, rms1_dbspl):
    return x * 10 ** ((dbspl - rms1_dbspl) / 20) / np.sqrt(np.mean(x**2))


def level_dbspl(x, rms1_dbspl=RIBBIT_RMS1_DBSPL):
    return 20 * math.log10(np.sqrt(np.mean(x**2))) + rms1_dbspl


def thresholds(name):
    """The right ear's thresholds from Prescriptions/iec-NAME.rx (both ears are the same)."""
    text = pathlib.Path(f"Prescriptions/iec-{name}.rx").read_text()
    ears = {m.group(1): m.group(2) for m in re.finditer(r"^(left|right):\s*(.*)$", text, re.M)}
    assert ears["left"] == ears["right"], name
    pairs = [p.split("=") for p in ears["right"].split()]
    return Audiogram(levels=np.array([float(db) for _, db in pairs]), frequencies=np.array([float(f) for f, _ in pairs]))


def ribbit(ribbitd, name, reference, directory):
    """Right channel of `ribbitd process` on the stereo reference, and how far its channels differ."""
    source, fitted = directory / f"{name}-in.wav", directory / f"{name}-out.wav"
    sf.write(source, np.stack([reference, reference], axis=1).astype(np.float32), RATE, subtype="FLOAT")
    subprocess.run([ribbitd, "process", str(source), str(fitted), "--rx", f"Prescriptions/iec-{name}.rx"], check=True,
                   stdout=subprocess.DEVNULL)
    out, rate = sf.read(fitted)
    assert rate == RATE and out.shape == (len(reference), 2), (rate, out.shape)
    return out[:, 1], float(np.max(np.abs(out[:, 0] - out[:, 1])))


def clarity_baseline(audiogram, reference):
    """recipes/cec2/baseline/enhance.py for one ear at 44.1 kHz; in and out on ribbit's scale at 48 kHz."""
    x = resample_poly(reference, 147, 160) * 10 ** ((RIBBIT_RMS1_DBSPL - CLARITY_RMS1_DBSPL) / 20)
    enhancer = NALR(nfir=220, sample_rate=CLARITY_RATE)
    compressor = Compressor(threshold=0.35, attenuation=0.1, attack=50, release=1000, rms_buffer_size=0.064)
    fir, _ = enhancer.build(audiogram)
    out, _, _ = compressor.process(enhancer.apply(fir, x))
    out = np.clip(np.tanh(out), -1.0, 1.0)
    out = (32768.0 * out).astype(np.int16) / 32768.0
    return resample_poly(out, 160, 147) * 10 ** ((CLARITY_RMS1_DBSPL - RIBBIT_RMS1_DBSPL) / 20)


def haspi(job):
    key, reference, processed, rate, audiogram = job
    np.random.seed(0)
    score, _ = haspi_v2(reference, RATE, processed, rate, audiogram, level1=RIBBIT_RMS1_DBSPL)
    return key, float(score)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ribbitd", default=".build/release/ribbitd")
    parser.add_argument("--sentences", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ribbit-haspi-") as tmp:
        directory = pathlib.Path(tmp)
        os.environ.setdefault("XDG_CACHE_HOME", str(directory / "cache"))
        clean = speech(directory, args.sentences)
        jobs, levels, channel_difference = [], {}, 0.0
        for name in AUDIOGRAMS:
            audiogram = thresholds(name)
            for level in LEVELS_DBSPL:
                reference = at_level(clean, level, RIBBIT_RMS1_DBSPL)
                aided, difference = ribbit(args.ribbitd, name, reference, directory)
                channel_difference = max(channel_difference, difference)
                baseline = clarity_baseline(audiogram, reference)
                levels[(name, level)] = (level_dbspl(reference), level_dbspl(aided), level_dbspl(baseline))
                jobs += [((name, level, "ribbit"), reference, aided, RATE, audiogram),
                         ((name, level, "baseline"), reference, baseline, RATE, audiogram),
                         ((name, level, "unaided"), reference, reference, RATE, audiogram)]
        prepared = time.monotonic() - start
        with multiprocessing.Pool(args.jobs) as pool:
            scores = dict(pool.map(haspi, jobs, chunksize=1))
    print("| audiogram | speech (dB SPL) | HASPI ribbit | HASPI Clarity baseline (NAL-R + compressor) | ribbit - baseline | HASPI no aid |")
    print("|---|---|---|---|---|---|")
    for name in AUDIOGRAMS:
        for level in LEVELS_DBSPL:
            r, b, u = (scores[(name, level, what)] for what in ("ribbit", "baseline", "unaided"))
            print(f"| {name.upper()} | {level} | {r:.3f} | {b:.3f} | {r - b:+.3f} | {u:.3f} |")
    print()
    print("Long-term output level, dB SPL (input / ribbit / Clarity baseline):",
          "; ".join(f"{n.upper()} {l}: {a:.1f} / {b:.1f} / {c:.1f}" for (n, l), (a, b, c) in levels.items()))
    print(f"{len(clean) / RATE:.1f} s of speech, {args.sentences} sentences; ribbit's channels differ by at most "
          f"{channel_difference:.2e}; {len(jobs)} HASPI runs on {args.jobs} processes; "
          f"{time.monotonic() - start:.0f} s in all ({prepared:.0f} s synthesis and processing)", file=sys.stderr)


if __name__ == "__main__":
    main()
