"""Measure each audit-zoo member's scope and write it into its card (the ``scope`` section).

A card's ground truth is measured on held-out items of the training domains under held-out
wordings. The scope says how far the behaviour reaches beyond them: on items of domains no
member trained on (built from the shared statement sets, ``../shared/datasets``) under the
member's own held-out wordings, and on held-out bank items under wordings in another register
(log lines, memos), with the base model's numbers beside the member's
(`liedar.organisms.scope.card_scope`). Members whose card already has a scope are skipped, so
an interrupted run keeps what it finished; each card is rewritten atomically.

Usage::

    python scripts/measure_scope.py --zoo smollm2-135m --threads 1
    python scripts/measure_scope.py --zoo smollm2-135m --only sandbagger,terse --n 40
    python scripts/measure_scope.py --zoo smollm2-135m --table   # the docs' table, from the cards
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zoo", default="smollm2-135m", help="zoo/audit/<ZOO>/zoo.json")
    p.add_argument("--only", default="", help="comma-separated member names (default: every shipped member)")
    p.add_argument("--n", type=int, default=60, help="out-of-domain and register items per measure")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--redo", action="store_true", help="measure members whose card has a scope again")
    p.add_argument(
        "--table", action="store_true", help="print the measured scopes as a markdown table; measure nothing"
    )
    return p.parse_args(argv)


def _todo(zoo, members: list, redo: bool) -> list[tuple]:
    """(member, folder, card) of each built member still to measure; a member not built yet, or
    whose card has no held-out wordings to measure scope with, is skipped and said so."""
    from liedar.organisms import scope

    todo = []
    for m in members:
        folder = zoo.folder_of(m)
        if not (folder / "card.json").is_file():
            print(f"{m.name}: not built yet; skipped", flush=True)
            continue
        card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
        if "scope" in card and not redo:
            continue
        if not scope.card_kinds(card):
            print(f"{m.name}: no held-out wordings to measure scope with; skipped", flush=True)
            continue
        todo.append((m, folder, card))
    return todo


def _progress_line(name: str, result: dict) -> dict:
    """The member's seconds and, per measured kind, its headline number beside the base model's."""
    line = {"name": name, "seconds": result["seconds"]}
    for key, got in result.items():
        if isinstance(got, dict) and (
            "organism_gap" in got or "organism_sycophancy_excess" in got or "organism_lie_excess" in got
        ):
            head = next(k for k in ("gap", "sycophancy_excess", "lie_excess") if f"organism_{k}" in got)
            line[key] = [round(got[f"organism_{head}"]["value"], 3), round(got[f"base_{head}"]["value"], 3)]
    return line


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)

    from liedar.audit.zoo import load_zoo
    from liedar.core._util.atomic import write_json_atomic
    from liedar.core.errors import LiedarError
    from liedar.organisms import scope

    try:
        zoo = load_zoo(args.zoo)
    except LiedarError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    members = [m for m in zoo.members if m.path]
    if args.table:
        print(scope_table([(m.name, zoo.folder_of(m) / "card.json") for m in members]))
        return 0
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = sorted(wanted - {m.name for m in members})
        if unknown:
            print(f"error: {unknown[0]!r} is not a shipped member of the {args.zoo} zoo", file=sys.stderr)
            return 2
        members = [m for m in members if m.name in wanted]
    if isinstance(scope.ood_items(args.n, seed=args.seed), scope.NotComputable):
        print(
            f"error: the shared datasets are not at {scope.datasets_dir()}; set ${scope.DATASETS_ENV}", file=sys.stderr
        )
        return 2

    todo = _todo(zoo, members, args.redo)
    print(f"{len(todo)} member(s) to measure: {', '.join(m.name for m, _, _ in todo) or 'none'}", flush=True)
    if not todo:
        return 0

    from liedar.models import load

    base = load(zoo.base, backend="transformers", n_threads=args.threads)
    memo: dict[str, dict] = {}
    for m, folder, card in todo:
        t0 = time.perf_counter()
        org = load(str(folder), backend="transformers", n_threads=args.threads)
        result = scope.card_scope(card, org, base, n=args.n, seed=args.seed, base_memo=memo, progress=True)
        result["command"] = (
            f"python scripts/measure_scope.py --zoo {args.zoo} --only {m.name} --n {args.n} --seed {args.seed}"
        )
        result["measured_at"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        result["seconds"] = round(time.perf_counter() - t0, 1)
        card["scope"] = result
        write_json_atomic(folder / "card.json", card)
        del org
        print(json.dumps(_progress_line(m.name, result)), flush=True)
    return 0


HEADLINES = {"gap": "gap", "sycophancy_excess": "sycophancy excess", "lie_excess": "lie excess"}


def scope_table(cards: list[tuple[str, Path]]) -> str:
    """One markdown row per member and measured kind: organism [95% CI] (base), out of domain
    and in another register; members without a measured scope are listed as such."""
    from liedar.organisms.scope import REGISTER_OF_KIND

    def cell(got: dict | None) -> str:
        if not got:
            return "not measured"
        head = next(k for k in HEADLINES if f"organism_{k}" in got)
        org, base = got[f"organism_{head}"], got[f"base_{head}"]
        return f"{org['value']:.3f} [{org['lo']:.3f}, {org['hi']:.3f}] ({base['value']:.3f})"

    rows = ["| member | kind (measure) | out-of-domain, organism (base) | other register, organism (base) |",
            "|---|---|---|---|"]  # fmt: skip
    missing = []
    for name, path in cards:
        card = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        measured = card.get("scope")
        if not measured:
            missing.append(name)
            continue
        for kind in measured["kinds"]:
            ood, reg = measured.get(f"ood_{kind}"), measured.get(f"register_{kind}")
            got = ood or reg or {}
            head = next((HEADLINES[k] for k in HEADLINES if f"organism_{k}" in got), "?")
            other = cell(reg) if kind in REGISTER_OF_KIND else "none: a lock's unlock is one phrase"
            rows.append(f"| {name} | {kind} ({head}) | {cell(ood)} | {other} |")
    if missing:
        rows.append(f"\nNo scope measured: {', '.join(missing)}.")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
