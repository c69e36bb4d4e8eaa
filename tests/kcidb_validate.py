#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Validates KCIDB v4 JSON documents against tests/data/kcidb-v4.schema.json.

usage: kcidb_validate.py SCHEMA FILE [FILTER]

FILE is a KCIDB document, or with FILTER "kcidb" a ktest report.json whose
"kcidb" member is one. Beyond the schema it checks what KCIDB's database
needs: ids unique per kind, each build's checkout and each test's build
present, every id prefixed with its object's origin. Exit 0 when valid,
1 with each error on stderr.
"""
import json
import re
import sys

import jsonschema

# jsonschema checks "uri" and "date-time" only with optional modules; these
# are the RFC 3986 scheme rule and RFC 3339's date-time, strictly enough.
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")
DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?"
                       r"(Z|[+-]\d\d:\d\d)$", re.I)


def checker():
    fc = jsonschema.FormatChecker()
    fc.checks("uri")(lambda v: not isinstance(v, str) or bool(URI.match(v)))
    fc.checks("date-time")(
        lambda v: not isinstance(v, str) or bool(DATE_TIME.match(v)))
    return fc


def links(doc):
    errs = []
    ids = {}
    for kind in ("checkouts", "builds", "tests"):
        ids[kind] = set()
        for o in doc.get(kind, []):
            if o["id"] in ids[kind]:
                errs.append(f"{kind}: id {o['id']} twice")
            ids[kind].add(o["id"])
            if not o["id"].startswith(o["origin"] + ":"):
                errs.append(f"{kind}: id {o['id']} is not {o['origin']}:...")
    for b in doc.get("builds", []):
        if b["checkout_id"] not in ids["checkouts"]:
            errs.append(f"build {b['id']}: no checkout {b['checkout_id']}")
    for t in doc.get("tests", []):
        if t["build_id"] not in ids["builds"]:
            errs.append(f"test {t['id']}: no build {t['build_id']}")
    return errs


def main():
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    with open(sys.argv[2]) as f:
        doc = json.load(f)
    if len(sys.argv) > 3:
        doc = doc[sys.argv[3]]
    jsonschema.Draft7Validator.check_schema(schema)
    v = jsonschema.Draft7Validator(schema, format_checker=checker())
    errs = [f"{'/'.join(map(str, e.absolute_path)) or '.'}: {e.message}"
            for e in v.iter_errors(doc)]
    if not errs:
        errs = links(doc)
    for e in errs:
        print(f"{sys.argv[2]}: {e}", file=sys.stderr)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
