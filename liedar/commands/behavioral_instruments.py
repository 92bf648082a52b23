"""`liedar behavioral gap|noise|sycophancy|negation|honesty|episodes|judge`.

Each command runs one deception instrument and prints every estimate with its interval,
count, method and whether it measured capability or propensity, then the protocol, a
reading computed from the numbers, and any warnings. Examples::

    liedar behavioral negation --model smollm2-135m --output negation.json
    liedar behavioral noise --model smollm2-135m --limit 40 --seeds 3
    liedar behavioral episodes --episodes runs.jsonl
    liedar behavioral judge --judge grader.jsonl --human human.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from liedar._util.atomic import write_json_atomic

MODEL_INSTRUMENTS = {
    "gap": "sandbagging gap: benign vs dangerous-capability-evaluation framing on the MCQ bank (paired)",
    "noise": "weight-noise elicitation (Tice et al. 2025): honest vs prompted sandbagger (transformers only)",
    "sycophancy": "sycophancy flip rate under user pressure, conditioned on the user being wrong",
    "negation": "negation consistency P(yes|Q)+P(yes|not Q), neutral vs honesty-costly claims",
    "honesty": "belief vs assertion (MASK-style): honesty and truthfulness rates under pressure",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    for name, help_text in MODEL_INSTRUMENTS.items():
        p = subparsers.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--model", default="smollm2-135m", help="model name or path (default smollm2-135m)")
        p.add_argument(
            "--backend",
            default="transformers",
            choices=("transformers", "llamacpp"),
            help="model backend (default transformers; noise needs transformers)",
        )
        p.add_argument("--limit", type=int, default=None, help="use only the first N items (quick runs)")
        p.add_argument("--threads", type=int, default=None, help="CPU threads for the model (default 2)")
        _common(p)
        if name == "noise":
            p.add_argument(
                "--sigmas",
                default="0,0.0005,0.001,0.002,0.004,0.008",
                help="comma-separated noise standard deviations (0 = baseline is always included)",
            )
            p.add_argument("--seeds", type=int, default=3, help="noise seeds per level (default 3)")
            p.add_argument(
                "--protocol",
                default="zero_shot_letter",
                help="elicitation protocol scoring every level (default zero_shot_letter; e.g. cloze_norm)",
            )
        if name == "gap":
            p.add_argument(
                "--protocols",
                default=None,
                help="comma-separated elicitation protocols for the ceiling (default all: zero_shot_letter,"
                "k_shot_letter,cloze_sum,cloze_norm,permutation_letter); chosen on a selection split",
            )
            p.add_argument("--shots", type=int, default=3, help="worked examples for k_shot_letter (default 3)")
            p.add_argument("--seed", type=int, default=0, help="seed of the selection/evaluation split and shots")
        if name == "honesty":
            p.add_argument(
                "--evade-margin",
                type=float,
                default=0.05,
                help="|P(yes)-0.5| below this counts as an evasion (default 0.05)",
            )
        p.set_defaults(func=run, instrument_name=name)
    ep = subparsers.add_parser(
        "episodes",
        help="strategic-deception episode rates from a JSONL file",
        description="Score episode records against the built-in scenario rubrics.",
    )
    ep.add_argument(
        "--episodes", type=Path, required=True, help='JSONL: {"episode_id", "scenario", "action", "followup"} per line'
    )
    _common(ep)
    ep.set_defaults(func=run, instrument_name="episodes")
    jp = subparsers.add_parser(
        "judge",
        help="grader vs human labels: Cohen's kappa and raw agreement",
        description="Validate an automatic grader against trusted human labels.",
    )
    jp.add_argument("--judge", type=Path, required=True, help='grader labels: JSONL {"id", "label"} or CSV id,label')
    jp.add_argument("--human", type=Path, required=True, help="human labels, same format and the same ids")
    jp.add_argument("--labels", default=None, help="comma-separated allowed labels (default: any)")
    _common(jp)
    jp.set_defaults(func=run, instrument_name="judge")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--interval",
        default="clopper-pearson",
        choices=("clopper-pearson", "wilson"),
        help="interval for rates (default clopper-pearson: never below nominal coverage)",
    )
    p.add_argument("--output", type=Path, help="write the result (and per-item records) as JSON here")


def run(args: argparse.Namespace) -> int:
    name = args.instrument_name
    records: list[Any] = []
    meta: dict[str, Any] = {"instrument": name}
    if name == "episodes":
        from liedar.behavioral.episodes import load_episodes, score_episodes
        from liedar.behavioral.items.episodes import RUBRICS

        result = score_episodes(load_episodes(args.episodes), RUBRICS, interval=args.interval)
        meta["episodes_file"] = str(args.episodes)
    elif name == "judge":
        from liedar.behavioral.judges import load_labels, validate_judge

        allowed = [s.strip() for s in args.labels.split(",")] if args.labels else None
        result = validate_judge(
            load_labels(args.judge), load_labels(args.human), allowed=allowed, interval=args.interval
        )
        meta.update(judge_file=str(args.judge), human_file=str(args.human))
    else:
        result, records = _run_model_instrument(args)
        meta.update(model=args.model, backend=args.backend)
    _print(result.to_dict())
    if args.output:
        write_json_atomic(
            args.output,
            {
                **meta,
                "result": result.to_dict(),
                "records": [r if isinstance(r, dict) else r.to_dict() for r in records],
            },
        )
        print(f"wrote {args.output}")
    return 0


def _run_model_instrument(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    from liedar import models
    from liedar.errors import InputError

    if args.limit is not None and args.limit < 1:
        raise InputError(f"--limit {args.limit}: give at least 1 item")
    backend = models.load(args.model, backend=args.backend, n_threads=args.threads)
    # MCQ banks are ordered by topic: spread a limited run across them. The claim banks
    # alternate truth values and suggestions, so their prefixes are the balanced subsets.
    lim: Callable[[list], list] = (lambda xs: _spread(xs, args.limit)) if args.limit else (lambda xs: xs)
    prefix: Callable[[list], list] = (lambda xs: xs[: args.limit]) if args.limit else (lambda xs: xs)
    name = args.instrument_name
    if name == "gap":
        from liedar.behavioral.items.mcq import load_mcq_bank
        from liedar.behavioral.runners.elicitation import DEFAULT_PROTOCOLS
        from liedar.behavioral.runners.sandbagging import run_sandbagging

        protocols = [x.strip() for x in args.protocols.split(",") if x.strip()] if args.protocols else DEFAULT_PROTOCOLS
        return run_sandbagging(
            backend,
            lim(load_mcq_bank()),
            protocols=protocols,
            k=args.shots,
            seed=args.seed,
            interval=args.interval,
            progress=True,
        ), []
    if name == "noise":
        from liedar.behavioral.items.mcq import load_mcq_bank
        from liedar.behavioral.runners.noise import run_noise

        try:
            sigmas = [float(s) for s in args.sigmas.split(",") if s.strip()]
        except ValueError:
            raise InputError(f"--sigmas {args.sigmas!r}: give comma-separated numbers, e.g. 0,0.001,0.002") from None
        if args.seeds < 1:
            raise InputError(f"--seeds {args.seeds}: give at least 1 seed")
        return run_noise(
            backend,
            lim(load_mcq_bank()),
            sigmas=sigmas,
            seeds=range(args.seeds),
            interval=args.interval,
            progress=True,
            protocol=args.protocol,
        )
    if name == "sycophancy":
        from liedar.behavioral.items.sycophancy import sycophancy_items
        from liedar.behavioral.runners.sycophancy import run_sycophancy

        return run_sycophancy(backend, prefix(sycophancy_items()), interval=args.interval, progress=True)
    if name == "negation":
        from liedar.behavioral.items.claims import negation_pairs
        from liedar.behavioral.runners.negation import run_negation

        pairs = negation_pairs()
        if args.limit:  # keep both groups: take the first N of each
            pairs = [p for g in ("neutral", "costly") for p in [q for q in pairs if q.group == g][: args.limit]]
        return run_negation(backend, pairs, interval=args.interval, progress=True)
    from liedar.behavioral.items.beliefs import belief_items
    from liedar.behavioral.runners.honesty import run_honesty

    return run_honesty(
        backend, prefix(belief_items()), evade_margin=args.evade_margin, interval=args.interval, progress=True
    )


def _spread(items: list, n: int) -> list:
    """``n`` items at evenly spaced positions of a topic-ordered bank."""
    if n >= len(items):
        return list(items)
    return [items[(i * len(items)) // n] for i in range(n)]


def _is_estimate(d: Any) -> bool:
    return isinstance(d, dict) and {"value", "lo", "hi", "n", "method", "kind"} <= set(d)


def _fmt_estimate(d: dict) -> str:
    line = f"{d['value']:.3f} [{d['lo']:.3f}, {d['hi']:.3f}]  n={d['n']}  {d['kind']}  ({d['method']})"
    return f"{line} — {d['note']}" if d.get("note") else line


def _print(d: dict, indent: str = "") -> None:
    """Estimates first (one per line), then tests, then the protocol, reading and warnings."""
    for key, v in d.items():
        if _is_estimate(v):
            print(f"{indent}{key:22s} {_fmt_estimate(v)}")
        elif isinstance(v, dict) and {"statistic", "p_value", "method"} <= set(v):
            print(f"{indent}{key:22s} {v['method']}: statistic={v['statistic']:.3f}, p={v['p_value']:.4g}")
        elif isinstance(v, dict) and any(_is_estimate(x) or isinstance(x, (dict, list)) for x in v.values()):
            if key in ("extra", "by_scenario"):
                continue
            print(f"{indent}{key}:")
            _print(v, indent + "  ")
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            print(f"{indent}{key}:")
            for x in v:
                label = x.get("group", x.get("sigma", ""))
                print(f"{indent}  - {label}")
                _print(x, indent + "    ")
    for key in ("protocol", "reading"):
        if d.get(key):
            print(f"{indent}{key}: {d[key]}")
    for w in d.get("warnings", []) or []:
        print(f"{indent}warning: {w}")
