"""Statement sets: loaders, label forms, built-in sets without entity leakage."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from liedar.core.errors import InputError
from liedar.models.chat import Dialogue
from liedar.probes.datasets import (
    BUILTIN_SETS,
    DECEPTIVE_PERSONA,
    StatementSet,
    builtin_set,
    instructed_pairs,
    load_csv,
    load_jsonl,
    load_truth_is_universal,
    resolve_data,
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("true_form,false_form", [("1", "0"), ("true", "false"), ("TRUE", "False"), ("1.0", "0.0")])
def test_csv_label_forms_and_extra_columns(tmp_path: Path, true_form: str, false_form: str) -> None:
    f = write(tmp_path / "neg_towns.csv", f"statement,label,city\nA is B.,{true_form},A\nC is D.,{false_form},C\n")
    s = load_csv(f)
    assert s.labels.tolist() == [1, 0]
    assert s.lie_labels.tolist() == [0, 1]
    assert set(s.topic) == {"towns"} and set(s.polarity) == {"negated"}


def test_csv_without_label_column(tmp_path: Path) -> None:
    f = write(tmp_path / "x.csv", "statement,truth\nA.,1\n")
    with pytest.raises(InputError, match=r"x\.csv.*'label'"):
        load_csv(f)


def test_csv_bad_label_names_file_row_and_forms(tmp_path: Path) -> None:
    f = write(tmp_path / "x.csv", "statement,label\nA.,1\nB.,maybe\n")
    with pytest.raises(InputError, match=r"x\.csv:3: label 'maybe' is not an accepted form \(1/0, true/false"):
        load_csv(f)


def test_jsonl_with_text_and_dialogue(tmp_path: Path) -> None:
    f = write(
        tmp_path / "d.jsonl",
        '{"statement": "Sky is blue.", "label": true, "group": "g1"}\n\n'
        '{"dialogue": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Lie.", "detect": true}],'
        ' "label": 0, "style": "instructed", "group": "g1"}\n',
    )
    s = load_jsonl(f)
    assert s.labels.tolist() == [1, 0]
    assert isinstance(s.inputs[1], Dialogue) and s.inputs[1].messages[1].detect
    assert s.group[0] == s.group[1]
    bad = write(tmp_path / "b.jsonl", '{"statement": "x"}\n')
    with pytest.raises(InputError, match=r"b\.jsonl:1: .*label"):
        load_jsonl(bad)


def test_statement_set_rejects_mismatched_lengths() -> None:
    with pytest.raises(InputError, match="labels has shape"):
        StatementSet(
            "x",
            ["a", "b"],
            np.array([1]),
            np.array(["t", "t"]),
            np.array(["affirmative"] * 2),
            np.array(["plain"] * 2),
            np.array(["g", "h"]),
        )


@pytest.mark.parametrize("name", [n for n in BUILTIN_SETS if n != "instructed"])
def test_builtin_sets_have_no_entity_leak(name: str) -> None:
    """Each word occurs in one group only and, inside it, equally often in true and false
    statements, so no token can predict the label across folds."""
    s = builtin_set(name)
    assert len(s) >= 150 and s.labels.mean() == 0.5
    assert set(s.polarity) == {"affirmative", "negated"}
    words_groups: dict[str, set] = defaultdict(set)
    balance: dict[str, Counter] = defaultdict(Counter)
    for text, label, group in zip(s.inputs, s.labels, s.group):
        for w in set(re.findall(r"[A-Za-z0-9]+", text)):
            words_groups[w].add(group)
            balance[w][label] += 1
    for w, counts in balance.items():
        assert counts[0] == counts[1], (w, counts)  # every word balanced between true and false
    content = [w for w, g in words_groups.items() if len(g) == 1]
    assert len(content) > len(s) / 8  # entity words exist and are confined to one group


def test_builtin_sets_have_negated_twins_in_the_same_group() -> None:
    s = builtin_set("capitals")
    by_text = dict(zip(s.inputs, zip(s.labels, s.group)))
    for text, label, group in zip(s.inputs, s.labels, s.group):
        if " is not " in text:
            twin = text.replace(" is not ", " is ")
            assert by_text[twin] == (1 - label, group)


def test_builtin_sets_are_seeded() -> None:
    assert builtin_set("numbers", seed=1).inputs == builtin_set("numbers", seed=1).inputs
    assert builtin_set("numbers", seed=1).inputs != builtin_set("numbers", seed=2).inputs


def test_instructed_pairs_assert_the_same_fact_under_two_personas() -> None:
    s = instructed_pairs()
    assert set(s.style) == {"instructed"}
    assert all(isinstance(x, Dialogue) for x in s.inputs)
    for a, b in zip(s.inputs[0::2], s.inputs[1::2]):
        assert a.messages[-1] == b.messages[-1] and a.messages[-1].detect  # same asserted fact
        assert not a.messages[0].detect
    deceptive = [x.messages[0].content == DECEPTIVE_PERSONA for x in s.inputs]
    assert (s.labels == 0).tolist() == deceptive  # label 0 = deceptive persona


def test_resolve_data_rejects_unknown(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="neither a built-in set"):
        resolve_data("nonsense")


def test_truth_is_universal_loader(shared_datasets: Path) -> None:
    s = load_truth_is_universal(shared_datasets, topics=["element_symb"])
    assert len(s) == 2 * 186
    aff, neg = s.subset(~s.is_negated), s.subset(s.is_negated)
    assert (aff.labels == 1 - neg.labels).all() and (aff.group == neg.group).all()
    # an element named in a true and a false row shares one group
    thallium = [g for t, g in zip(s.inputs, s.group) if t.startswith("Thallium")]
    assert len(set(thallium)) == 1


def test_truth_is_universal_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cities.csv"):
        load_truth_is_universal(tmp_path)
