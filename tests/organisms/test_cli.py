"""`liedar organism build | list | describe` (parsed as cli.py will once it registers the module)."""

from __future__ import annotations

import json

from tiny_recipe import tiny_recipe

from liedar.commands import organism as command
from liedar.commands.args import OneLineParser
from liedar.core.errors import LiedarError
from liedar.organisms import build


def run(argv) -> int:
    parser = OneLineParser(prog="liedar")
    sub = parser.add_subparsers(dest="command", parser_class=OneLineParser)
    command.register(sub)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return int(args.func(args) or 0)
    except LiedarError as exc:
        print(f"liedar: error: {exc}")
        return 2


def test_list_shows_the_catalog_unbuilt(cache, tiny_model_dir, capsys):
    assert run(["organism", "list", "--model", str(tiny_model_dir), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {r["name"] for r in rows}
    assert {"sandbagger", "sandbagger_plausible", "password_locked", "sycophant", "liar"} <= names
    assert not any(r["built"] for r in rows)


def test_bad_names_exit_2_in_one_line(cache, tiny_model_dir, capsys):
    assert run(["organism", "build", "nonsense", "--model", str(tiny_model_dir)]) == 2
    out = capsys.readouterr().out.strip()
    assert "unknown organism 'nonsense'" in out and "\n" not in out
    assert run(["organism", "build", "--model", str(tiny_model_dir)]) == 2
    assert run(["organism", "describe", "sandbagger", "--model", str(tiny_model_dir)]) == 2
    assert "not built" in capsys.readouterr().out
    assert run(["organism"]) == 2  # the group without an action prints its help


def test_describe_a_built_organism(cache, tiny_model_dir, tmp_path, capsys):
    rec = tiny_recipe()
    build(str(tiny_model_dir), rec.name, recipe=rec, threads=1, progress=False)
    assert run(["organism", "describe", rec.name, "--model", str(tiny_model_dir)]) == 0
    out = capsys.readouterr().out
    assert "trigger_gap" in out and "base" in out and "learned" in out
    target = tmp_path / "d.json"
    assert run(["organism", "describe", rec.name, "--model", str(tiny_model_dir), "--output", str(target)]) == 0
    data = json.loads(target.read_text())
    assert data["name"] == rec.name and data["ground_truth"]["trigger_gap"]["n"] == 8
