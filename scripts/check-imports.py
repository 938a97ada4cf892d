#!/usr/bin/env python3
"""Every module a target imports is declared in Package.swift, and every target it declares is
imported (a dependency that is only reached through another one hides the real graph)."""
import json
import os
import re
import subprocess
import sys

# Modules of the toolchain itself, never declared.
TOOLCHAIN = {"Foundation", "FoundationEssentials", "FoundationNetworking", "FoundationXML", "Glibc", "Dispatch",
             "Synchronization", "XCTest", "Testing", "_Concurrency"}
# Modules a package does not offer as a product, reached through one that it does.
THROUGH_PRODUCT = {
    # BoringSSL's certificate calls for the web app's self-signed certificate: swift-nio-ssl
    # ships them only inside NIOSSL, so the version pinned for NIOSSL is the version used.
    "ribbit-web": {"CNIOBoringSSL"},
}
IMPORT = re.compile(r"^(?:@\w+(?:\([^)]*\))? )*(?:public |internal |package |private |fileprivate )?import (?:(?:struct|class|enum|func|protocol|typealias) )?(\w+)")

package = json.loads(subprocess.run(["swift", "package", "dump-package"], capture_output=True, text=True, check=True).stdout)
targets = {t["name"] for t in package["targets"]}
problems = []
for target in package["targets"]:
    declared = set()
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "product", "target"):
            if kind in dependency:
                declared.add(dependency[kind][0])
    path = target.get("path") or ("Tests/" if target["type"] == "test" else "Sources/") + target["name"]
    imported = set()
    for root, _, files in os.walk(path):
        for name in files:
            if name.endswith(".swift"):
                with open(os.path.join(root, name)) as source:
                    imported |= {m.group(1) for m in map(IMPORT.match, source) if m}
    undeclared = sorted(imported - declared - TOOLCHAIN - {target["name"]} - THROUGH_PRODUCT.get(target["name"], set()))
    unused = sorted(d for d in declared - imported if d in targets and target["type"] != "system")
    if undeclared:
        problems.append(f"{target['name']} imports {', '.join(undeclared)} without declaring it in Package.swift")
    if unused:
        problems.append(f"{target['name']} declares {', '.join(unused)} in Package.swift but never imports it")
for line in problems:
    print(f"error: {line}", file=sys.stderr)
sys.exit(1 if problems else 0)
