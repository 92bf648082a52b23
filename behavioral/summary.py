"""Plain-text summary of an instrument's result, for the command line.

Why generic: every result's ``to_dict()`` holds Estimates (value, lo, hi, n, method, kind),
tests (statistic, p_value, method), a protocol, a reading and caveats; printing them the
same way for every instrument keeps the CLI honest (an interval and n on every line).
"""

from __future__ import annotations

from typing import Any


def is_estimate(d: Any) -> bool:
    return isinstance(d, dict) and {"value", "lo", "hi", "n", "method", "kind"} <= set(d)


def format_estimate(d: dict) -> str:
    if d["value"] is None:
        return f"not computable  n={d['n']}  {d['kind']}" + (f" — {d['note']}" if d.get("note") else "")
    line = f"{d['value']:.3f} [{d['lo']:.3f}, {d['hi']:.3f}]  n={d['n']}  {d['kind']}  ({d['method']})"
    return f"{line} — {d['note']}" if d.get("note") else line


def _lines(d: dict, indent: str) -> list[str]:
    out: list[str] = []
    for key, v in d.items():
        if is_estimate(v):
            out.append(f"{indent}{key:22s} {format_estimate(v)}")
        elif isinstance(v, dict) and {"statistic", "p_value", "method"} <= set(v):
            stat = "n/a" if v["statistic"] is None else f"{v['statistic']:.3f}"
            p = "n/a" if v["p_value"] is None else f"{v['p_value']:.4g}"
            out.append(f"{indent}{key:22s} {v['method']}: statistic={stat}, p={p}")
        elif isinstance(v, dict) and any(is_estimate(x) or isinstance(x, (dict, list)) for x in v.values()):
            if key in ("extra", "by_scenario"):
                continue
            out.append(f"{indent}{key}:")
            out += _lines(v, indent + "  ")
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v) and key != "warnings":
            if not any(is_estimate(y) for x in v for y in x.values()):
                continue
            out.append(f"{indent}{key}:")
            for x in v:
                out.append(f"{indent}  - {x.get('group', x.get('sigma', ''))}")
                out += _lines(x, indent + "    ")
    for key in ("protocol", "reading"):
        if d.get(key):
            out.append(f"{indent}{key}: {d[key]}")
    for w in d.get("warnings", []) or []:
        out.append(f"{indent}warning: {w['text'] if isinstance(w, dict) else w}")
    return out


def format_result(d: dict) -> str:
    """Estimates first (one per line), then tests, then the protocol, reading and warnings."""
    return "\n".join(_lines(d, ""))
