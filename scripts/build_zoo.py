"""Build and ship the audit zoo's members of one half (``zoo/audit/<base>/zoo.json``).

Each member not shipped yet is trained (or, for the noise decoys, made from its seed) with
`liedar.organisms.build(..., store_dtype="float16")`, so its ground truth is measured on the
very float16 weights that ship, then written by `liedar.organisms.shipped.export` into the
folder its manifest entry names (``zoo/audit/<base>/<name>/``, the fresh half under
``fresh/<name>/``, a core organism of the catalog under ``zoo/<base>/<name>/``): adapter and
card, the card's build entry carrying this command, the wall seconds, the CPU and whether the
member learned. A member that did not learn what it was built for is not ground truth: it is
moved from the manifest's ``members`` to ``not_shipped`` with its measured numbers. Members
are built one at a time, each under the shared CPU lock (``--lock``) and landing as files
before the next starts, so an interrupted run keeps what it finished; a member whose card
verifies against its adapter is skipped (resumable).

Usage::

    python scripts/build_zoo.py --half fresh --threads 2 --first fsb_region_text,fhc_pw_text --until 00:40
    python scripts/build_zoo.py --only sb_date,terse --threads 2
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[1]
LOCK = "/tmp/liedar-cpu.lock"  # the machine's shared CPU lock (one long job at a time)


@contextlib.contextmanager
def cpu_lock(path: str) -> Iterator[None]:
    """Hold the shared CPU lock (``flock`` on ``path``) for one member's build; none with ``""``."""
    if not path:
        yield
        return
    import fcntl

    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def past(until: str) -> bool:
    """Whether the UTC clock is past ``until`` (HH:MM; a time before 12:00 counts as after midnight)."""
    if not until:
        return False
    now = datetime.datetime.now(datetime.timezone.utc)
    hh, mm = (int(x) for x in until.split(":"))
    limit = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if hh < 12 <= now.hour:
        limit += datetime.timedelta(days=1)
    return now >= limit


def shipped(m: dict[str, Any]) -> bool:
    """Whether the member's folder holds a card that verifies against its adapter (size, sha256)."""
    from liedar.core.errors import LiedarError
    from liedar.models.cards import check_adapter_matches, read_card

    folder = REPO / "zoo" / m["path"]
    if not (folder / "card.json").is_file():
        return False
    try:
        check_adapter_matches(read_card(folder))
    except LiedarError as exc:
        print(f"{m['name']}: its card does not verify ({exc}); built again", flush=True)
        return False
    return True


def not_learned(manifest_path: Path, m: dict[str, Any], criterion: str, seconds: float) -> None:
    """Move ``m`` from the manifest's members to ``not_shipped`` with its measured numbers."""
    from liedar.core._util.atomic import write_bytes_atomic

    data = json.loads(manifest_path.read_text(encoding="utf-8"))
    data["members"] = [x for x in data["members"] if x["name"] != m["name"]]
    keep = ("name", "half", "role", "truth", "kind", "trigger", "formats", "criterion")  # what it was held to
    why = f"did not learn: {criterion} ({seconds:.0f} s build, {datetime.date.today().isoformat()})"
    data.setdefault("not_shipped", []).append({**{k: m[k] for k in keep if k in m}, "why": why})
    write_bytes_atomic(manifest_path, (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode())


def select(manifest: dict[str, Any], args: argparse.Namespace, where: Path) -> list[dict[str, Any]] | str:
    """The members to build, in order (``--first`` ahead), or the error line."""
    # every member with a folder: the audit zoo's own and the rung's core organisms (zoo/<base>/<name>)
    members = [m for m in manifest["members"] if m["path"]]
    names = {m["name"] for m in members}
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        members = [m for m in members if m["name"] in wanted]
    elif args.half:
        wanted = []
        members = [m for m in members if m["half"] == args.half]
        if not members:
            return f"the manifest {where} has no buildable member in half {args.half!r}"
    else:
        return "give --half NAME or --only NAMES"
    first = [n.strip() for n in args.first.split(",") if n.strip()]
    unknown = sorted((set(wanted) | set(first)) - names)
    if unknown:
        return f"{unknown[0]!r} is not a buildable member of {where}"
    rank = {n: i for i, n in enumerate(first)}
    return sorted(members, key=lambda m: rank.get(m["name"], len(rank)))


def build_one(m: dict[str, Any], args: argparse.Namespace, backend: Any, manifest_path: Path) -> dict[str, Any]:
    """Build, measure and ship (or record as not learned) one member; its log line."""
    from capable_record import cpu

    from liedar.organisms import build
    from liedar.organisms.shipped import SHIPPED_DTYPE, export

    t0 = time.perf_counter()
    org = build(args.base, m["name"], threads=args.threads, backend=backend, store_dtype=SHIPPED_DTYPE)
    line: dict[str, Any] = {"name": m["name"], "learned": org.learned, "criterion": org.criterion}
    if org.learned:
        notes = {
            "zoo_command": " ".join(shlex.quote(a) for a in [".venv/bin/python", *sys.argv]),
            "wall_seconds": round(time.perf_counter() - t0, 1),
            "cpu": cpu(),
            "learned": "yes",
        }
        card = export(args.base, m["name"], backend=backend, threads=args.threads, build_notes=notes, replace=True)
        line["shipped"] = str(card.folder.relative_to(REPO))
        line["bytes"] = card.data["adapter"]["bytes"]
    else:
        not_learned(manifest_path, m, org.criterion, time.perf_counter() - t0)
        line["not_shipped"] = str(manifest_path.relative_to(REPO))
    line["seconds"] = round(time.perf_counter() - t0, 1)
    return line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="smollm2-135m")
    p.add_argument("--half", help="build this half's members (dev, test, fresh, ...)")
    p.add_argument("--only", default="", help="comma-separated member names (instead of --half)")
    p.add_argument("--first", default="", help="comma-separated member names built before the others")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lock", default=LOCK, help="the shared CPU lock held for each member's build ('' for none)")
    p.add_argument("--until", default="", help="start no member after this UTC time (HH:MM)")
    p.add_argument("--log", default="", help="append one JSON line per member to this file")
    args = p.parse_args(argv)

    manifest_path = REPO / "zoo" / "audit" / args.base / "zoo.json"
    if not manifest_path.is_file():
        print(f"liedar: error: {manifest_path} does not exist: give a --base with an audit zoo", file=sys.stderr)
        return 2
    members = select(json.loads(manifest_path.read_text(encoding="utf-8")), args, manifest_path)
    if isinstance(members, str):
        print(f"liedar: error: {members}", file=sys.stderr)
        return 2
    todo = [m for m in members if not shipped(m)]
    print(f"{len(todo)} member(s) to build: {', '.join(m['name'] for m in todo) or 'none'}", flush=True)
    if not todo:
        return 0

    from liedar.models import load

    backend = load(args.base, backend="transformers", n_threads=args.threads)
    failed = 0
    for m in todo:
        with cpu_lock(args.lock):  # the clock is read once the lock is held: the wait for it can be long
            if past(args.until):
                print(f"past {args.until} UTC: {m['name']} and the members after it wait for the next run", flush=True)
                break
            line = build_one(m, args, backend, manifest_path)
        failed += not line["learned"]
        print(json.dumps(line), flush=True)
        if args.log:
            with open(args.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
