"""The behavioural CLI with ``--model openai:MODEL`` against the fake server: a study runs and
its results record the served backend; bad input is one line and exit 2; nothing cached is lost."""

from __future__ import annotations

import json

import pytest

from liedar.cli import main

pytestmark = pytest.mark.timeout(120)


def served_args(fake, tmp_path) -> list[str]:
    return [
        "--model",
        "openai:fake-model",
        "--base-url",
        fake.base_url,
        "--served-cache",
        str(tmp_path / "c"),
        "--quiet",
    ]


MENUS = ["--mode", "deterministic", "--scenarios", "support_triage", "--tiers", "clear", "--framings", "minimal"]


def test_menus_through_the_cli_then_a_cached_rerun(fake_server, tmp_path, capsys):
    out = tmp_path / "menus.json"
    assert main(["behavioral", "menus", *served_args(fake_server, tmp_path), *MENUS, "--output", str(out)]) == 0
    first = json.loads(out.read_text())
    assert first["backend"] == "served" and fake_server.requests == 30  # 2 vignettes x 15 menus
    fake_server.mode = "500"  # the server breaks; the re-run is answered from the cache
    assert main(["behavioral", "menus", *served_args(fake_server, tmp_path), *MENUS, "--output", str(out)]) == 0
    assert fake_server.requests == 30
    assert json.loads(out.read_text())["records"] == first["records"]


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--base-url", "not-a-url"], "not an http(s) URL"),
        (["--api-key-env", "LIEDAR_SURELY_UNSET_KEY"], "is not set"),
        (["--concurrency", "0"], "is below 1"),
    ],
)
def test_bad_served_input_is_one_line(fake_server, tmp_path, capsys, monkeypatch, extra, needle):
    monkeypatch.delenv("LIEDAR_SURELY_UNSET_KEY", raising=False)
    code = main(["behavioral", "menus", *served_args(fake_server, tmp_path), *MENUS, *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2 and needle in err and "\n" not in err and "Traceback" not in err
    assert fake_server.requests == 0


def test_weight_noise_on_a_served_model_is_refused(fake_server, tmp_path, capsys):
    code = main(["behavioral", "noise", *served_args(fake_server, tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and ("weight" in err or "weights" in err)
    assert fake_server.requests == 0


def test_no_server_is_one_line(tmp_path, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = ["behavioral", "menus", "--model", "openai:m", "--base-url", f"http://127.0.0.1:{port}/v1"]
    code = main([*argv, "--served-cache", str(tmp_path), "--quiet", *MENUS])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "no server answers at" in err and "\n" not in err
