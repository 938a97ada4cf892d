#!/usr/bin/env python3
"""Validates the FHIR R4 (4.0.1) Bundle on standard input with fhir.resources 6.4.0's models
(generated from the specification: types, cardinality, required elements, no unknown elements).
Prints "valid" and exits 0, or prints each problem and exits 1. `make test-tools` installs the
models under .build/test-tools/fhir-r4; run with PYTHONPATH pointing there."""
import json
import sys

try:
    import fhir.resources
    from fhir.resources.bundle import Bundle
    from pydantic import ValidationError
except ImportError as error:
    print(f"error: no FHIR R4 models ({error}): run `make test-tools`", file=sys.stderr)
    sys.exit(2)

if fhir.resources.__fhir_version__ != "4.0.1":
    print(f"error: fhir.resources {fhir.resources.__version__} is FHIR {fhir.resources.__fhir_version__}, not R4 4.0.1", file=sys.stderr)
    sys.exit(2)

try:
    bundle = Bundle.parse_obj(json.load(sys.stdin))
except ValidationError as error:
    for problem in error.errors():
        print(" -> ".join(str(part) for part in problem["loc"]) + ": " + problem["msg"])
    sys.exit(1)
print(f"valid: FHIR {fhir.resources.__fhir_version__} Bundle, {len(bundle.entry or [])} entries")
