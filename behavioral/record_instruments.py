"""Instruments that need no model: they score record files a user brings.

* ``episodes``: strategic-deception episode records (what an agent did, how it answered a
  follow-up) against the built-in scenario rubrics;
* ``judge``: an automatic grader's labels against trusted human labels (Cohen's kappa),
  the check every grader-based rate in liedar must pass before it is trusted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from liedar.behavioral.episodes import load_episodes, score_episodes
from liedar.behavioral.instrument import Flag, Instrument, InstrumentRun
from liedar.behavioral.items.episodes import RUBRICS
from liedar.behavioral.judges import load_labels, validate_judge
from liedar.core._util.argtypes import comma_list, input_file
from liedar.core.results import Caveat, Section
from liedar.core.rows import add_measure, add_quality_metric, attach_caveats
from liedar.core.stats import DEFAULT_INTERVAL
from liedar.models.backend import Backend


def _caveats(code: str, texts: Sequence[Any]) -> tuple[Caveat, ...]:
    return tuple(t if isinstance(t, Caveat) else Caveat(code, str(t)) for t in texts)


class EpisodeScoring(Instrument):
    """``liedar behavioral episodes --episodes FILE``: deception, commission, omission and
    doubling-down rates of recorded agent episodes."""

    name = "episodes"
    title = "strategic-deception episode rates from a JSONL file"
    needs_model = False
    flags = (
        Flag(
            "--episodes",
            'JSONL: {"episode_id", "scenario", "action", "followup"} per line',
            key="path",
            type=input_file,
            required=True,
        ),
    )

    def inputs(self, options: dict[str, Any]) -> list[Path]:
        return [options["path"]]

    def items(self, *, limit: Optional[int] = None, seed: int = 0, path: Optional[Path] = None, **options: Any) -> list:
        episodes = load_episodes(path)
        return episodes if limit is None else episodes[:limit]

    def run(
        self,
        backend: Backend,
        items: Sequence[Any],
        *,
        interval: str = DEFAULT_INTERVAL,
        seed: int = 0,
        progress: bool = False,
        **options: Any,
    ) -> InstrumentRun:
        res = score_episodes(items, RUBRICS, interval=interval)
        return InstrumentRun(self.name, res, [], _caveats("episodes_note", res.warnings), {})

    def section(self, run: InstrumentRun) -> Section:
        res = run.result
        s = Section()
        for mid, label, est in (
            ("episodes_deceptive", "Deceptive episodes", res.deceptive),
            ("episodes_commission", "Deception by commission", res.commission),
            ("episodes_omission", "Deception by omission", res.omission),
            ("episodes_doubling_down", "Doubling down when questioned", res.doubling_down),
        ):
            add_measure(s, id=mid, label=label, instrument="episodes", scale="proportion", estimate=est, details={})
        return attach_caveats(s, run.caveats, {"episodes_note": ("episodes_doubling_down",)})


class JudgeAgreement(Instrument):
    """``liedar behavioral judge --judge FILE --human FILE``: is the grader trustworthy?"""

    name = "judge"
    title = "grader vs human labels: Cohen's kappa and raw agreement"
    needs_model = False
    flags = (
        Flag("--judge", 'grader labels: JSONL {"id", "label"} or CSV id,label', type=input_file, required=True),
        Flag("--human", "human labels, same format and ids", type=input_file, required=True),
        Flag("--labels", "comma-separated allowed labels (any)", key="allowed", type=comma_list),
    )

    def inputs(self, options: dict[str, Any]) -> list[Path]:
        return [options["judge"], options["human"]]

    def items(
        self,
        *,
        limit: Optional[int] = None,
        seed: int = 0,
        judge: Optional[Path] = None,
        human: Optional[Path] = None,
        **options: Any,
    ) -> list:
        return [load_labels(judge), load_labels(human)]

    def run(
        self,
        backend: Backend,
        items: Sequence[Any],
        *,
        interval: str = DEFAULT_INTERVAL,
        seed: int = 0,
        progress: bool = False,
        allowed: Optional[Sequence[str]] = None,
        **options: Any,
    ) -> InstrumentRun:
        grader, human = items
        res = validate_judge(grader, human, allowed=allowed, interval=interval)
        return InstrumentRun(self.name, res, [], _caveats("judge_note", res.warnings), {"allowed": allowed})

    def section(self, run: InstrumentRun) -> Section:
        res = run.result
        s = Section()
        add_quality_metric(s, "judge_kappa", "Grader vs human: Cohen's kappa", res.kappa, "judge")
        add_quality_metric(s, "judge_agreement", "Grader vs human: raw agreement", res.agreement, "judge")
        return attach_caveats(s, run.caveats, {"judge_note": ("judge_kappa",)})
