"""Command-line options for served models, declared once for every subcommand that takes ``--model``.

Why here and not in each command: ``--base-url``, ``--api-key-env``, ``--concurrency``,
``--rate-limit``, ``--timeout``, ``--served-cache`` mean the same thing wherever a served
model can stand in for a local one. A command adds them with `add_served_model_arguments`
and turns ``args`` into a backend with `served_backend_from_args` (None when ``--model`` is
not an ``openai:`` spec, so the caller loads its local model as before). Bad values are
refused while parsing (argparse ``type=``), before any request is sent.
"""

from __future__ import annotations

import argparse
from typing import Any, Optional

from liedar.core._util.argtypes import nonnegative_int, positive_float, positive_int
from liedar.core.errors import InputError
from liedar.models.served import APIS, SCORINGS, ServedBackend, is_served_spec, load_served

# options that mean something only for a served model (None unless the user typed them)
SERVED_ONLY = (("--base-url", "base_url"), ("--api-key-env", "api_key_env"), ("--template-from", "template_from"),
               ("--served-cache", "served_cache"), ("--rate-limit", "rate_limit"))  # fmt: skip


def add_served_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The served-model options (used only when ``--model openai:MODEL``)."""
    g = parser.add_argument_group("served models (--model openai:MODEL)")
    g.add_argument(
        "--base-url", default=None, help="the server's OpenAI-compatible root, e.g. http://127.0.0.1:8000/v1"
    )
    g.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the API key (default: OPENAI_API_KEY if set; local servers need none). "
        "The key is never written to results, caches or logs",
    )
    g.add_argument("--concurrency", type=positive_int, default=4, help="requests in flight at once (default 4)")
    g.add_argument("--rate-limit", type=positive_float, default=None, help="at most this many requests per second")
    g.add_argument("--timeout", type=positive_float, default=60.0, help="seconds per request before a retry (60)")
    g.add_argument(
        "--max-retries", type=nonnegative_int, default=3, help="retries with backoff on 429/5xx/timeouts (3)"
    )
    g.add_argument(
        "--served-cache", default=None, metavar="DIR", help="response cache + journal (default: $LIEDAR_CACHE/served)"
    )
    g.add_argument("--api", choices=APIS, default="chat", help="chat (server applies its template) or completions")
    g.add_argument(
        "--template-from",
        default=None,
        metavar="MODEL",
        help="with --api completions: render prompts here with this local model's chat template (exact-text parity)",
    )
    g.add_argument(
        "--scoring",
        choices=SCORINGS,
        default="auto",
        help="option scoring: logprobs, parse, or auto (logprobs, falling back to generation + the answer parser)",
    )


def served_backend_from_args(args: argparse.Namespace, *, progress: bool = False) -> Optional[ServedBackend]:
    """A `ServedBackend` when ``args.model`` is ``openai:MODEL``, else None.

    A served-only option given with a local model is refused rather than ignored: a user who
    typed ``--base-url`` believes a server answers, and a silent local run would report the
    local model's numbers under that belief.
    """
    model = str(getattr(args, "model", "") or "")
    if not is_served_spec(model):
        given = [flag for flag, dest in SERVED_ONLY if getattr(args, dest, None) is not None]
        if given:
            raise InputError(
                f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to served models only, but --model "
                f"{model} is a local model; write --model openai:NAME to ask a server, or drop {', '.join(given)}"
            )
        return None
    kwargs: dict[str, Any] = {
        "api_key_env": getattr(args, "api_key_env", None),
        "concurrency": getattr(args, "concurrency", None),
        "rate_limit": getattr(args, "rate_limit", None),
        "timeout": getattr(args, "timeout", None),
        "max_retries": getattr(args, "max_retries", None),
        "cache_dir": getattr(args, "served_cache", None),
        "api": getattr(args, "api", None),
        "scoring": getattr(args, "scoring", None),
        "progress": progress,
    }
    return load_served(
        model, base_url=getattr(args, "base_url", None), template_from=getattr(args, "template_from", None), **kwargs
    )
