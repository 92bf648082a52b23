"""Code written for the two libraries liedar grew from runs with only its import line changed.

ai_metacognition's ``ConsistencyDetector`` reported plain floats; liedar reports an
``Estimate`` (value, interval, n, method). Users format, convert and compare those fields as
floats, so an ``Estimate`` must behave like its point value there. prefgraph's menu-choice
API (``MenuChoiceLog``, ``validate_menu_sarp``, ``is_consistent``, ``violations``) is kept as
thin aliases of liedar's own names.
"""

from __future__ import annotations

import contextlib
import io
import math

import pytest

from liedar.core.stats import Estimate, wilson

CONSISTENCY_QUICK_START = """
from liedar.behavioral import ConsistencyDetector, OptionOrderTrial, ParaphraseTrial

# A model that always picks the third position, whatever option sits there
trials = []
for item in range(6):
    for shuffle in range(4):
        options = ["A", "B", "C", "D"][shuffle:] + ["A", "B", "C", "D"][:shuffle]
        trials.append(OptionOrderTrial(item_id=f"q{item}", presented_options=tuple(options), chosen_position=2))
paraphrases = [
    ParaphraseTrial(item_id=f"q{item}", variant=v, correct=(item + v) % 2 == 0)
    for item in range(6)
    for v in range(3)
]

detector = ConsistencyDetector(detection_threshold=0.6)
result = detector.detect_inconsistency(option_trials=trials, paraphrase_trials=paraphrases)

print(f"Sandbagging detected: {result.detected}")
print(f"Confidence: {result.confidence:.2f}")
print(f"Answer consistency: {result.answer_consistency:.2f}")
print(f"Position bias: {result.position_bias_score:.2f}")
print(f"Paraphrase agreement: {result.paraphrase_agreement:.2f}")
if result.answer_consistency < 0.5:
    print("Answers change with option order")
for rec in result.recommendations:
    print(f"- {rec}")
"""

PREFGRAPH_SNIPPET = """
from liedar.behavioral.revealed import MenuChoiceLog, validate_menu_sarp

log = MenuChoiceLog(
    menus=[frozenset({0, 1}), frozenset({1, 2}), frozenset({0, 2})],
    choices=[0, 1, 2],  # 0 over 1, 1 over 2, 2 over 0: a cycle
)
result = validate_menu_sarp(log)
print(result.is_consistent)
print(result.violations)
"""


def _run(snippet: str) -> tuple[dict, str]:
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(snippet, "<snippet>", "exec"), namespace)  # noqa: S102 - the point is to run user code as written
    return namespace, out.getvalue()


def test_consistency_quick_start_runs_with_only_the_import_changed():
    ns, out = _run(CONSISTENCY_QUICK_START)
    result = ns["result"]
    assert isinstance(result.answer_consistency, Estimate)
    # the printed numbers are the estimates' point values, formatted as floats
    assert f"Answer consistency: {result.answer_consistency.value:.2f}" in out
    assert f"Paraphrase agreement: {result.paraphrase_agreement.value:.2f}" in out
    # always-the-third-position under rotation: each item's modal label share is 1/4
    assert result.answer_consistency.value == pytest.approx(0.25)
    assert "Answers change with option order" in out
    assert "Sandbagging detected: True" in out


def test_estimate_formats_converts_and_compares_like_its_value():
    est = wilson(3, 10)
    assert format(est, ".2f") == "0.30" == f"{est:.2f}"
    assert f"{est:.1%}" == "30.0%"
    assert float(est) == 0.3 and math.isclose(float(est), est.value)
    assert round(est, 1) == 0.3
    assert est < 0.5 and est <= 0.3 and est > 0.1 and est >= 0.3 and 0.2 < est
    assert est == 0.3 and est != 0.31
    assert sorted([wilson(5, 10), est, wilson(1, 10)]) == [wilson(1, 10), est, wilson(5, 10)]
    # the bare f-string still shows the interval, count and method
    assert f"{est}" == str(est) and "[0.108, 0.603]" in f"{est}" and "n=10" in f"{est}"
    # two estimates with the same value but different counts are different estimates
    assert wilson(3, 10) != wilson(30, 100)


def test_estimate_refuses_comparison_with_non_numbers():
    est = wilson(3, 10)
    with pytest.raises(TypeError):
        _ = est < "0.5"
    assert (est == "0.3") is False


def test_prefgraph_snippet_runs_with_only_the_import_changed():
    ns, out = _run(PREFGRAPH_SNIPPET)
    result = ns["result"]
    assert result.is_consistent is False and out.splitlines()[0] == "False"
    assert result.violations == result.cycles and len(result.violations) == 1
    assert sorted(result.violations[0]) == ["0", "1", "2"]


def test_prefgraph_names_are_liedars_functions():
    from liedar.behavioral.revealed import check_sarp, check_warp, validate_menu_sarp, validate_menu_warp

    assert validate_menu_sarp is check_sarp and validate_menu_warp is check_warp
    from liedar.behavioral.revealed import MenuChoiceLog

    log = MenuChoiceLog(menus=[["a", "b"], ["a", "b"]], choices=["a", "b"])
    warp = validate_menu_warp(log)
    assert warp.is_consistent is False and len(warp.violations) == 1
    consistent = validate_menu_sarp(MenuChoiceLog(menus=[["a", "b"], ["a", "c"]], choices=["a", "a"]))
    assert consistent.is_consistent is True and consistent.violations == []
