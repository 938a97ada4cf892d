#!/usr/bin/env python3
"""What each dependency costs each executable (issue 32, item 3): the release binaries'
stripped sizes, their symbol bytes grouped by the Swift module (or C/C++ library) that defined
them, and, as a baseline built in the same run, a one-line program linked statically three ways
(no Foundation, FoundationEssentials, Foundation): stripped size and resident memory after it
printed.

    bench/binary-cost.py [BUILD_DIR]     # default .build/release (make build)

Swift symbols name their module in the mangling ($s<len><Module>...); C and C++ symbols (SQLite
lives in the system library, but BoringSSL, toml++ and ICU's C code are linked in) are grouped by
a prefix. The sums are of symbol sizes, so a little less than the file (headers, tables); the
compiler's symbolic references and metadata name no module and make a row of their own.
Needs nm and strip (binutils) and swiftc.
"""

import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

BINARIES = ["ribbitd", "ribbit-web", "ribbit-audio"]
SWIFTC = shutil.which("swiftc") or "/opt/swift/usr/bin/swiftc"
MANGLED = re.compile(r"^\$s(\d+)([A-Za-z_][A-Za-z0-9_]*)")
# An extension of a standard type in another module: $sSS10FoundationE... (String, in Foundation).
EXTENSION = re.compile(r"^\$s(?:S[A-Za-z])+(\d+)([A-Za-z_][A-Za-z0-9_]*)")

GROUPS = [
    ("Foundation, CoreFoundation, ICU", lambda m: m.startswith("Foundation") or m.startswith("_Foundation") or m in ("ICU", "CoreFoundation")),
    ("Swift runtime, stdlib", lambda m: m in ("Swift", "_Concurrency", "_StringProcessing", "_RegexParser", "Dispatch",
                                              "SwiftShims", "Synchronization", "Glibc")),
    ("Swift metadata not named by module", lambda m: m == "swift (other)"),
    ("NIO, atomics, collections", lambda m: m.startswith("NIO") or m.startswith("_NIO") or m in ("NIO (C)",
        "Atomics", "_AtomicsShims", "DequeModule", "OrderedCollections", "InternalCollectionsUtilities", "SystemPackage")),
    ("Hummingbird, HTTPTypes, WebSocket", lambda m: m.startswith("Hummingbird") or m in (
        "HTTPTypes", "WSCore", "AsyncAlgorithms", "ServiceLifecycle", "Tracing", "Instrumentation", "ServiceContextModule")),
    ("BoringSSL (C)", lambda m: m == "BoringSSL"),
    ("GRDB", lambda m: m == "GRDB"),
    ("ArgumentParser", lambda m: m.startswith("ArgumentParser")),
    ("TOMLKit, toml++", lambda m: m in ("TOMLKit", "toml++")),
    ("swift-log", lambda m: m == "Logging"),
    ("ribbit's own", lambda m: m.startswith("Ribbit") or m.startswith("ribbit") or m == "main"),
]


def module_of(name):
    match = MANGLED.match(name)
    if match:
        return match.group(2)[: int(match.group(1))]
    match = EXTENSION.match(name)
    if match and match.group(2)[int(match.group(1)) : int(match.group(1)) + 1] == "E":
        return match.group(2)[: int(match.group(1))]
    if name.startswith(("$ss", "$sS")):  # the standard library's own, and its types' members
        return "Swift"
    if name.startswith("$s") or name.startswith(("symbolic ", "associated conformance", "block_", "objectdestroy", "get_", "l_")):
        return "swift (other)"
    # ICU as Foundation links it (its functions renamed swift_u..., its data icudtNN_dat) and
    # CoreFoundation.
    if name.startswith(("icudt", "swift_u", "swift_U")) or re.match(r"^_Z(?:N|TV|TS|TI|NK)\d*icu_\d+", name):
        return "ICU"
    if name.startswith(("CF", "_CF", "__CF", "kCF", "_kCF", "__kCF")):
        return "CoreFoundation"
    if name.startswith(("dispatch_", "_dispatch", "__dispatch")):
        return "Dispatch"
    if name.startswith("CNIOBoringSSL"):
        return "BoringSSL"
    if name.startswith(("CNIO", "c_nio", "llparse", "llhttp")):
        return "NIO (C)"
    if name.startswith(("_ZN4toml", "_ZNK4toml", "_ZTVN4toml", "_ZTIN4toml", "_ZTSN4toml")):
        return "toml++"
    if name.startswith(("_ZN5swift", "_ZN7__swift", "_ZNK5swift", "_ZTVN5swift", "_ZTIN5swift", "_ZTSN5swift", "swift_", "_swift")):
        return "Swift"  # the runtime, in C++
    if name.startswith(("SSL_", "EVP_", "CRYPTO_", "BN_", "X509", "ERR_", "bssl", "_ZN4bssl", "ssl_", "RSA_", "EC_", "ASN1_",
                        "PEM_", "BIO_", "OPENSSL_", "SHA", "AES_", "HMAC", "CBB_", "CBS_", "x509", "ec_", "bn_", "aes_")):
        return "BoringSSL"
    return "C++ (other)" if name.startswith("_Z") else "C (other)"


