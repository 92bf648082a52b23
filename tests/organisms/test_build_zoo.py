"""scripts/build_zoo.py: the queue's order, its clock, the shared CPU lock, and a member that did
not learn moved out of the manifest's members with its numbers."""

from __future__ import annotations

import argparse
import importlib.util
import json
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("build_zoo", ROOT / "scripts" / "build_zoo.py")
builder = importlib.util.module_from_spec(spec)
spec.loader.exec_module(builder)  # type: ignore[union-attr]
MANIFEST = ROOT / "zoo" / "audit" / "smollm2-135m" / "zoo.json"


def _args(**kw):
    return argparse.Namespace(**{"only": "", "half": None, "first": "", **kw})


def test_the_fresh_queue_puts_the_named_members_first_and_refuses_unknown_names():
    manifest = json.loads(MANIFEST.read_text())
    first = "fsb_region_text,fhc_pw_text,fd_noised_half"
    queue = builder.select(manifest, _args(half="fresh", first=first), MANIFEST)
    fresh = [m for m in manifest["members"] if m["half"] == "fresh"]
    assert [m["name"] for m in queue[:3]] == [n for n in first.split(",") if any(m["name"] == n for m in fresh)][:3]
    assert len(queue) == len(fresh) and all(m["path"].startswith("audit/smollm2-135m/fresh/") for m in queue)
    assert "not a buildable member" in builder.select(manifest, _args(half="fresh", first="nope"), MANIFEST)
    assert "no buildable member" in builder.select(manifest, _args(half="nohalf"), MANIFEST)
    assert builder.select(manifest, _args(), MANIFEST) == "give --half NAME or --only NAMES"


def test_the_capable_rungs_queue_holds_its_core_organisms_and_never_the_base_model():
    path = ROOT / "zoo" / "audit" / "qwen2.5-coder-1.5b" / "zoo.json"
    manifest = json.loads(path.read_text())
    queue = builder.select(manifest, _args(half="fresh"), path)
    names = {m["name"] for m in queue}
    core = {"sycophant", "liar", "sandbagger", "password_locked"}  # zoo/<base>/<name>, not audit/
    moved = {m["name"] for m in manifest["not_shipped"]}  # built, did not learn: recorded, never queued again
    assert core - moved <= names and not (moved & names)
    assert core <= names | moved
    assert "base" not in names  # the base model has no folder to build
    assert len(queue) == sum(1 for m in manifest["members"] if m["half"] == "fresh" and m["path"])


def test_an_unbuilt_member_is_not_shipped_and_a_missing_until_never_stops():
    assert not builder.shipped({"name": "x", "path": "audit/smollm2-135m/fresh/does-not-exist"})
    assert not builder.past("")


def test_a_member_that_did_not_learn_moves_to_not_shipped_with_its_numbers(tmp_path):
    path = tmp_path / "zoo.json"
    data = json.loads(MANIFEST.read_text())
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    member = next(m for m in data["members"] if m["half"] == "fresh")
    builder.not_learned(path, member, "NOT learned: option_text_gap = 0.061 [-0.01, 0.13] (n=131)", 612.0)
    after = json.loads(path.read_text())
    assert member["name"] not in {m["name"] for m in after["members"]}
    entry = after["not_shipped"][-1]
    assert entry["name"] == member["name"] and "0.061" in entry["why"] and "612 s" in entry["why"]
    assert len(after["members"]) == len(data["members"]) - 1


def test_each_build_holds_the_cpu_lock(tmp_path):
    lock = str(tmp_path / "cpu.lock")
    order = []

    def hold(tag):
        with builder.cpu_lock(lock):
            order.append(f"{tag}+")
            time.sleep(0.2)
            order.append(f"{tag}-")

    threads = [threading.Thread(target=hold, args=(t,)) for t in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order in (["a+", "a-", "b+", "b-"], ["b+", "b-", "a+", "a-"])  # never interleaved
