"""The built wheel holds exactly one top-level import package, `liedar`, and every module
of the repository's package folders (core/, models/, probes/, behavioral/, liedar/) inside it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest
from package_dirs import PACKAGE_DIRS, ROOT

FOLDERS = {package.replace(".", "/"): folder for package, folder in PACKAGE_DIRS.items()}
# the sub-packages that package-dir maps from folders of their own (core, models, probes, behavioral)
NESTED = {package.split(".", 1)[1] for package in PACKAGE_DIRS if package.startswith("liedar.")}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    # build from a copy: setuptools writes build/ and *.egg-info next to the sources, and a
    # stale egg-info in the repository would shadow the editable install's entry points
    src = tmp_path_factory.mktemp("src") / "liedar"
    skip = shutil.ignore_patterns(".git", ".venv", ".wheels", "build", "*.egg-info", "__pycache__", ".hypothesis",
                                  "liedar-*", "tests", "docs", "scripts")  # fmt: skip
    shutil.copytree(ROOT, src, ignore=skip)
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
        check=True,
        capture_output=True,
        text=True,
        cwd=src,
    )
    (path,) = out.glob("liedar-*.whl")
    return zipfile.ZipFile(path)


def test_one_top_level_import_name(wheel: zipfile.ZipFile) -> None:
    tops = {n.split("/")[0] for n in wheel.namelist() if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"liedar"}, f"the wheel installs {sorted(tops)}"
    top_level = next(n for n in wheel.namelist() if n.endswith(".dist-info/top_level.txt"))
    assert wheel.read(top_level).decode().split() == ["liedar"]


def test_every_module_and_data_file_is_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    missing = []
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*"):
            if "__pycache__" in path.parts or path.is_dir():
                continue
            if path.suffix in (".py", ".c", ".json") or path.name == "py.typed":
                rel = path.relative_to(folder).as_posix()
                if prefix == "liedar" and rel.split("/")[0] in NESTED:
                    continue
                if f"{prefix}/{rel}" not in names:
                    missing.append(f"{prefix}/{rel}")
    assert not missing, f"not in the wheel (add the package to pyproject's packages list): {missing}"
    assert "liedar/models/llamacpp_capture.c" in names and "liedar/report/report.schema.json" in names


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler: the capture callback is optional")
def test_the_capture_callback_is_compiled_into_the_wheel(wheel: zipfile.ZipFile) -> None:
    """Native code ships inside the package like any compiled wheel, never built at run time."""
    built = [n for n in wheel.namelist() if n.startswith("liedar/models/_llamacpp_capture") and n.endswith(".so")]
    assert len(built) == 1, wheel.namelist()


def test_core_requirements_are_light(wheel: zipfile.ZipFile) -> None:
    """`pip install liedar` (no extras) must not pull torch, transformers or llama.cpp."""
    meta = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    core = [
        line.split(":", 1)[1].strip()
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    heavy = [
        r
        for r in core
        if r.split(">")[0].split("=")[0].split("[")[0].strip().lower()
        in ("torch", "transformers", "llama-cpp-python", "peft", "ray", "inspect-ai", "matplotlib")
    ]
    assert not heavy, f"heavy core requirements: {heavy}"
