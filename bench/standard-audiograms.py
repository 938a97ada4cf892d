#!/usr/bin/env python3
"""The README's table of the ten IEC 60118-15 standard audiograms: per audiogram, the thresholds,
camfit's soft-speech (50 dB SPL) target and what ribbit plays at 2, 4, 6 and 8 kHz, and whether
the clinical note is given. Reads `ribbitd rx show --json` (the release build) for
Prescriptions/iec-*.rx; prints Markdown."""
import json, subprocess, sys

ribbitd = sys.argv[1] if len(sys.argv) > 1 else ".build/release/ribbitd"
names = ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "s1", "s2", "s3"]
shown = [2000, 4000, 6000, 8000]
print("| audiogram | dB HL at 250 / 500 / 1k / 2k / 4k / 6k Hz | soft speech, target -> played at " +
      " / ".join(f"{f // 1000} kHz" for f in shown) + " (dB) | bands short | clinical note |")
print("|---|---|---|---|---|")
for name in names:
    report = json.loads(subprocess.run([ribbitd, "rx", "show", "--json", f"Prescriptions/iec-{name}.rx"],
                                       check=True, capture_output=True, text=True).stdout)
    ear = report["ears"]["right"]
    hl = ear["thresholdsDBHL"]
    bands = {int(b["centreHz"]): b for b in ear["bands"]}
    cells = []
    for f in shown:
        b = bands[f]
        cells.append(f"{b['target50DB']:.1f}" if b["cappedBy"][0] is None else f"{b['target50DB']:.1f} -> **{b['gain50DB']:.1f}**")
    short = sum(1 for b in ear["bands"] if any(c is not None for c in b["cappedBy"]))
    note = report.get("clinicalNote")
    what = "-" if note is None else ("power aid / CI assessment" if "cochlear" in note else "") + \
        (" + frequency lowering" if "lowering" in note else "") or "more powerful aid"
    print(f"| {name.upper()} ([rx](Prescriptions/iec-{name}.rx), [QR](Prescriptions/iec-{name}.png)) | " +
          " / ".join(str(hl[str(f)]) for f in [250, 500, 1000, 2000, 4000, 6000]) +
          f" | {' / '.join(cells)} | {short} of 10 | {what.strip(' +')} |")