def group_of(module):
    for label, matches in GROUPS:
        if matches(module):
            return label
    return "other (" + module + ")" if module not in ("C (other)", "C++ (other)") else module


def symbol_bytes(path):
    listing = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    groups = collections.Counter()
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 4:
            groups[group_of(module_of(parts[3]))] += int(parts[1], 16)
    return groups


def stripped_size(path, scratch):
    out = os.path.join(scratch, os.path.basename(path) + ".stripped")
    subprocess.run(["strip", "-o", out, path], check=True)
    return os.path.getsize(out)


# Each program prints its own peak resident memory (VmHWM, per address space: what a fork of
# this Python process had before the exec does not count) after its work.
PEAK = """
import Glibc
func peakResidentKiB() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return -1 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("VmHWM:") { return Int(text.split(separator: " ").dropFirst().first ?? "") ?? -1 }
    }
    return -1
}
"""
# The same work with either Foundation (what a ribbit executable does at start: JSON, a file
# check, the date), and a program that does only the printing.
WORK = """
let data = try! JSONEncoder().encode(["ribbit": 1])
print(String(decoding: data, as: UTF8.self), FileManager.default.fileExists(atPath: "/"), Date() > Date.distantPast)
"""


def baseline(scratch):
    """A small program three ways, linked statically as `make build` links ribbit."""
    programs = {
        "no Foundation": PEAK + 'print("ribbit")\n',
        "FoundationEssentials": "import FoundationEssentials\n" + PEAK + WORK,
        "Foundation": "import Foundation\n" + PEAK + WORK,
        # One call that only swift-corelibs-foundation has (NSString's formatting, with
        # CoreFoundation and ICU behind it), as ribbit's code has them.
        "Foundation, String(format:)": "import Foundation\n" + PEAK + WORK + 'print(String(format: "%.1f dB", 2.5))\n',
    }
    rows = []
    for label, source in programs.items():
        name = "hello_" + re.sub(r"\W", "", label)  # not a module's name: the file names the module
        swift = os.path.join(scratch, name + ".swift")
        binary = os.path.join(scratch, name)
        with open(swift, "w") as file:
            file.write(source + 'print("VmHWM", peakResidentKiB())\n')
        subprocess.run([SWIFTC, "-O", "-static-stdlib", swift, "-o", binary], check=True, capture_output=True)
        printed = subprocess.run([binary], capture_output=True, text=True, check=True).stdout
        peak = int(printed.split("VmHWM")[-1].split()[0])
        rows.append((label, stripped_size(binary, scratch), peak))
    return rows


def mib(size):
    return f"{size / 1048576:.1f}"


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
    with tempfile.TemporaryDirectory() as scratch:
        print("What each dependency costs (bench/binary-cost.py): symbol bytes by module, MiB")
        columns = {}
        sizes = {}
        for binary in BINARIES:
            path = os.path.join(build, binary)
            if not os.path.exists(path):
                sys.exit(f"error: {path} is not built; run make build")
            columns[binary] = symbol_bytes(path)
            sizes[binary] = stripped_size(path, scratch)
        labels = sorted({label for column in columns.values() for label in column},
                        key=lambda label: -sum(column[label] for column in columns.values()))
        print(f"| {'':36s} | " + " | ".join(f"{b:>12s}" for b in BINARIES) + " |")
        print("|" + "-" * 38 + "|" + "|".join("-" * 14 for _ in BINARIES) + "|")
        for label in labels:
            if max(column[label] for column in columns.values()) < 0.05 * 1048576:
                continue
            print(f"| {label:36s} | " + " | ".join(f"{mib(columns[b][label]):>12s}" for b in BINARIES) + " |")
        print(f"| {'the stripped file':36s} | " + " | ".join(f"{mib(sizes[b]):>12s}" for b in BINARIES) + " |")
        print()
        print("Baseline, the same run: a small program linked statically (swiftc -O -static-stdlib)")
        print(f"| {'':28s} | {'stripped, MiB':>14s} | {'resident, MiB':>14s} |")
        print("|" + "-" * 30 + "|" + "-" * 16 + "|" + "-" * 16 + "|")
        for label, size, rss in baseline(scratch):
            print(f"| {label:28s} | {mib(size):>14s} | {rss / 1024:14.1f} |")


if __name__ == "__main__":
    main()
