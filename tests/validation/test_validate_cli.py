"""`liedar validate` refuses bad input with one line before any model loads."""

from __future__ import annotations

import argparse

import pytest

from liedar.commands import validate as cmd
from liedar.core.errors import InputError


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    cmd.register(p.add_subparsers())
    return p.parse_args(["validate", *argv])


def test_unknown_organism_is_one_line(tmp_path):
    args = _args("--organisms", "no_such_organism", "--no-build", "--output", str(tmp_path / "out"))
    with pytest.raises(InputError, match="unknown organism 'no_such_organism'"):
        cmd.run(args)
    assert not (tmp_path / "out" / "validation-matrix.json").exists()


def test_bad_threads_and_output_are_refused_while_parsing(tmp_path):
    with pytest.raises(SystemExit):
        _args("--threads", "0", "--output", str(tmp_path / "o"))
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(SystemExit):
        _args("--output", str(f))


def test_build_and_no_build_are_exclusive():
    with pytest.raises(SystemExit):
        _args("--build", "sandbagger", "--no-build")
    assert _args("--build", "sandbagger,liar").build == ("sandbagger", "liar")


@pytest.mark.parametrize("command", ["demo", "validate"])
def test_workers_reach_the_pipeline_and_default_to_one_per_core_up_to_two(command, monkeypatch):
    from liedar import cli
    from liedar.core._util.workers import default_workers

    seen: dict = {}

    class Stop(Exception):
        pass

    def capture(config):
        seen["config"] = config
        raise Stop

    import liedar.pipeline.demo as demo
    import liedar.pipeline.validate as validate

    monkeypatch.setattr(demo, "run_demo", capture)
    monkeypatch.setattr(validate, "validate", capture)
    for argv, want in (
        ([command], default_workers()),
        ([command, "--workers", "1"], 1),
        ([command, "--workers", "3"], 3),
    ):
        with pytest.raises(Stop):
            cli.main(argv)
        assert seen["config"].workers == want
    assert cli.main([command, "--workers", "0"]) == 2  # argparse's usage error, before anything runs
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert default_workers() == 1
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert default_workers() == 2
