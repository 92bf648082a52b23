"""The project speaks of what liedar does and what was measured, never of how it was made.

Docs, README, code comments and test names say which command measured a number and when;
a reader has no use for which working period or which tracker entry a change came from. This
test greps every text file in the tree (but .git and .venv) for such phrases. The patterns use
character classes and the examples are assembled from pieces, so this file does not match itself.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", ".venv", ".api", "build", "dist", "site", "__pycache__", ".wheels", ".pytest_cache", ".ruff_cache"}
TEXT = {".py", ".md", ".txt", ".toml", ".cfg", ".yml", ".yaml", ".sh", ".c", ".json", ""}

HISTORY = re.compile(
    r"\bs[e]ssions? \d"  # the word, then a number
    r"|\b(?:last|next|previous|earlier|that|this) s[e]ssion(?:'s)?\b(?! belongs)"
    r"|\bs[i]tting\b"
    r"|\biss[u]es? #?\d",  # a tracker entry by number
    re.IGNORECASE,
)
# A prompt shown to a model ("this session belongs to a hazardous-knowledge assessment") is
# data, not the project speaking of itself; the negative lookahead above keeps it.


def _files():
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts):
            continue
        if path.is_file() and path.suffix in TEXT and path.stat().st_size < 2_000_000:
            yield rel, path


def test_no_file_speaks_of_how_the_project_was_made():
    hits = []
    for rel, path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if HISTORY.search(line):
                hits.append(f"{rel}:{lineno}: {line.strip()[:120]}")
    assert not hits, "history words in the tree:\n" + "\n".join(hits)


def test_the_pattern_catches_what_it_should():
    sess, iss, sit = "sess" + "ion", "iss" + "ue", "sit" + "ting"
    bad_lines = (
        f"as of {sess} 7",
        f"{sess.title()}s 6-9 counted",
        f"last {sess}'s run",
        f"see {iss} 16",
        f"this {sit}",
    )
    for bad in bad_lines:
        assert HISTORY.search(bad), bad
    for fine in ("a Ray session", "once per session", "Notice: this session belongs to an assessment"):
        assert not HISTORY.search(fine), fine
