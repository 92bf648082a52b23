"""Faults for every cache and result writer: a SIGKILL mid-write, a full disk, a failed
rename, and every cached artefact damaged on disk.

The contract, for each writer: the target is either the old file or the complete new one;
an error in this process leaves no temporary file; a temporary left by a killed process is
removed by the next write of the same target; the error is one `LiedarError` line. For each
cache: a damaged entry is never served — it is rebuilt with a one-line note.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from liedar.core.errors import IncompatibleError, InputError, LiedarError

# ---- every result / cache writer, as (name, code writing `target` with version `v`) -----------
# Each snippet runs with `target` (a Path) and `v` (an int) defined; the new content must be
# recognisably version v so the test can tell old from new.
WRITERS = {
    "bytes": "from liedar.core._util.atomic import write_bytes_atomic as w\nw(target, b'v%d' % v * 1000)",
    "json": "from liedar.core._util.atomic import write_json_atomic as w\nw(target, {'v': v, 'pad': 'x' * 1000})",
    "lines": "from liedar.core._util.atomic import AtomicLines\n"
    "with AtomicLines(target) as out:\n    [out.write(f'{{\"v\": {v}}}') for _ in range(100)]",
    "episodes": "from liedar.behavioral.episodes import Episode\nfrom liedar.behavioral.items.episodes import "
    "write_episodes\nwrite_episodes([Episode(f'e{v}', 'trading-report', 'report-tip')] * 50, target)",
    "step": "from liedar.report.store import StepResult, save_step\n"
    "save_step(target.parent, StepResult('s', str(v), 'not_run', {}, reason='r'))",
    "manifest": "from liedar.models.storage import write_manifest\n(target.parent / 'data.bin').write_bytes(b'd' * v)\n"
    "write_manifest(target, target.parent, [target.parent / 'data.bin'])",
    "shard": "import numpy as np\nfrom liedar.models.cache import _write\n"
    "_write(target, np.full((2, 4), float(v), np.float32), {'v': v}, ['a', 'b'])",
}
TARGET_NAME = {"step": "step-s.json", "shard": "shard.npz"}


def _version_of(name: str, path: Path) -> int:
    """Which version `path` holds (it must be complete: a partial file fails to parse)."""
    data = path.read_bytes()
    if name == "bytes":
        assert data == data[:2] * 1000 and len(data) == 2000
        return int(data[1:2])
    if name == "json":
        return int(json.loads(data)["v"])
    if name == "manifest":
        return int(json.loads(data)["files"]["data.bin"]["size"])
    if name == "lines":
        rows = [json.loads(x) for x in data.decode().splitlines()]
        assert len(rows) == 100
        return rows[0]["v"]
    if name == "episodes":
        rows = [json.loads(x) for x in data.decode().splitlines()]
        assert len(rows) == 50
        return int(rows[0]["episode_id"][1:])
    if name == "step":
        return int(json.loads(data)["config_hash"])
    if name == "shard":
        with np.load(path, allow_pickle=False) as z:
            return int(z["hidden"][0, 0])
    raise AssertionError(name)


def _write(name: str, target: Path, v: int) -> None:
    exec(WRITERS[name], {"target": target, "v": v})


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_sigkill_mid_write_keeps_the_old_file(name, tmp_path):
    """Kill the writer after its temporary is complete but before the rename (the worst
    moment): the old file is intact, and the next write removes the orphaned temporary."""
    target = tmp_path / TARGET_NAME.get(name, "out.dat")
    _write(name, target, 1)
    child = (
        textwrap.dedent(
            f"""
        import os, sys, time
        from pathlib import Path
        real_replace = os.replace
        def stall(src, dst):
            print("READY", flush=True)
            time.sleep(60)
        os.replace = stall
        target, v = Path({str(target)!r}), 2
        """
        )
        + WRITERS[name]
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _version_of(name, target) == 1, "the old file must survive a kill mid-write"
    assert _temps(tmp_path), "the killed writer's temporary should be on disk (else the test proved nothing)"
    _write(name, target, 3)
    assert _version_of(name, target) == 3
    assert _temps(tmp_path) == [], "the next write must sweep the killed process's temporary"


class _FullDisk:
    """Wraps a file object: every write raises ENOSPC once `budget` bytes are used."""

    def __init__(self, fh, budget: int) -> None:
        self._fh, self._left = fh, budget

    def write(self, data):
        if len(data) > self._left:
            raise OSError(errno.ENOSPC, "No space left on device")
        self._left -= len(data)
        return self._fh.write(data)

    def __getattr__(self, attr):
        return getattr(self._fh, attr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize("where", ["write", "fsync"])
def test_full_disk_leaves_the_old_file_and_no_temporary(name, where, tmp_path, monkeypatch):
    import builtins
    import io
    import pathlib

    target = tmp_path / TARGET_NAME.get(name, "out.dat")
    _write(name, target, 1)
    before = sorted(p.name for p in tmp_path.iterdir())
    if where == "fsync":
        monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left")))
    else:
        real_open = builtins.open

        def small_disk_open(file, mode="r", *args, **kwargs):
            fh = real_open(file, mode, *args, **kwargs)
            is_temp = str(file).endswith(".tmp") or Path(str(file)).name.startswith(".")
            return _FullDisk(fh, 16) if is_temp and any(c in mode for c in "wa") else fh

        real_fdopen = os.fdopen

        def small_disk_fdopen(fd, mode="r", *args, **kwargs):
            fh = real_fdopen(fd, mode, *args, **kwargs)
            return _FullDisk(fh, 16) if any(c in mode for c in "wa") else fh

        monkeypatch.setattr(builtins, "open", small_disk_open)
        monkeypatch.setattr(io, "open", small_disk_open)
        monkeypatch.setattr(os, "fdopen", small_disk_fdopen)
        real_write_bytes = pathlib.Path.write_bytes
        monkeypatch.setattr(
            pathlib.Path,
            "write_bytes",
            lambda self, data: (
                (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left"))
                if self.name.endswith(".tmp")
                else real_write_bytes(self, data)
            ),
        )
    with pytest.raises(LiedarError) as info:
        _write(name, target, 2)
    monkeypatch.undo()
    assert "\n" not in str(info.value) and "No space" in str(info.value)
    assert _version_of(name, target) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "a temporary was left"


def test_failed_rename_leaves_nothing(tmp_path, monkeypatch):
    from liedar.core._util.atomic import WriteError, write_json_atomic

    target = tmp_path / "r.json"
    write_json_atomic(target, {"v": 1})
    monkeypatch.setattr(os, "replace", lambda a, b: (_ for _ in ()).throw(OSError(errno.EXDEV, "Invalid link")))
    with pytest.raises(WriteError, match="cannot write"):
        write_json_atomic(target, {"v": 2})
    monkeypatch.undo()
    assert json.loads(target.read_text()) == {"v": 1} and _temps(tmp_path) == []


def test_writing_onto_a_folder_is_one_line(tmp_path):
    from liedar.core._util.atomic import WriteError, write_json_atomic

    (tmp_path / "d").mkdir()
    with pytest.raises(WriteError, match="a folder has that name"):
        write_json_atomic(tmp_path / "d", {"v": 1})
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_outputs_get_the_users_umask(umask, tmp_path):
    from liedar.core._util.atomic import AtomicLines, atomic_dir, write_json_atomic

    old = os.umask(umask)
    try:
        write_json_atomic(tmp_path / "a.json", {})
        with AtomicLines(tmp_path / "b.jsonl") as out:
            out.write("{}")
        with atomic_dir(tmp_path / "c") as tmp:
            (tmp / "f").write_bytes(b"x")
            fd = os.open(tmp / "private", os.O_WRONLY | os.O_CREAT, 0o600)  # like safetensors does
            os.close(fd)
    finally:
        os.umask(old)
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    for f in ("a.json", "b.jsonl", "c/f", "c/private"):
        assert mode(tmp_path / f) == 0o666 & ~umask, f
    assert mode(tmp_path / "c") == 0o777 & ~umask


# ---- the activation cache ----------------------------------------------------------------------


class CountingBackend:
    """A deterministic stand-in: hidden state = f(input, layer); counts computed inputs."""

    name, kind, fingerprint, d_model, n_layers = "fake", "fake", "f" * 64, 4, 3

    def __init__(self, poison: bool = False) -> None:
        self.computed = 0
        self.poison = poison

    def check_layers(self, layers):
        return [int(x) for x in layers]

    def hidden_states(self, inputs, layers, position):
        self.computed += len(inputs)
        out = np.array([[[len(t) + 10 * layer + k for k in range(4)] for layer in layers] for t in inputs], np.float32)
        if self.poison:
            out[0, 0, 0] = np.nan
        return out


def _shards(root: Path) -> list[Path]:
    return sorted(root.rglob("*.npz"))


def _damage_flip(p: Path) -> None:
    data = bytearray(p.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 16] = bytes(16)
    p.write_bytes(bytes(data))


def _damage_truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[:100])


def _damage_values(p: Path) -> None:
    """Plausible values, wrong content: the digest recorded at write time no longer matches."""
    with np.load(p, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["hidden"] = arrays["hidden"] + 1
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


def _damage_nan(p: Path) -> None:
    """NaN written together with a matching digest (as an older liedar could have)."""
    from liedar.models.cache import _digest

    with np.load(p, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["hidden"][0, 0] = np.nan
    arrays["digest"] = np.array(_digest(arrays["hidden"]))
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


def _damage_old_format(p: Path) -> None:
    with np.load(p, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files if k != "digest"}
    with open(p, "wb") as fh:
        np.savez(fh, **arrays)


@pytest.mark.parametrize("damage", [_damage_flip, _damage_truncate, _damage_values, _damage_nan, _damage_old_format])
def test_damaged_activation_shards_are_recomputed(damage, tmp_path, capsys):
    from liedar.models.cache import cached_hidden_states

    texts = [f"text {i}" * (i + 1) for i in range(6)]
    backend = CountingBackend()
    first = cached_hidden_states(backend, texts, [1, 2], root=tmp_path, shard_size=4)
    assert backend.computed == 6
    shard = _shards(tmp_path)[0]
    damage(shard)
    stats: dict = {}
    again = cached_hidden_states(backend, texts, [1, 2], root=tmp_path, shard_size=4, stats=stats)
    np.testing.assert_array_equal(again, first)
    assert np.isfinite(again).all()
    assert stats["damaged"] == 1 and backend.computed > 6, "the damaged shard must be recomputed, not served"
    err = capsys.readouterr().err
    assert err.count("liedar: note:") == 1 and "recomputed" in err
    backend.computed = 0
    cached_hidden_states(backend, texts, [1, 2], root=tmp_path, shard_size=4)
    assert backend.computed == 0, "the repaired shard is served again"


def test_non_finite_activations_are_never_cached(tmp_path):
    from liedar.models.cache import cached_hidden_states

    with pytest.raises(IncompatibleError, match="NaN or infinite hidden states"):
        cached_hidden_states(CountingBackend(poison=True), ["a", "b"], [1], root=tmp_path)
    assert _shards(tmp_path) == [] and not [p for p in tmp_path.rglob("*.tmp")]


# ---- the dequantized model copy and the assembled Gemma GGUF ---------------------------------


def _fake_dequantize(tmp: Path, gguf: Path, n_threads) -> None:
    (tmp / "config.json").write_text('{"model_type": "llama"}')
    (tmp / "model.safetensors").write_bytes(os.urandom(64 * 1024))
    (tmp / "tokenizer.json").write_text("{}")


@pytest.fixture
def fake_builder(monkeypatch):
    from liedar.models import registry

    calls: list[Path] = []

    def build(tmp, gguf, n_threads):
        calls.append(tmp)
        _fake_dequantize(tmp, gguf, n_threads)

    monkeypatch.setattr(registry, "_dequantize_into", build)
    return calls


def _overwrite_4k(p: Path) -> None:
    with open(p, "r+b") as fh:
        fh.seek(8192)
        fh.write(b"\xff" * 4096)


def _truncate(p: Path) -> None:
    os.truncate(p, p.stat().st_size // 2)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: _overwrite_4k(d / "model.safetensors"),
        lambda d: _truncate(d / "model.safetensors"),
        lambda d: (d / "liedar_manifest.json").unlink(),
        lambda d: (d / "liedar_manifest.json").write_text("[]"),
        lambda d: (d / "config.json").unlink(),
        lambda d: (d / "liedar_source.json").write_text('{"gguf_sha256": "other"}'),
    ],
    ids=["overwrite-4k", "truncated", "no-manifest", "bad-manifest", "missing-file", "other-source"],
)
def test_damaged_model_copy_is_rebuilt(damage, fake_builder, tmp_path, capsys):
    from liedar.models.registry import dequantized_copy
    from liedar.models.storage import cache_root

    gguf, digest = tmp_path / "m.gguf", "ab" * 32
    gguf.write_bytes(b"GGUF")
    folder = dequantized_copy(gguf, digest)
    assert len(fake_builder) == 1 and folder.parent == cache_root() / "hf"
    assert dequantized_copy(gguf, digest) == folder and len(fake_builder) == 1, "a whole copy is reused"
    capsys.readouterr()
    damage(folder)
    assert dequantized_copy(gguf, digest) == folder
    assert len(fake_builder) == 2, "a damaged copy must be rebuilt, never served"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "failed verification" in err[0]
    assert [p for p in folder.parent.iterdir() if p.name.startswith(".")] == [], "the old copy is gone"


@pytest.fixture
def fake_gemma(monkeypatch, tmp_path):
    """Four fake chunk packages and their SHA256SUMS, as the real ones are laid out."""
    import hashlib

    from liedar.models import registry

    parts = [os.urandom(20_000) for _ in range(4)]
    whole = b"".join(parts)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for i, data in enumerate(parts):
        (pkg / f"gemma.gguf.part{i:02d}").write_bytes(data)
    (pkg / "SHA256SUMS").write_text(f"{hashlib.sha256(whole).hexdigest()}  gemma.gguf\n")

    def package_file(dist, suffix, install):
        hits = [p for p in pkg.iterdir() if p.name.endswith(suffix)]
        return hits[0]

    monkeypatch.setattr(registry, "_package_file", package_file)
    return whole


@pytest.mark.parametrize(
    "damage", [_overwrite_4k, _truncate, lambda p: p.with_name(p.name + ".manifest.json").unlink()]
)
def test_damaged_gemma_gguf_is_reassembled(damage, fake_gemma, capsys):
    from liedar.models.registry import _gemma3_gguf

    path = _gemma3_gguf()
    assert path.read_bytes() == fake_gemma
    damage(path)
    capsys.readouterr()
    assert _gemma3_gguf().read_bytes() == fake_gemma
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "reassembling" in err[0]


def test_gemma_parts_that_do_not_match_leave_nothing(fake_gemma, tmp_path):
    from liedar.core.errors import ModelUnavailableError
    from liedar.models.registry import _gemma3_gguf
    from liedar.models.storage import cache_root

    (tmp_path / "pkg" / "gemma.gguf.part02").write_bytes(b"tampered")
    with pytest.raises(ModelUnavailableError, match="sha256"):
        _gemma3_gguf()
    assert list((cache_root() / "gguf").iterdir()) == []


# ---- pickle weights in a user's model folder -------------------------------------------------


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))  # unpickling would create the marker file


def test_pickle_only_model_folder_is_refused_before_torch(tmp_path, monkeypatch):
    import pickle

    from liedar import models

    folder, marker = tmp_path / "model", tmp_path / "PWNED"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Payload(str(marker))))
    import torch

    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load was reached"))
    with pytest.raises(InputError, match="pickle.*safetensors") as info:
        models.load(str(folder), backend="transformers", n_threads=1)
    assert "\n" not in str(info.value) and not marker.exists()


# ---- the compiled llama.cpp capture callback -------------------------------------------------

HAVE_CC = shutil.which("cc") is not None or shutil.which("gcc") is not None
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")


@pytest.fixture
def native(monkeypatch):
    from liedar.models import native

    monkeypatch.setattr(native, "_loaded", {})
    return native


def _evil_library(tmp_path: Path, target: Path) -> Path:
    """A shared object whose constructor writes a marker file: compiled to `target`."""
    marker = tmp_path / "PLANTED-RAN"
    src = tmp_path / "evil.c"
    src.write_text(
        "#include <stdio.h>\n__attribute__((constructor)) static void run(void) "
        f'{{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n'
        "int liedar_eval_callback(void) { return 0; }\n"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(target), str(src)], check=True, capture_output=True)
    return marker


@needs_cc
@pytest.mark.parametrize("installed", [True, False], ids=["with-the-installed-library", "without-it"])
def test_a_library_planted_in_the_cache_is_never_loaded(native, tmp_path, monkeypatch, installed):
    """The attack that a build record beside a cached library could not stop: a planted .so
    at the cache path liedar once used, with a record forged to match it. liedar loads only
    the library installed with the package, so the constructor never runs; without an
    installed library it fails closed (Python callback, one warning), never to the cache."""
    import hashlib

    from liedar.models.storage import cache_root

    key = hashlib.sha256(Path(native.__file__).with_name("llamacpp_capture.c").read_bytes()).hexdigest()
    folder = cache_root() / "native"
    target = folder / f"llamacpp_capture-{key[:16]}.so"
    marker = _evil_library(tmp_path, target)
    os.chmod(folder, 0o700)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    record = {"source_sha256": key, "size": target.stat().st_size, "sha256": digest}
    target.with_suffix(".json").write_text(json.dumps(record))
    for other in ("_llamacpp_capture.so", f"_llamacpp_capture{native.importlib.machinery.EXTENSION_SUFFIXES[0]}"):
        shutil.copy(target, folder / other)
    monkeypatch.chdir(folder)  # not the working directory either
    if installed:
        if native.installed_library() is None:
            pytest.skip("liedar was installed without its compiled callback")
        lib = native.load_capture_library()
        assert lib is not None and Path(lib._name) == native.installed_library()
        assert Path(lib._name).parent == Path(native.__file__).resolve().parent
    else:
        monkeypatch.setattr(native, "installed_library", lambda: None)
        with pytest.warns(RuntimeWarning, match="installed without its compiled capture callback.*reinstall"):
            assert native.load_capture_library() is None
    assert not marker.exists(), "the planted library's constructor ran"


@needs_cc
@pytest.mark.parametrize("what", ["file", "folder"])
def test_an_installed_library_writable_by_others_is_not_loaded(native, tmp_path, monkeypatch, what):
    folder = tmp_path / "site"
    marker = _evil_library(tmp_path, folder / "_llamacpp_capture.so")
    os.chmod(folder, 0o777 if what == "folder" else 0o755)
    os.chmod(folder / "_llamacpp_capture.so", 0o666 if what == "file" else 0o755)
    monkeypatch.setattr(native, "installed_library", lambda: folder / "_llamacpp_capture.so")
    with pytest.warns(RuntimeWarning, match="can be written by other users"):
        assert native.load_capture_library() is None
    assert not marker.exists()


# ---- the monitor fails closed ------------------------------------------------------------------


def _monitor(hidden_value: float = 0.0, threshold=None, coef_value: float = 1.0):
    from liedar.probes.estimators import MassMeanProbe
    from liedar.probes.monitor import HonestyMonitor

    rng = np.random.default_rng(0)
    probe = MassMeanProbe().fit(rng.normal(size=(10, 4)), np.array([0, 1] * 5))
    probe.coef_ = probe.coef_ * coef_value

    class B:
        name, fingerprint, d_model, n_layers = "fake", "x", 4, 3

    return HonestyMonitor(B(), probe, layer=1, threshold=threshold)


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), -float("inf"), "0.5", True])
def test_monitor_refuses_non_finite_thresholds(threshold):
    with pytest.raises(InputError):
        _monitor(threshold=threshold)


def test_monitor_refuses_a_nan_probe():
    with pytest.raises(InputError, match="NaN"):
        _monitor(coef_value=float("nan"))


def test_monitor_never_calls_a_nan_score_not_flagged():
    monitor = _monitor(threshold=0.0)
    assert monitor.score_hidden(np.ones(4)).shape == (1,)
    with pytest.raises(IncompatibleError, match="could not score"):
        monitor.score_hidden(np.full(4, np.nan))


def test_calibration_refuses_nan_scores_in_the_held_out_part():
    from liedar.probes.monitor_calibration import calibrate_threshold

    scores = list(np.linspace(0, 1, 50)) + [float("nan")]
    with pytest.raises(InputError, match="NaN"):
        calibrate_threshold(scores, 0.1)
