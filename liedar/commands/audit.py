"""`liedar audit`: one verdict per model from every detector, read against a trusted reference.

``--model M`` (once or more) audits models as a user would audit an unknown one: default
prompts, no trigger, no card; each detector's effect is read against the reference model's
(``--reference``, default the base model an organism names). ``--zoo NAME`` audits a half of
the audit zoo blind and scores the verdicts against the zoo's truth. The decision rule is
the committed ``liedar/audit/rules/default.json`` (or ``--rule FILE`` whose sha256 is pinned).
Writes OUTPUT/audit.json and the Audit section as a page (OUTPUT/report/index.html).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from liedar.commands.args import (
    add_output_argument,
    add_seed_argument,
    add_workers_argument,
    input_file,
    output_dir,
    positive_int,
)


def register(subparsers: "argparse._SubParsersAction") -> None:
    p = subparsers.add_parser(
        "audit",
        help="one verdict per model (sandbagging / hidden capability / sycophancy / lying / clean / cannot tell)",
        description="Run the detectors on each model as on an unknown model, read each against a reference "
        "model of the same family, and give one verdict per model under the committed decision rule, with the "
        "evidence rows behind it. --zoo audits a half of the audit zoo blind and scores the verdicts.",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--model",
        dest="models",
        action="append",
        metavar="MODEL",
        help="a model to audit: a card folder (zoo/audit/smollm2-135m/NAME), base:organism, a name or a path; repeat",
    )
    what.add_argument("--zoo", metavar="BASE", help="audit the zoo of this base model (zoo/audit/BASE/zoo.json)")
    p.add_argument(
        "--half", default="test", help="the zoo half to audit: dev, test, or a half the manifest adds (default test)"
    )
    p.add_argument(
        "--reference",
        metavar="MODEL",
        default=None,
        help="the trusted reference (default: the base model an organism's card or base:name names)",
    )
    p.add_argument(
        "--rule",
        type=input_file,
        default=None,
        metavar="FILE",
        help="a committed rule file (default: the shipped rule)",
    )
    p.add_argument("--quick", action="store_true", help="tiny sizes: every row reads 'too few to decide' (a smoke run)")
    p.add_argument("--threads", type=positive_int, default=None, help="CPU threads for the model (default 2)")
    p.add_argument(
        "--backend",
        default="transformers",
        choices=("transformers", "llamacpp"),
        help="the backend every model is read through (default transformers); llamacpp reads each prompt once "
        "across its options, and fine-tuning elicitation still trains through transformers",
    )
    add_output_argument(p, "results folder (default liedar-audit)", kind="dir", default=Path("liedar-audit"))
    p.add_argument(
        "--evidence",
        type=output_dir,
        default=None,
        metavar="DIR",
        help="keep each model's evidence here (default: the liedar cache); a folder that outlives the cache, so a "
        "long zoo audit continues where it stopped",
    )
    add_seed_argument(p)
    add_workers_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from liedar.audit.run import AuditConfig, audit, summary_lines
    from liedar.core._util.workers import default_workers
    from liedar.report.audit import write_audit_page

    config = AuditConfig(
        models=tuple(args.models or ()),
        zoo=args.zoo,
        half=args.half,
        reference=args.reference,
        rule=args.rule,
        output=args.output,
        quick=args.quick,
        seed=args.seed,
        threads=args.threads,
        workers=args.workers or default_workers(),
        evidence_cache=args.evidence,
        backend=args.backend,
    )
    results, path = audit(config)
    for line in summary_lines(results):
        print(line)
    page = write_audit_page(results, Path(args.output) / "report")
    print(f"liedar audit finished in {results['seconds']:.0f} s; results: {path}; page: {page['html']}")
    return 0
