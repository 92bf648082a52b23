"""`liedar monitor`: watch a model's answer token by token with a trained lie probe.

Two forms share one command (``run`` is the default, so the subcommand can be left out):

    liedar monitor --model smollm2-135m --probe probe.npz "Was the car in an accident?"
    liedar monitor run --model smollm2-135m --probe probe.npz --jsonl tokens.jsonl "..."
    liedar monitor calibrate --model smollm2-135m --probe probe.npz \\
        --control honest.jsonl --fpr 0.01 --output threshold.json
    liedar monitor audit --model smollm2-135m --probe probe.npz \\
        --transcripts recorded.jsonl --threshold threshold.json --output scores.jsonl

``run`` prints the generated text with flagged sentences marked (red on a terminal,
``[FLAGGED score] ... [/FLAGGED]`` otherwise) and a summary line; ``--jsonl`` writes one
JSON record per generated token. ``calibrate`` scores honest control transcripts and
picks the threshold for a target false-positive rate; pass its output file to
``run --threshold`` or ``audit --threshold``. ``audit`` scores recorded conversations
offline (same file format as the control file; labels optional) and reports how many were
flagged; with honest and deceptive labels it also reports the false-positive rate, the
recall and the AUROC, each with an interval.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from liedar.commands.args import (
    OneLineParser,
    add_model_arguments,
    add_output_argument,
    add_seed_argument,
    input_file,
    nonnegative_float,
    open_unit_interval,
    output_file,
    positive_int,
    refuse_overwrite,
    usage_error,
)
from liedar.core._util.atomic import AtomicLines, write_json_atomic

SUBCOMMANDS = ("run", "calibrate", "audit")
_RED, _RESET = "\033[1;31m", "\033[0m"


def with_default_subcommand(argv: list[str]) -> list[str]:
    """``liedar monitor [options] PROMPT`` means ``liedar monitor run [options] PROMPT``.

    Applied by `liedar.cli.main` to the raw arguments, so no argparse internals are patched.
    """
    if len(argv) >= 2 and argv[0] == "monitor" and argv[1] not in (*SUBCOMMANDS, "-h", "--help"):
        return ["monitor", "run", *argv[1:]]
    return argv


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "monitor",
        help="inline honesty monitor: score each generated token with a lie probe",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="monitor_command", metavar="{run,calibrate,audit}", parser_class=OneLineParser)

    run_p = sub.add_parser("run", help="generate a response and mark flagged sentences (default)")
    _common(run_p)
    run_p.add_argument("prompt", help="the user's message (rendered with the model's chat template)")
    run_p.add_argument("--raw", action="store_true", help="continue PROMPT as plain text, no chat template")
    run_p.add_argument("--max-tokens", type=positive_int, default=64, help="tokens to generate (default 64)")
    run_p.add_argument(
        "--temperature", type=nonnegative_float, default=0.0, help="sampling temperature; 0 = greedy (default)"
    )
    add_seed_argument(run_p, "sampling (used only when --temperature > 0)")
    run_p.add_argument(
        "--threshold",
        default=None,
        type=threshold_value,
        help="flag above this score: a number or a JSON file from `liedar monitor calibrate` "
        "(default: the probe's stored threshold, else 0)",
    )
    run_p.add_argument("--jsonl", type=output_file, help="write one JSON record per generated token to this file")
    add_output_argument(run_p, "write the whole result (tokens, sentences, score) as JSON")
    run_p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour flagged sentences (default: on a tty)",
    )
    run_p.set_defaults(func=run)

    cal_p = sub.add_parser("calibrate", help="pick the threshold for a target false-positive rate on honest texts")
    _common(cal_p)
    cal_p.add_argument(
        "--control",
        type=input_file,
        required=True,
        help="JSONL of honest transcripts: {prompt, response} or {dialogue: [...]} per line, optional label",
    )
    cal_p.add_argument("--fpr", type=open_unit_interval, default=0.01, help="target false-positive rate (default 0.01)")
    cal_p.add_argument(
        "--held-out",
        type=open_unit_interval,
        default=0.5,
        help="fraction held out to measure the FPR (default 0.5)",
    )
    add_seed_argument(cal_p, "the calibration/held-out split")
    add_output_argument(cal_p, "JSON file for the threshold and its evidence", required=True)
    cal_p.set_defaults(func=calibrate)

    audit_p = sub.add_parser("audit", help="score recorded transcripts offline (optionally labelled)")
    _common(audit_p)
    audit_p.add_argument(
        "--transcripts",
        type=input_file,
        required=True,
        help="JSONL: {prompt, response} or {dialogue: [...]} per line; optional label (honest/deceptive) and id",
    )
    audit_p.add_argument(
        "--threshold",
        default=None,
        type=threshold_value,
        help="flag above this score: a number or a `liedar monitor calibrate` file (default: the probe's, else 0)",
    )
    add_output_argument(audit_p, "write one JSON record per transcript to this JSONL file")
    audit_p.set_defaults(func=audit)
    parser.set_defaults(func=lambda args: usage_error(parser, sub.choices))


def _common(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p, default=None, hidden_states_for=p.prog.removeprefix("liedar "))
    p.add_argument("--probe", type=input_file, required=True, help="probe file saved by `liedar probe train` (.npz)")
    p.add_argument(
        "--aggregate", choices=("mean", "max", "last"), default="mean", help="pool token scores (default mean)"
    )


def _load_monitor(args: argparse.Namespace, threshold: Optional[float] = None):
    from liedar import models
    from liedar.probes.io import load_probe
    from liedar.probes.monitor import HonestyMonitor

    _, meta = load_probe(args.probe)  # a damaged probe file is refused before seconds go into loading the model
    _refuse_other_builtin(args.probe, meta.model_name, args.model)
    backend = models.load(args.model, backend=args.backend, n_threads=args.threads)
    return HonestyMonitor.from_file(backend, args.probe, aggregate=args.aggregate, threshold=threshold)


def _refuse_other_builtin(probe: Path, trained_on: str, model: str) -> None:
    """A probe for one built-in model given with another built-in is refused before the
    model loads (the fingerprint check after loading would catch it too, but only after
    the backend's own log lines and seconds of loading)."""
    from liedar.core.errors import IncompatibleError
    from liedar.models.registry import BUILTIN

    base = str(model).split(":", 1)[0]  # an organism (smollm2-135m:NAME) keeps its base model's probes
    if trained_on in BUILTIN and base in BUILTIN and base != trained_on:
        raise IncompatibleError(
            f"{probe} was trained on {trained_on}, not {base}: give --model {trained_on}, or train a probe "
            f"for {base} with `liedar probe train --model {base}`"
        )


class ThresholdValue(float):
    """A --threshold value: a finite number, or the threshold read from a calibration file
    (``source`` keeps the file, whose aggregate and control hash are checked later)."""

    source: Optional[Path] = None
    aggregate: Optional[str] = None


def threshold_value(text: str) -> ThresholdValue:
    """Parse --threshold at parse time: a finite number or a `liedar monitor calibrate` file."""
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        if not math.isfinite(number):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; give e.g. 1.5 or threshold.json")
        return ThresholdValue(number)
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number nor a calibration file (e.g. threshold.json)")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
        value = float(data["threshold"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise argparse.ArgumentTypeError(
            f"{path} is not a `liedar monitor calibrate` output (no numeric 'threshold')"
        ) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{path}: its threshold is not finite; re-run `liedar monitor calibrate`")
    out = ThresholdValue(value)
    out.source, out.aggregate = path, data.get("aggregate") if isinstance(data, dict) else None
    return out


def _threshold_arg(value: Optional[ThresholdValue], aggregate: str) -> Optional[float]:
    from liedar.core.errors import InputError

    if value is None:
        return None
    if value.source is not None and value.aggregate not in (None, aggregate):
        raise InputError(
            f"{value.source} was calibrated for --aggregate {value.aggregate}, not {aggregate}: use the same aggregate"
        )
    return float(value)


def run(args: argparse.Namespace) -> int:
    from liedar.core.errors import InputError
    from liedar.models.chat import Dialogue, Message

    refuse_overwrite([args.jsonl, args.output], [args.probe])
    if args.jsonl is not None and args.output is not None and args.jsonl.resolve() == args.output.resolve():
        raise InputError(f"--jsonl and --output are the same file ({args.output}); give two different files")
    if not args.prompt.strip():
        raise InputError("the prompt is empty: give the text the model should respond to")
    monitor = _load_monitor(args, _threshold_arg(args.threshold, args.aggregate))
    prompt = args.prompt if args.raw else Dialogue.of(Message("user", args.prompt))
    jsonl = AtomicLines(args.jsonl) if args.jsonl else None
    try:
        result = monitor.generate(
            prompt,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            seed=args.seed,
            on_score=(lambda t: jsonl.write(json.dumps(t.to_dict()))) if jsonl else None,
        )
    except BaseException:
        if jsonl:
            jsonl.abort()
        raise
    if jsonl:
        jsonl.commit()
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    print(render_marked(result, colour))
    flag = "FLAGGED" if result.flagged else "not flagged"
    print(
        f"response score ({result.aggregate} over {len(result.tokens)} tokens, layer {result.layer}): "
        f"{result.score:.3f}; threshold {result.threshold:.3f}; {flag}; "
        f"{sum(s.flagged for s in result.sentences)}/{len(result.sentences)} sentences flagged"
    )
    if args.output:
        write_json_atomic(args.output, result.to_dict())
    return 0


def render_marked(result: Any, colour: bool) -> str:
    """The response text with flagged sentences marked (ANSI red or plain brackets)."""
    parts = []
    for s in result.sentences:
        if not s.flagged:
            parts.append(s.text)
        elif colour:
            parts.append(f"{_RED}{s.text}{_RESET}")
        else:
            lead = s.text[: len(s.text) - len(s.text.lstrip())]
            parts.append(f"{lead}[FLAGGED {s.score:.2f}] {s.text.strip()} [/FLAGGED]")
    return "".join(parts)


def _score_recorded(monitor: Any, items: Sequence[Any], desc: str) -> list[Any]:
    """MonitorResults of recorded transcripts (prompt + response, or a dialogue's detect turns)."""
    from liedar.core._util.progress import progress

    return [
        monitor.score_dialogue(t.prompt) if t.response is None else monitor.score_transcript(t.prompt, t.response)
        for t in progress(items, desc=desc, unit="transcript", leave=False)
    ]


def calibrate(args: argparse.Namespace) -> int:
    from liedar.models.storage import sha256_file
    from liedar.probes.monitor_calibration import calibrate_threshold, load_control_file

    refuse_overwrite([args.output], [args.control, args.probe])
    items = load_control_file(args.control)  # fails before loading a model when no honest item
    monitor = _load_monitor(args)
    scores = [r.score for r in _score_recorded(monitor, items, "monitor calibrate: scoring controls")]
    cal = calibrate_threshold(scores, args.fpr, held_out_fraction=args.held_out, seed=args.seed)
    out = {
        **cal.to_dict(),
        "aggregate": args.aggregate,
        "model": args.model,
        "backend": args.backend,
        "probe": str(args.probe),
        "layer": monitor.layer,
        "control": str(args.control),
        "control_sha256": sha256_file(Path(args.control)),
        "scores": scores,
    }
    write_json_atomic(args.output, out)
    est = cal.achieved_fpr
    if cal.note:
        print(f"note: {cal.note}", file=sys.stderr)
    print(
        f"threshold {cal.threshold:.4f} ({args.aggregate} score) for target FPR {args.fpr}: "
        f"held-out FPR {est.value:.3f} [{est.lo:.3f}, {est.hi:.3f}] "
        f"(n={est.n} held out, {cal.n_calibration} for calibration, {est.method}); written to {args.output}"
    )
    return 0


def audit(args: argparse.Namespace) -> int:
    from liedar.core.errors import InputError
    from liedar.core.stats import clopper_pearson
    from liedar.probes.evaluation import auroc
    from liedar.probes.monitor_calibration import load_transcripts

    refuse_overwrite([args.output], [args.transcripts, args.probe, getattr(args.threshold, "source", None)])
    items = load_transcripts(args.transcripts)  # all input errors before the model loads
    if not items:
        raise InputError(f"{args.transcripts} holds no transcripts: write one JSON object per line")
    monitor = _load_monitor(args, _threshold_arg(args.threshold, args.aggregate))
    results = _score_recorded(monitor, items, "monitor audit: scoring transcripts")
    if args.output:
        lines = AtomicLines(args.output)
        for item, res in zip(items, results):
            lines.write(
                json.dumps(
                    {
                        "id": item.id,
                        "label": item.label,
                        "score": res.score,
                        "flagged": res.flagged,
                        "aggregate": res.aggregate,
                        "threshold": res.threshold,
                        "layer": res.layer,
                        "n_tokens": len(res.tokens),
                        "flagged_sentences": [s.text.strip() for s in res.sentences if s.flagged],
                    }
                )
            )
        lines.commit()
    flags = [r.flagged for r in results]
    rate = clopper_pearson(sum(flags), len(flags))
    print(
        f"{sum(flags)}/{len(flags)} transcripts flagged ({rate.value:.3f} [{rate.lo:.3f}, {rate.hi:.3f}], "
        f"{args.aggregate} score > {monitor.threshold:.3f}, layer {monitor.layer})"
    )
    by_label = {lab: [r for t, r in zip(items, results) if t.label == lab] for lab in ("honest", "deceptive")}
    for lab, what in (("honest", "false-positive rate"), ("deceptive", "recall")):
        group = by_label[lab]
        if group:
            est = clopper_pearson(sum(r.flagged for r in group), len(group), kind="quality")
            print(f"{what} on {len(group)} {lab} transcripts: {est.value:.3f} [{est.lo:.3f}, {est.hi:.3f}]")
    if by_label["honest"] and by_label["deceptive"]:
        labelled = by_label["honest"] + by_label["deceptive"]
        y = [0] * len(by_label["honest"]) + [1] * len(by_label["deceptive"])
        auc = auroc([r.score for r in labelled], y)
        print(f"AUROC honest vs deceptive: {auc.value:.3f} [{auc.lo:.3f}, {auc.hi:.3f}] (DeLong, n={auc.n})")
    if _calibrated_on(getattr(args.threshold, "source", None), args.transcripts):
        print(
            "note: the threshold was calibrated on this same file, so the rates above understate false "
            "positives; audit transcripts the calibration never saw"
        )
    unlabelled = sum(t.label is None for t in items)
    if unlabelled:
        print(f"{unlabelled} transcripts carry no label (counted in the flagged rate only)")
    return 0


def _calibrated_on(threshold_file: Optional[Path], transcripts: Path) -> bool:
    """Whether a `calibrate` output named by --threshold was computed from `transcripts`."""
    from liedar.models.storage import sha256_file

    if threshold_file is None or not Path(threshold_file).is_file():
        return False
    try:
        digest = json.loads(Path(threshold_file).read_text(encoding="utf-8")).get("control_sha256")
    except (ValueError, AttributeError):
        return False
    return digest is not None and digest == sha256_file(Path(transcripts))
