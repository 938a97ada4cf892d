#!/usr/bin/env python3
"""How much STOI a noise reduction made of band gains can win, and what holds ribbit's back
(issue 30). Prints a Markdown table of STOI at 0 / 5 / 10 dB SNR.

ribbit's noise reduction multiplies each compressor band's gain (10 bands, 250 Hz to 8 kHz) and
applies the sum through the engine's one 193-tap linear-phase filter, so it can neither resolve
a voice's harmonics nor look ahead. Is that why its STOI in speech-shaped noise stays under
Speex's (per-bin gains on 10 ms frames)? This bench answers on bench/speech-in-noise.py's own
material (the same speech, noises and SNRs), with band gains that know more than any estimator
can, applied to band signals split by raised-cosine crossovers on a log-frequency axis:

- oracle: the Wiener gain from the true speech and noise powers in each band (over the last
  5.3 ms, floored at -15 dB like ribbit's): what band gains can do when the estimate is right.
  The bands are split ideally (zero-phase, on the whole file's spectrum), which at 250-750 Hz
  is sharper than a 193-tap filter can; hence the next row;
- the same on bands 500 Hz apart, about the finest a 193-tap filter resolves;
- known noise: the Wiener gain on a maximum-likelihood SNR, max(1 - N/P, -15 dB), P the
  mixture's band power (FFT bins summed into the band) over the last 5.3 ms (a 256-point
  analysis, ribbit's detector) or the last 21 ms (1024 points: a longer look, and sharper band
  edges), N the noise's band power over the 2 s before the speech: a perfect noise estimate for
  steady noise, and speech judged from the band power alone;
- Speex's noise suppressor as in bench/speech-in-noise.py.

Needs what bench/speech-in-noise.py needs (its environment), not ribbitd:

    /tmp/sin-venv/bin/python bench/noise-reduction-ceiling.py
"""
import importlib.util
import pathlib
import shutil
import sys
import tempfile

import numpy as np
from pystoi import stoi

here = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("speech_in_noise", here / "speech-in-noise.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

RATE = bench.RATE
RIBBIT_CENTRES = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]
UNIFORM_CENTRES = list(range(250, 8001, 500))
FLOOR = 10 ** (-15 / 20)


def crossovers(centres, frequencies):
    """Band weights that sum to 1: raised-cosine crossovers between centres on log frequency."""
    lc, lf = np.log2(centres), np.log2(np.maximum(frequencies, 1))
    weights = np.ones((len(centres), len(frequencies)))
    for i in range(len(centres)):
        if i > 0:
            weights[i] *= np.sin(np.pi / 2 * np.clip((lf - lc[i - 1]) / (lc[i] - lc[i - 1]), 0, 1)) ** 2
        if i < len(centres) - 1:
            weights[i] *= np.cos(np.pi / 2 * np.clip((lf - lc[i]) / (lc[i + 1] - lc[i]), 0, 1)) ** 2
    return weights


def split(x, centres):
    spectrum = np.fft.rfft(x)
    weights = crossovers(centres, np.fft.rfftfreq(len(x), 1 / RATE))
    return [np.fft.irfft(spectrum * w, len(x)) for w in weights]


def causal_power(x, window):
    """Mean of x^2 over the last `window` samples (Hann-weighted), at every sample."""
    w = np.hanning(window)
    return np.convolve(x * x, w / w.sum())[: len(x)]


def oracle(speech, noise, centres):
    out = np.zeros(len(speech))
    for s, n in zip(split(speech, centres), split(noise, centres)):
        ps, pn = causal_power(s, 256), causal_power(n, 256)
        out += np.maximum(ps / (ps + pn + 1e-30), FLOOR) * (s + n)
    return out


def known_noise(speech, noise, lead, window):
    """The Wiener gain on the maximum-likelihood SNR with the noise's band power known (from
    the lead-in); the mixture's band power over the last `window` samples."""
    x = speech + noise
    hop = 64
    frames = (len(x) - window) // hop
    bins = np.fft.rfftfreq(window, 1 / RATE)
    weights = crossovers(RIBBIT_CENTRES, bins) ** 2
    hann = np.hanning(window)
    def band_powers(signal, count):
        return np.array([weights @ np.abs(np.fft.rfft(hann * signal[i * hop:i * hop + window])) ** 2 for i in range(count)])
    mixture = band_powers(x, frames)
    noise_power = band_powers(noise[:lead], (lead - window) // hop).mean(0)
    gains = np.maximum(1 - noise_power / np.maximum(mixture, 1e-30), FLOOR)
    at = np.clip((np.arange(len(x)) - window) // hop, 0, frames - 1)  # the frame that ended last
    out = np.zeros(len(x))
    for j, band in enumerate(split(x, RIBBIT_CENTRES)):
        g = gains[at, j]
        g[:window] = 1
        out += g * band
    return out


def main():
    directory = pathlib.Path(tempfile.mkdtemp(prefix="nr-ceiling-"))
    clean, noises, part = bench.material(directory)
    shutil.rmtree(directory)
    lead = part.start
    step = RATE // bench.ANALYSIS_RATE
    part16 = slice(part.start // step, part.stop // step)
    reference = bench.to16k(clean)[part16]
    speex_lag = bench.delay_samples(clean, bench.speex(clean))
    conditions = {
        "input (unprocessed)": lambda s, n: s + n,
        "oracle band gains, ribbit's 10 bands": lambda s, n: oracle(s, n, RIBBIT_CENTRES),
        "oracle band gains, bands 500 Hz apart": lambda s, n: oracle(s, n, UNIFORM_CENTRES),
        "known noise, 10 bands, band power over 5.3 ms (ribbit's detector)": lambda s, n: known_noise(s, n, lead, 256),
        "known noise, 10 bands, band power over 21 ms": lambda s, n: known_noise(s, n, lead, 1024),
        "Speex noise suppressor (10 ms frames, per-bin gains)": lambda s, n: bench.shifted(bench.speex(s + n), speex_lag),
    }
    print("| STOI at 0 / 5 / 10 dB SNR | " + " | ".join(["speech-shaped noise", "babble"]) + " |")
    print("|---|---|---|")
    for name, process in conditions.items():
        cells = []
        for noise in ["ssn", "babble"]:
            row = []
            for snr in bench.SNRS:
                n = noises[noise] * bench.rms(clean[part]) / bench.rms(noises[noise][part]) * 10 ** (-snr / 20)
                y = bench.to16k(process(clean, n))[part16]
                row.append(f"{stoi(reference, y, bench.ANALYSIS_RATE):.3f}")
            cells.append(" / ".join(row))
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
