"""Plain-text tables of a menu study (the revealed-preference instrument), for the command line."""

from __future__ import annotations

from typing import Any

from liedar.behavioral.items.menus import FRAMINGS, TIERS


def _cell(e: Any) -> str:
    return f"{e.value:.2f} [{e.lo:.2f},{e.hi:.2f}] n={e.n}"


def _table(out: list[str], title: str, table: dict[str, dict[str, Any]], columns: list[str]) -> None:
    out.append(f"\n{title}")
    width = 26
    out.append("scenario".ljust(20) + "".join(c[: width - 1].ljust(width) for c in columns))
    for row, cells in table.items():
        out.append(row.ljust(20) + "".join((_cell(cells[c]) if c in cells else "-").ljust(width) for c in columns))


def study_tables(result: Any) -> str:
    """The study's tables: SARP by scenario × framing and × tier, IIA reversals, Houtman-Maks,
    RUM and mixed menus (stochastic mode), parse-fails; then the run beside the published
    gpt-4o-mini study (`liedar.behavioral.menus_published`)."""
    out: list[str] = []
    d = result
    out.append(
        f"model {d.model} · mode {d.mode} · {len(d.configs)} configurations × 15 menus"
        + (f" · K={d.samples} at T={d.temperature}" if d.mode == "stochastic" else "")
        + (f" · exact law at T={d.temperature}" if d.mode == "exact" else "")
    )
    out.append(f"SARP pass rate: {d.sarp_pass()}")
    out.append(f"SARP pass rate counting parse-fails as revealed: {d.sarp_pass(True)}")
    framings = [f for f in FRAMINGS if any(c.framing == f for c in d.configs)]
    tiers = [t for t in TIERS if any(c.tier == t for c in d.configs)]
    _table(out, "SARP pass rate by scenario × prompt framing (Wilson 95%)", d.sarp_by_scenario_framing(), framings)
    _table(out, "SARP pass rate by scenario × tier (Wilson 95%)", d.sarp_by_scenario_tier(), tiers)
    out.append("\nIIA reversals (pair winner loses to the pair loser in a larger menu), by scenario:")
    for k, v in d.iia_reversals_by_scenario().items():
        out.append(f"  {k:20s} {v}")
    from liedar.behavioral.runners.menus import mechanism_counts  # the runner imports these tables

    mechanisms = [mechanism_counts(c.log, c.scenario, c.presented) for c in d.configs if c.presented is not None]
    if mechanisms:
        totals = {m: sum(c[m] for c in mechanisms) for m in mechanisms[0]}
        out.append("IIA reversals by pattern (a reversal can fit several): "
                   + ", ".join(f"{m} {n}" for m, n in totals.items()))  # fmt: skip
    hm = [c.houtman_maks.n_drop for c in d.configs]
    out.append(f"Houtman-Maks (observations to drop to restore SARP): mean {sum(hm) / len(hm):.2f}, max {max(hm)}")
    if d.mode == "stochastic":
        out.append(f"RUM pass rate (bootstrap test, alpha={d.alpha}): {d.rum_pass()}")
        out.append(f"RUM exactly consistent (no noise allowance): {d.rum_exact_pass()}")
        out.append(f"Mixed-menu share (K samples not unanimous): {d.mixed_menu_share()}")
    if d.mode == "exact":
        out.append(
            f"RUM pass rate on the exact choice law at T={d.temperature} (no sampling noise): {d.rum_law_pass()}"
        )
        for key, name in (("framing", "prompt framing"), ("tier", "tier")):
            cells = d.rum_law_by(key)
            out.append(f"  by {name}: " + ", ".join(f"{k} {_cell(e)}" for k, e in cells.items()))
        gaps = [c.rum_law.l1_gap for c in d.configs if c.rum_law is not None]
        out.append(
            f"  L1 distance to the nearest mixture of rankings: mean {sum(gaps) / len(gaps):.3f}, max {max(gaps):.3f}"
        )
    out.append("Parse-fails by scenario: " + ", ".join(f"{k} {v}" for k, v in d.parse_fails_by_scenario().items()))
    for note in d.notes:
        out.append(f"note: {note}")
    from liedar.behavioral.menus_published import beside_published

    out += ["", beside_published(d.model, d.mode, [c.to_dict() for c in d.configs])]
    return "\n".join(out)
