"""``liedar behavioral from-inspect LOG...``: inspect_ai eval logs -> liedar's detectors and report.

Wiring (one line in the ``behavioral`` subcommand group): ``from_inspect.register(subparsers)``.
See liedar.integrations.inspect_logs for what is built from the logs and how.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "from-inspect",
        help="run liedar's detectors on inspect_ai eval logs (option order, paraphrases, sycophancy)",
        description=(
            "Read inspect_ai eval logs of a multiple-choice task (several runs with different shuffle seeds), "
            "build option-order / paraphrase / sycophancy records, run the detectors, write the report."
        ),
    )
    p.add_argument("logs", nargs="+", type=Path, help="inspect .eval/.json log files")
    p.add_argument("--output", type=Path, default=Path("liedar-inspect"), help="folder for results (liedar-inspect)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from liedar.core._util.atomic import write_bytes_atomic, write_json_atomic
    from liedar.core.errors import InputError
    from liedar.integrations.inspect_logs import build_records, markdown, read_logs, run_detectors

    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise InputError(f"--output {out} is a file; give a folder")
    resolved = {Path(p).resolve() for p in args.logs}
    if out.resolve() in resolved:
        raise InputError(f"--output {out} is one of the logs; give another folder")
    _refuse_repeats([Path(p) for p in args.logs])
    result = run_detectors(build_records(read_logs(args.logs)), seed=args.seed)
    write_json_atomic(out / "from_inspect.json", result)
    page = markdown(result)
    write_bytes_atomic(out / "report.md", page.encode("utf-8"))
    print(page, end="")
    print(f"wrote {out / 'from_inspect.json'} and {out / 'report.md'}")
    return 0


def _refuse_repeats(logs: "list[Path]") -> None:
    """One log given twice (by two paths or as a byte-identical copy) is refused, not merged:
    its samples would count twice and narrow every interval the detectors report."""
    import hashlib

    from liedar.core.errors import InputError

    seen: dict[str, Path] = {}
    for log in logs:
        try:
            key = hashlib.sha256(log.read_bytes()).hexdigest() if log.is_file() else str(log.resolve())
        except OSError:
            continue  # unreadable: read_logs names it
        first = seen.setdefault(key, log)
        if first is not log:
            raise InputError(f"{log} is the same log as {first} (identical content); give each inspect log once")


def main(argv: "list[str] | None" = None) -> int:
    """Standalone entry (until the CLI wires the subcommand): python -m liedar.commands.from_inspect LOG..."""
    import sys

    from liedar.core.errors import LiedarError

    parser = argparse.ArgumentParser(prog="liedar behavioral")
    register(parser.add_subparsers(dest="cmd", required=True))
    args = parser.parse_args(["from-inspect", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.func(args)
    except LiedarError as exc:
        print(f"liedar: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
