"""Build and ship the audit zoo's members of one half (``zoo/audit/<base>/zoo.json``).

Each member not shipped yet is trained (or, for the noise decoys, made from its seed) with
`liedar.organisms.build(..., store_dtype="float16")`, so its ground truth is measured on the
very float16 weights that ship, then written by `liedar.organisms.shipped.export` into
``zoo/audit/<base>/<name>/`` (adapter + card). A member that did not learn what it was built
for is reported and not shipped: it is not ground truth. Members are built one at a time,
each landing as files before the next starts, so an interrupted run keeps what it finished.

Usage::

    python scripts/build_zoo.py --half dev --threads 1
    python scripts/build_zoo.py --only sb_date,terse --threads 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="smollm2-135m")
    p.add_argument("--half", choices=("dev", "test"), help="build this half's members")
    p.add_argument("--only", default="", help="comma-separated member names (instead of --half)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--log", default="", help="append one JSON line per member to this file")
    args = p.parse_args(argv)

    manifest_path = REPO / "zoo" / "audit" / args.base / "zoo.json"
    manifest = json.loads(manifest_path.read_text())
    members = [m for m in manifest["members"] if (m["path"] or "").startswith("audit/")]
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(wanted) - {m["name"] for m in members})
        if unknown:
            print(f"error: {unknown[0]!r} is not a buildable member of {manifest_path}", file=sys.stderr)
            return 2
        members = [m for m in members if m["name"] in wanted]
    elif args.half:
        members = [m for m in members if m["half"] == args.half]
    else:
        print("error: give --half dev|test or --only NAMES", file=sys.stderr)
        return 2
    todo = [m for m in members if not (REPO / "zoo" / m["path"] / "card.json").is_file()]
    print(f"{len(todo)} member(s) to build: {', '.join(m['name'] for m in todo) or 'none'}", flush=True)
    if not todo:
        return 0

    from liedar.models import load
    from liedar.organisms import build
    from liedar.organisms.shipped import SHIPPED_DTYPE, export

    backend = load(args.base, backend="transformers", n_threads=args.threads)
    failed = 0
    for m in todo:
        t0 = time.perf_counter()
        org = build(args.base, m["name"], threads=args.threads, backend=backend, store_dtype=SHIPPED_DTYPE)
        line = {"name": m["name"], "learned": org.learned, "criterion": org.criterion}
        if org.learned:
            card = export(args.base, m["name"], backend=backend, threads=args.threads)
            line["shipped"] = str(card.folder.relative_to(REPO))
            line["bytes"] = card.data["adapter"]["bytes"]
        else:
            failed += 1
        line["seconds"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(line), flush=True)
        if args.log:
            with open(args.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
