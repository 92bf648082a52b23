"""A page's writes stay inside the output folder: a ``figures`` link inside it that leads out is
refused in one line (exit 2, the folder it leads to unchanged), while an output folder that is
itself a link is followed. Checked on the audit page and the report, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hardening_support import snapshot

from liedar.cli import main

RECORD = Path(__file__).resolve().parents[2] / "docs" / "records" / "audit-zoo-smollm2-135m-test.json"


@pytest.fixture
def audit_json(tmp_path) -> Path:
    if not RECORD.is_file():
        pytest.skip(f"{RECORD} is not in this checkout")
    path = tmp_path / "audit.json"
    path.write_bytes(RECORD.read_bytes())
    return path


@pytest.mark.parametrize("with_runs", [False, True], ids=["audit-page", "report"])
def test_a_figures_link_leading_out_is_refused(with_runs, audit_json, workdir, tmp_path, capsys):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "keep.png").write_bytes(b"kept")
    (workdir / "page").mkdir()
    (workdir / "page" / "figures").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    argv = ["report", "--audit", str(audit_json), "--output", str(workdir / "page")]
    if with_runs:
        argv += ["--from", "results"]
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("liedar: error: "), lines
    assert "figures is a link to" in lines[0] and "outside the output folder" in lines[0]
    assert snapshot(outside) == before and not (workdir / "page" / "index.html").exists()


def test_an_output_folder_that_is_a_link_is_followed(audit_json, tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    assert main(["report", "--audit", str(audit_json), "--output", str(tmp_path / "linked")]) == 0
    assert (real / "index.html").is_file() and (real / "figures" / "audit-confusion.png").is_file()
    assert json.loads(audit_json.read_text(encoding="utf-8")) == json.loads(RECORD.read_text(encoding="utf-8"))
