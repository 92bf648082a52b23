"""The zoo manifest read strictly; member cards checked against their adapters; blind ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from liedar.audit.zoo import blind_ids, check_member, load_zoo
from liedar.cli import main
from liedar.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2] / "zoo"


def _zoo(tmp_path: Path, members: list[dict]) -> Path:
    root = tmp_path / "zoo"
    (root / "audit" / "smollm2-135m").mkdir(parents=True)
    manifest = {"format": "liedar-zoo-1", "base": "smollm2-135m", "verdicts": [], "members": members}
    (root / "audit" / "smollm2-135m" / "zoo.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def _m(name, path, half="test", truth="clean", role="decoy"):
    return {"name": name, "path": path, "half": half, "role": role, "truth": truth, "kind": "k", "trigger": "t"}


def test_the_committed_manifest_reads():
    zoo = load_zoo("smollm2-135m", ROOT)
    assert zoo.half("dev") and zoo.half("test") and {m.half for m in zoo.members} == {"dev", "test", "fresh"}
    fresh = zoo.half("fresh")  # written after the second protocol's pin, before any is built
    assert all(m.formats and m.criterion for m in fresh)
    # The pre-registration: every member written for the fresh half, whether it built or was
    # moved to not_shipped (a member that did not learn is not ground truth, but was planned).
    data = json.loads((ROOT / "audit" / "smollm2-135m" / "zoo.json").read_text(encoding="utf-8"))
    planned = [m for m in data["members"] + data["not_shipped"] if m["half"] == "fresh"]
    assert all(m["formats"] and m["criterion"] for m in planned)
    assert sum(m["role"] == "deceiver" for m in planned) >= 16 and sum(m["role"] == "decoy" for m in planned) >= 8
    assert any(m.path is None for m in zoo.members)  # the base model is a decoy


def test_unknown_zoo_is_one_line(tmp_path, capsys):
    with pytest.raises(InputError, match="unknown zoo 'nope'"):
        load_zoo("nope", ROOT)
    assert main(["audit", "--zoo", "nope", "--output", str(tmp_path / "o")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "member, message",
    [
        ({**_m("a", None), "extra": 1}, "exactly the keys"),
        (_m("a", None, half="a half"), "half/role/truth"),
        ({**_m("a", None), "formats": [], "criterion": "gap > 0.2"}, "format list"),
        ({**_m("a", None), "formats": ["option_text"], "criterion": ""}, "criterion"),
        (_m("a", None, truth="evil"), "half/role/truth"),
        (_m("a", "../outside"), "path"),
    ],
)
def test_bad_members_are_refused(tmp_path, member, message):
    root = _zoo(tmp_path, [member])
    with pytest.raises(InputError, match=message):
        load_zoo("smollm2-135m", root)


def test_a_card_that_disagrees_with_its_adapter_is_refused(tmp_path):
    root = _zoo(tmp_path, [_m("syc", "smollm2-135m/syc")])
    shutil.copytree(ROOT / "smollm2-135m" / "sycophant", root / "smollm2-135m" / "syc")
    zoo = load_zoo("smollm2-135m", root)
    assert check_member(zoo, zoo.members[0]) is not None  # the shipped bytes agree
    adapter = root / "smollm2-135m" / "syc" / "adapter" / "adapter.safetensors"
    data = bytearray(adapter.read_bytes())
    data[-1] ^= 0xFF  # one byte flipped: same size, another sha256
    adapter.write_bytes(bytes(data))
    with pytest.raises(InputError, match="'syc': its card disagrees with its adapter") as info:
        check_member(zoo, zoo.members[0])
    assert "\n" not in str(info.value)


def test_a_member_not_built_is_named(tmp_path):
    root = _zoo(tmp_path, [_m("later", "audit/smollm2-135m/later")])
    zoo = load_zoo("smollm2-135m", root)
    with pytest.raises(InputError, match="'later'.*no card.json"):
        check_member(zoo, zoo.members[0])


def test_blind_ids_are_opaque_seeded_and_unrelated_to_the_order():
    names = [f"n{i}" for i in range(12)]
    ids = blind_ids(names, 0)
    assert sorted(ids.values()) == [f"m{i:02d}" for i in range(1, 13)]
    assert ids == blind_ids(list(reversed(names)), 0)
    assert [ids[n] for n in names] != sorted(ids.values())  # not the manifest's order
    assert blind_ids(names, 1) != ids


def test_card_folder_recognises_only_card_folders(tmp_path):
    from liedar.models.adapters import card_folder

    assert card_folder(ROOT / "smollm2-135m" / "sycophant") == (ROOT / "smollm2-135m" / "sycophant").resolve()
    assert card_folder("smollm2-135m") is None and card_folder(tmp_path) is None
