#!/usr/bin/env python3
"""Spectrograms of noise reduction, to look for musical noise (issue 30): the same 4 s of
bench/speech-in-noise.py's material (the last second of the noise alone, then speech in it, at
5 dB SNR) as it goes in and as ribbit's program noisy (flat 0 dB fitting), Speex and WebRTC NS
give it back, one panel each on one colour scale, for speech-shaped noise and for babble.
Musical noise shows as isolated short bright dots scattered over the noise-only second, where
a steady residual shows as an even, darker carpet.

Also prints, per condition, how the residual noise fluctuates where there is no speech: the
spread (standard deviation, dB) of its short-time spectrum's cells from 250 Hz to 7 kHz over
the last quarter of that second (ribbit's noise floor takes 1.7 s from the noise's start to
rise to it, 0.7 s into the panel), each bin against its own mean, beside the input's (steady noise of the same
spectrum: about 5.6 dB, the spread of a chi-square with two degrees of freedom); gains that
wander from frame to frame raise it.

Needs bench/speech-in-noise.py's environment plus matplotlib:

    /tmp/sin-venv/bin/pip install matplotlib
    /tmp/sin-venv/bin/python bench/noise-spectrograms.py [--ribbitd .build/release/ribbitd] [-o docs/images]
"""
import argparse
import importlib.util
import pathlib
import shutil
import sys
import tempfile

import numpy as np

here = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("speech_in_noise", here / "speech-in-noise.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

RATE = bench.RATE
SNR = 5
WINDOW = 512  # 32 ms at 16 kHz
HOP = 64  # 4 ms
# speech-in-noise.py's calibration plays 0 dBFS at 115 dB SPL from an input read as 100 dB SPL
# at 0 dBFS, so the flat 0 dB fitting comes out 15 dB under its input: put back, so one colour
# scale compares the panels.
CALIBRATION_OFFSET_DB = 115 - 100


def spectrogram_db(x):
    """Power per (frame, bin) in dB at 16 kHz."""
    frames = (len(x) - WINDOW) // HOP
    index = np.arange(WINDOW)[None, :] + HOP * np.arange(frames)[:, None]
    power = np.abs(np.fft.rfft(x[index] * np.hanning(WINDOW), axis=1)) ** 2
    return 10 * np.log10(power + 1e-12)


def residual_spread_db(cells):
    """The spread of the noise-only cells from 250 Hz to 7 kHz, each bin against its own mean."""
    band = slice(int(250 / 16000 * WINDOW), int(7000 / 16000 * WINDOW))
    c = cells[:, band]
    return float(np.std(c - c.mean(axis=0)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ribbitd", default=".build/release/ribbitd")
    parser.add_argument("-o", "--output", default=".", help="directory for the PNG files")
    args = parser.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory = pathlib.Path(tempfile.mkdtemp(prefix="noise-spectrograms-"))
    clean, noises, part = bench.material(directory)
    flat = pathlib.Path("Prescriptions/flat.rx")
    lags = {name: bench.delay_samples(clean, peer(clean)) for name, peer in bench.PEERS.items() if "RNNoise" not in name}
    conditions = {
        "input": lambda x, tag: x,
        "ribbit, program noisy (2.0 ms)":
            lambda x, tag: bench.ribbit(args.ribbitd, flat, "noisy", x, directory, tag) * 10 ** (CALIBRATION_OFFSET_DB / 20),
    }
    for name, lag in lags.items():
        conditions[name] = (lambda peer, lag: lambda x, tag: bench.shifted(peer(x), lag))(bench.PEERS[name], lag)
    start = part.start - RATE  # the last second of the noise alone
    stretch = slice(start, start + 4 * RATE)
    print("| residual noise before the speech, spread of its spectrum's cells (dB) | speech-shaped noise | babble |")
    print("|---|---|---|")
    spreads = {name: [] for name in conditions}
    for noise in ["ssn", "babble"]:
        n = noises[noise] * bench.rms(clean[part]) / bench.rms(noises[noise][part]) * 10 ** (-SNR / 20)
        figure, axes = plt.subplots(len(conditions), 1, figsize=(8, 1.9 * len(conditions)), sharex=True, constrained_layout=True)
        for axis, (name, process) in zip(axes, conditions.items()):
            y = bench.to16k(process(clean + n, f"{noise}-{len(spreads[name])}")[stretch])
            cells = spectrogram_db(y)
            # Frames wholly in 0.75-1 s: the noise alone after ribbit's noise floor has risen to
            # it (minimum statistics: 1.7 s after the noise starts, here at -1 s).
            quiet = cells[12000 // HOP : (16000 - WINDOW) // HOP]
            spreads[name].append(residual_spread_db(quiet))
            if name == "input":  # one colour scale for every panel: the input's
                top = np.percentile(cells, 99.5)
            image = axis.imshow(cells.T, origin="lower", aspect="auto", cmap="magma", vmin=top - 70, vmax=top,
                                extent=(0, len(y) / 16000, 0, 8))
            axis.set_ylabel("kHz")
            axis.set_title(name, fontsize=9, loc="left")
            axis.axvline(1.0, color="white", linewidth=0.6, linestyle=":")
        axes[-1].set_xlabel("seconds (speech from 1 s, dotted line)")
        figure.colorbar(image, ax=axes, shrink=0.6, label="dB (70 dB range)")
        figure.suptitle(f"{'speech-shaped noise' if noise == 'ssn' else 'six-talker babble'}, {SNR} dB SNR, 65 dB SPL speech",
                        fontsize=10)
        path = pathlib.Path(args.output) / f"noise-reduction-spectrogram-{noise}.png"
        figure.savefig(path, dpi=80)
        plt.close(figure)
        from PIL import Image  # matplotlib's own dependency: a 64-colour palette keeps the file small
        Image.open(path).convert("RGB").quantize(64).save(path, optimize=True)
        print(f"wrote {path}", file=sys.stderr)
    for name, (ssn, babble) in spreads.items():
        print(f"| {name} | {ssn:.1f} | {babble:.1f} |")
    shutil.rmtree(directory)


if __name__ == "__main__":
    sys.exit(main())
