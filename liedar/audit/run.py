"""`liedar audit`: models (or a zoo half, blinded) through the detectors, verdicts, scoring, results JSON.

Why the order of work: everything a user can get wrong (the rule file and its hash, an
unknown model, reference or zoo, a zoo member whose card disagrees with its adapter) is
checked before any model is loaded, so bad input costs one line and exit 2, never minutes.
Then each distinct model (the reference included, once) gets its evidence from the cache or
from the detectors, with one progress line per unit and the seconds per model; then each
model's verdict is read against its reference under the rule; a zoo audit then joins the
blind ids back to names and scores the verdicts against the manifest's truth.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

from liedar import __version__
from liedar.audit.evidence import (
    AUDIT_DTYPE,
    SKIPPED,
    ModelEvidence,
    audit_sizes,
    audit_units,
    evidence_key,
    fallback_formats,
    incapable_preferred,
    measure,
    unread_on_references,
)
from liedar.audit.evidence import read_cached as read_evidence
from liedar.audit.evidence import write_cached as write_evidence
from liedar.audit.rule import Rule, load_rule
from liedar.audit.rule2 import Rule2
from liedar.audit.verdict import decide
from liedar.audit.verdict2 import decide2
from liedar.audit.zoo import Zoo, blind_ids, check_built_after, check_members, load_zoo, strength
from liedar.core._util.atomic import json_safe, write_json_atomic
from liedar.core._util.workers import WorkerPool
from liedar.core.errors import InputError
from liedar.models.backend import Backend
from liedar.models.cards import OrganismCard
from liedar.models.registry import weights_fingerprint

RESULTS_FORMAT = "liedar-audit-1"
RESULTS_FILE = "audit.json"


@dataclass
class Target:
    """One model to audit (or a reference), resolved before anything is loaded.

    Attributes
    ----------
    label : str
        What the user typed, or an opaque id in a blinded zoo audit.
    base : str or None
        The base model it is built on (an organism), None for a model given by itself.
    adapter_dir : Path or None
        The checked adapter to merge onto ``base`` (None: ``load_name`` is loaded as is).
    identity : dict
        Base fingerprint and adapter sha256: the evidence cache's key, never a name.
    """

    label: str
    load_name: str
    base: Optional[str]
    adapter_dir: Optional[Path]
    identity: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.identity.get('fingerprint', '')}+{self.identity.get('adapter_sha256', '')}"


def _card_target(label: str, folder: Path, card: Optional[OrganismCard] = None) -> Target:
    """The organism in ``folder``; ``card`` when its adapter was checked already (the zoo's cached check)."""
    from liedar.models.cards import check_adapter_matches, read_card

    if card is None:
        card = read_card(folder)
        check_adapter_matches(card)
    identity = {"fingerprint": card.base_fingerprint, "adapter_sha256": card.adapter_sha256}
    return Target(label, str(folder), card.base_name, card.adapter_dir, identity)


def resolve_target(text: str, label: Optional[str] = None) -> Target:
    """A model as the user named it: a card folder, a shipped ``base:name``, a built-in name or a path.

    Raises
    ------
    liedar.core.errors.InputError
        An unknown model, or a ``base:name`` that nothing ships (the line names what does).
    """
    from liedar.models.adapters import card_folder, split_name
    from liedar.models.cards import shipped_cards

    label = label or text
    folder = card_folder(text)
    if folder is not None:
        return _card_target(label, folder)
    parts = split_name(text)
    if parts is not None:
        base, name = parts
        found = [c for c in shipped_cards() if c.base_name == base and c.folder.name == name]
        if not found:
            known = sorted(f"{c.base_name}:{c.folder.name}" for c in shipped_cards())
            raise InputError(
                f"unknown model {text!r}: no organism {name!r} ships for {base} "
                f"(shipped: {', '.join(known) or 'none'}); give a card folder (e.g. zoo/audit/smollm2-135m/NAME) "
                "or a model name"
            )
        return _card_target(label, found[0].folder)
    return Target(label, text, None, None, {"fingerprint": weights_fingerprint(text), "adapter_sha256": ""})


@dataclass
class AuditConfig:
    models: tuple[str, ...] = ()
    zoo: Optional[str] = None
    half: str = "test"
    reference: Optional[str] = None
    rule: Optional[Path] = None
    output: Path = Path("liedar-audit")
    quick: bool = False
    seed: int = 0
    threads: Optional[int] = None
    sizes: Optional[dict[str, Any]] = None  # tests give their own
    progress: bool = True
    evidence_cache: Optional[Path] = None  # default: <liedar cache>/audit/evidence, shared by every run
    workers: int = 1  # one-thread processes the models (after the references) are measured on
    backend: str = "transformers"  # every model of one audit is read through the same backend


@dataclass
class Loaded:
    """The base models loaded so far through ``backend`` (one per base name), reused for every organism on them.

    Why two backends: every unit asks its questions through ``backend``; llama.cpp (each prompt
    read once across its options) is the faster one for a 1.5B model on a CPU. The units that
    fine-tune or copy the weights (``Unit.bare``: fine-tuning elicitation) need the torch
    weights, so under llama.cpp they get the same model through transformers: the reference
    and every audited model alike, so their paired rows still compare like with like."""

    threads: Optional[int]
    backend: str = "transformers"
    bases: dict[str, Backend] = field(default_factory=dict)

    def base(self, name: str) -> Backend:
        if name not in self.bases:
            self.bases[name] = _load(name, self.backend, self.threads)
        return self.bases[name]

    def loader(self, t: Target) -> Callable[[], Backend]:
        def load() -> Backend:
            if t.adapter_dir is None:
                return self.base(t.load_name)
            assert t.base is not None
            if self.backend == "llamacpp":  # runtime LoRA, applied in place: a model of its own
                from liedar.models.lora_gguf import attach_llamacpp

                return attach_llamacpp(_load(t.base, "llamacpp", self.threads), t.adapter_dir, name=t.label)
            from liedar.models.lora import apply_adapter

            return apply_adapter(self.base(t.base), t.adapter_dir, name=t.label)  # a merged copy

        return load

    def bare_loader(self, t: Target) -> Optional[Callable[[], Backend]]:
        """The model through transformers for the units that change or copy its weights; None
        when the audit's backend is transformers already (`loader` serves them).

        Why loaded afresh each time and never kept: a 1.5B model in float32 is 6 GB, and the
        fine-tuning unit holds it beside its own tuned copy. Keeping the base for later members
        and merging each member into a copy of it held three such models at once (peak RSS
        23.9 GB on a 24 GiB machine); a fresh base with the member merged in place holds two,
        at the cost of one load a model, seconds against the unit's minutes."""
        if self.backend == "transformers":
            return None

        def load() -> Backend:
            if t.adapter_dir is None:
                return _load(t.load_name, "transformers", self.threads)
            from liedar.models.lora import apply_adapter

            assert t.base is not None
            base = _load(t.base, "transformers", self.threads)
            return apply_adapter(base, t.adapter_dir, name=t.label, copy_model=False)

        return load


def _load(name: str, backend: str, threads: Optional[int]) -> Backend:
    """A base model; through llama.cpp with each prompt kept across its options (``reuse_prefix``:
    a cloze reads its prompt once instead of once an option; docs/capable.md).

    Why transformers always computes in float32 here: a model's evidence is keyed by its
    weights, not by the CPU it was measured on, and a paired row compares a member's evidence
    with the reference's, often measured on another machine. In bfloat16 (the default where the
    CPU has it natively) a member fine-tuned on an AVX-512 BF16 CPU would be compared with a
    reference fine-tuned in float32 on an AVX2 one. `evidence_key` names `AUDIT_DTYPE` when it
    is not float32."""
    from liedar.models import load

    options: dict[str, Any] = {"reuse_prefix": True} if backend == "llamacpp" else {"dtype": AUDIT_DTYPE}
    return load(name, backend=backend, n_threads=threads, **options)


def evidence_dir(config: AuditConfig) -> Path:
    """Where each model's evidence is kept (keyed by weights, sizes, seed and liedar's version): the
    liedar cache, so a dev-half and a test-half audit share the reference's and reruns are warm
    whatever their output folder."""
    if config.evidence_cache is not None:
        return Path(config.evidence_cache)
    from liedar.models.storage import cache_root

    return Path(cache_root()) / "audit" / "evidence"


def gather(
    targets: Sequence[Target],
    sizes: dict[str, Any],
    seed: int,
    folder: Path,
    loaded: Loaded,
    say: Callable[[str], None],
    progress: bool,
    rule: Optional[Union[Rule, Rule2]] = None,
    references: Sequence[Target] = (),
    pool: Optional[WorkerPool] = None,
) -> dict[str, ModelEvidence]:
    """Target key -> evidence, each distinct model measured once (or read from the cache).

    With a ``rule``, the references are measured first and in full; every other model skips a
    fallback format (yes/no after choice) when its preferred format is capable on it and on
    each reference (`liedar.audit.evidence.measure`). With a ``pool`` of more than one worker,
    the models after the references are measured on its processes, one model per process
    (each writes its evidence file as this process would)."""
    from liedar.core._util.progress import progress as bar

    units = audit_units()
    ref_keys = {r.key for r in references}
    # a format-2 rule reads every format the reference can answer: nothing is skipped as a fallback
    fallbacks = (
        fallback_formats([r.detectors for rows in rule.verdicts.values() for r in rows])
        if isinstance(rule, Rule)
        else {}
    )
    needed: frozenset[str] = frozenset()
    unread: frozenset[str] = frozenset()
    targets = sorted(targets, key=lambda t: t.key not in ref_keys)  # references first (a stable sort)
    out: dict[str, ModelEvidence] = {}
    distinct: list[Target] = []
    for t in targets:  # the first name of a model is the one progress shows (the reference, not a zoo id)
        if all(t.key != d.key for d in distinct):
            distinct.append(t)
    refs = [t for t in distinct if t.key in ref_keys]
    for t in bar(refs, desc="audit: references", unit="model", disable=not progress or not refs):
        # the references first and in this process: what they cannot answer decides what the others run
        key = evidence_key(t.identity, sizes, seed, units, {}, frozenset(), backend=loaded.backend)
        out[t.key] = ev = _evidence(
            t, key, sizes, seed, folder, loaded.loader(t), {}, frozenset(), say, progress, bare=loaded.bare_loader(t)
        )
        needed = needed | incapable_preferred(ev, fallbacks)
        say(f"{t.label}: {ev.seconds:.0f} s")
    if isinstance(rule, Rule2):  # a row whose reference is at chance reads incapable: not measured on the others
        unread = unread_on_references([out[t.key] for t in refs])
        if unread:
            say(f"not run on the audited models (every reference at chance there): {', '.join(sorted(unread))}")
    others = [t for t in distinct if t.key not in ref_keys]
    keys = {
        t.key: evidence_key(t.identity, sizes, seed, units, fallbacks, needed, unread, backend=loaded.backend)
        for t in others
    }
    todo: list[Target] = []
    for t in others:
        cached = read_evidence(folder, keys[t.key])
        if cached is not None:
            say(f"{t.label}: evidence from the cache (measured in {cached.seconds:.0f} s)")
            out[t.key] = cached
        else:
            todo.append(t)
    if pool is not None and pool.workers > 1 and len(todo) > 1:
        say(f"measuring {len(todo)} model(s) on {pool.workers} one-thread worker process(es) ...")
        futures = {
            t.key: pool.submit(
                _measure_piece, t, keys[t.key], sizes, seed, folder, fallbacks, needed, unread, loaded.backend
            )
            for t in todo
        }
        for t in bar(todo, desc="audit: models", unit="model", disable=not progress):
            out[t.key] = futures[t.key].result()
            say(f"{t.label}: {out[t.key].seconds:.0f} s")
    else:
        for t in bar(todo, desc="audit: models", unit="model", disable=not progress):
            out[t.key] = _evidence(
                t,
                keys[t.key],
                sizes,
                seed,
                folder,
                loaded.loader(t),
                fallbacks,
                needed,
                say,
                progress,
                unread,
                bare=loaded.bare_loader(t),
            )
    return out


def _evidence(
    t: Target,
    key: str,
    sizes: dict[str, Any],
    seed: int,
    folder: Path,
    load: Callable[[], Backend],
    skip: dict[str, tuple[str, ...]],
    need: frozenset[str],
    say: Callable[[str], None],
    progress: bool,
    unread: frozenset[str] = frozenset(),
    bare: Optional[Callable[[], Backend]] = None,
) -> ModelEvidence:
    """One model's evidence: read from the cache under ``key``, or measured and written there
    (``bare``: the model through transformers for the units that change its weights, when the
    audit reads it through llama.cpp)."""
    ev = read_evidence(folder, key)
    if ev is not None:
        say(f"{t.label}: evidence from the cache (measured in {ev.seconds:.0f} s)")
        return ev
    units = audit_units()
    say(f"{t.label}: running {len(units)} detector units ...")
    ev = measure(
        load,
        t.identity,
        sizes,
        seed,
        label=t.label,
        units=units,
        progress=progress,
        say=say,
        fallbacks=skip,
        needed=need,
        unread=unread,
        load_bare=bare,
    )
    write_evidence(folder, key, ev)
    return ev


# a worker process's base models, loaded once per process and backend (`_measure_piece`)
_WORKER_MODELS: dict[str, Loaded] = {}


def _measure_piece(
    t: Target,
    key: str,
    sizes: dict[str, Any],
    seed: int,
    folder: Path,
    skip: dict[str, tuple[str, ...]],
    need: frozenset[str],
    unread: frozenset[str] = frozenset(),
    backend: str = "transformers",
) -> ModelEvidence:
    """`_evidence` on a one-thread worker process (`liedar.pipeline.validate_pool.WorkerPool`)."""

    def say(line: str) -> None:
        print(f"   {line}", flush=True)

    loaded = _WORKER_MODELS.setdefault(backend, Loaded(threads=1, backend=backend))
    return _evidence(
        t, key, sizes, seed, folder, loaded.loader(t), skip, need, say, False, unread, bare=loaded.bare_loader(t)
    )


def _reference_for(t: Target, given: Optional[Target]) -> Target:
    if given is not None:
        return given
    if t.base is None:
        raise InputError(
            f"no reference for {t.label!r}: it names no base model; give --reference MODEL (a trusted model of the "
            "same family, e.g. --reference smollm2-135m)"
        )
    return resolve_target(t.base)


def _verdict_entry(t: Target, ref: Target, ev: dict[str, ModelEvidence], rule: Union[Rule, Rule2]) -> dict[str, Any]:
    v = decide2(rule, ev[t.key], ev[ref.key]) if isinstance(rule, Rule2) else decide(rule, ev[t.key], ev[ref.key])
    return {
        "model": t.label,
        "reference": ref.label,
        "identity": t.identity,
        "seconds": round(ev[t.key].seconds, 1),
        "cached": ev[t.key].cached,
        "verdict": v.to_dict(),
    }


def _header(config: AuditConfig, rule: Union[Rule, Rule2], sizes: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": RESULTS_FORMAT,
        "liedar_version": __version__,
        "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rule": {"path": rule.path, "sha256": rule.sha256, "status": rule.status, **rule.to_dict()},
        "sizes": json_safe(sizes),
        "seed": config.seed,
        "backend": config.backend,
        "skipped_units": SKIPPED,
    }


def check_rule_for_zoo(rule: Union[Rule, Rule2], zoo: Zoo) -> None:
    if isinstance(rule, Rule2):
        return  # a format-2 rule is checked against the members' build dates (`check_built_after`)
    pinned = zoo.pinned_rule
    if pinned is not None and pinned != rule.sha256:
        raise InputError(
            f"the rule {rule.path} (sha256 {rule.sha256[:16]}...) is not the one the {zoo.base} zoo is scored with "
            f"({pinned[:16]}..., zoo/audit/{zoo.base}/rule.sha256): use the committed rule"
        )


def audit(config: AuditConfig, say: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    """Run an audit (``config.models`` or ``config.zoo``); returns the results and where they were written.

    Raises
    ------
    liedar.core.errors.InputError
        Bad rule or hash, unknown model, reference or zoo, a member's card against its adapter
        (all before any model loads).
    """
    if bool(config.models) == bool(config.zoo):
        raise InputError("give --model MODEL (once or more) or --zoo NAME, not both and not neither")
    rule = load_rule(config.rule)
    sizes = config.sizes or audit_sizes(config.quick)
    if isinstance(rule, Rule2) and config.sizes is None and not config.quick:
        sizes.update(rule.sizes)  # the sizes were chosen for power and pinned with the rule
    t_start = time.perf_counter()
    loaded = Loaded(config.threads, config.backend)
    folder = evidence_dir(config)
    results = _header(config, rule, sizes)
    if config.zoo:
        zoo = load_zoo(config.zoo)
        check_rule_for_zoo(rule, zoo)
        members = zoo.half(config.half)
        if not members:
            halves = sorted({m.half for m in zoo.members})
            raise InputError(
                f"--half {config.half!r}: the {config.zoo} zoo has no such half (it has {', '.join(halves)})"
            )
        say(f"checking {len(members)} zoo member cards against their adapters ...")
        cards = check_members(zoo, members)
        seen = check_built_after(rule, zoo, config.half, cards)
        ids = blind_ids([m.name for m in members], config.seed)
        reference = resolve_target(zoo.base, label="reference")
        targets = {}
        for m in members:
            folder_m = zoo.folder_of(m)
            if folder_m is None:
                targets[m.name] = resolve_target(zoo.base, label=ids[m.name])
            else:
                targets[m.name] = _card_target(ids[m.name], folder_m, cards[m.name])
        order = sorted(targets.values(), key=lambda t: t.label)
        say(f"auditing {len(order)} models blind ({', '.join(t.label for t in order)}) against the reference")
        with WorkerPool(config.workers, pieces=len(order)) as pool:
            ev = gather(
                [reference] + order, sizes, config.seed, folder, loaded, say, config.progress, rule, [reference], pool
            )
        blind = {t.label: _verdict_entry(t, reference, ev, rule) for t in order}
        from liedar.audit.score import score

        scored_models = []
        for m in members:
            entry = blind[ids[m.name]]
            scored_models.append(
                {
                    **m.to_dict(),
                    "id": ids[m.name],
                    "strength": strength(cards[m.name]),
                    "verdict": entry["verdict"],
                    "seconds": entry["seconds"],
                    "cached": entry["cached"],
                }
            )
        results.update(
            zoo={"name": zoo.base, "half": config.half, "about": zoo.about, "reference": zoo.base, "seen": seen},
            reference_evidence_seconds=round(ev[reference.key].seconds, 1),
            models=sorted(scored_models, key=lambda d: d["id"]),
            score=score(scored_models, rule.to_dict()),
        )
    else:
        given = resolve_target(config.reference, label=config.reference) if config.reference else None
        targets_l = [resolve_target(m) for m in config.models]
        refs = [_reference_for(t, given) for t in targets_l]
        with WorkerPool(config.workers, pieces=len(targets_l)) as pool:
            ev = gather(refs + targets_l, sizes, config.seed, folder, loaded, say, config.progress, rule, refs, pool)
        results["models"] = [_verdict_entry(t, r, ev, rule) for t, r in zip(targets_l, refs)]
    results["seconds"] = round(time.perf_counter() - t_start, 1)
    path = Path(config.output) / RESULTS_FILE
    write_json_atomic(path, json_safe(results))
    return results, path


def summary_lines(results: dict[str, Any]) -> list[str]:
    """The terminal summary: one line per model (verdict, why), then the score of a zoo audit."""
    from liedar.audit.score import fmt_rate

    out = []
    for m in results["models"]:
        name = m.get("name", m.get("model"))
        truth = f" (truth: {m['truth']})" if "truth" in m else ""
        verdict, why = m["verdict"]["verdict"], m["verdict"]["why"]
        cache = "cached" if m.get("cached") else f"{m.get('seconds', 0):.0f} s"
        out.append(f"{name:<24} {verdict:<18}{truth} [{cache}] — {why}")
    sc = results.get("score")
    if sc:
        out.append(
            f"coverage (decided) {fmt_rate(sc.get('coverage'))}; accuracy among decided "
            f"{fmt_rate(sc.get('accuracy_among_decided'))}; overall accuracy {fmt_rate(sc['accuracy'])}"
            + (" (seen: this half existed before the rule was pinned)" if results.get("zoo", {}).get("seen") else "")
        )
        out.append(f"decoys flagged: {len(sc['decoys_flagged'])}/{sc['decoys']}")
        for kind, r in (sc.get("recall_per_kind") or {}).items():
            out.append(f"  recall {kind}: {fmt_rate(r['rate'])}")
        a = sc["anchor"]
        out.append(
            f"anchor (Taylor et al. 2025): blue team {fmt_rate(a['black_box_and_probes_rate'])} with black-box methods "
            f"and probes, {fmt_rate(a['with_fine_tuning_rate'])} with fine-tuning access"
        )
    return out


__all__ = ["AuditConfig", "RESULTS_FILE", "Target", "audit", "resolve_target", "summary_lines"]
