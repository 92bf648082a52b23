"""Time the menu study's sampling: K generate calls per menu against shared reads of the prompts.

On a subset of the study's menus (the first vignettes of the chosen scenario, one framing,
options lettered in the study's seeded order), each menu is answered up to four ways in the
same run, the per-menu ways alternating menu by menu so that a shared machine's load falls
on all:

  loop     the per-sample path: K ``backend.generate(prompt, seed=menu_seed(seed, j) + k)`` calls;
  shared   ``sample_shared_prefix``: one menu at a time, its prompt read once and its K
           continuations decoded together (transformers: one batch over the prompt's KV cache);
  batched  ``sample_shared_prefix_many``: every menu of the subset at once (what the study
           does with a configuration's 15 menus), each prompt read once, all rows decoded as
           one batch; timed once over the subset, after the per-menu ways;
  exact    ``choice_law``: the letters' exact law at the temperature (one forward pass).
  whole    ``sample_with_choice_laws``: the batched replies and every menu's exact law from
           one forward pass over the prompts (what ``menus_study_parts.py --mode whole``
           does); timed once over the subset, after ``batched``, and compared with
           batched + exact.

Printed: seconds per menu for each, the loop / shared and loop / batched ratios, the sampled
replies' length in tokens (and how many the token budget cut), how many of the K replies
agree token for token with the loop (they use the same sampler and seeds), the
load average before and after, and a goodness-of-fit test of the sampled replies against
the exact law: the replies whose first token is one of the menu's letters are counted per
letter and compared with the law (Pearson statistic summed over menus, Monte-Carlo
p-value from multinomial draws of the law with the same counts, since K = 20 leaves
expected counts too small for the chi-square approximation).

    OMP_NUM_THREADS=1 .venv/bin/python scripts/bench_menu_sampling.py --menus 15 --samples 20
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default="transformers", choices=("transformers", "llamacpp"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--scenario", default="procurement")
    ap.add_argument("--framing", default="minimal")
    ap.add_argument("--menus", type=int, default=15, help="menus timed (15 per vignette)")
    ap.add_argument("--samples", type=int, default=20, help="K")
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--ways",
        default="loop,shared,batched,exact",
        help="comma-separated subset of loop,shared,batched,exact,whole",
    )
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"), help="transformers weights")
    return ap.parse_args()


def _menu_prompts(args: argparse.Namespace, framing) -> list:
    """The first ``--menus`` prompts of the scenario under the framing, lettered as the study letters them."""
    from liedar.behavioral.items.menus import SCENARIOS, vignettes
    from liedar.behavioral.runners.menus import build_prompt, design_index, presentation_orders

    jobs = []
    index = design_index()  # the study's own lettering of each configuration
    for v in vignettes(args.scenario):
        rng = np.random.default_rng([0, index[(v.vignette_id, args.framing)]])
        for shown in presentation_orders(SCENARIOS[args.scenario].menus(), "shuffled", rng):
            jobs.append(build_prompt(v, framing, shown))
    return jobs[: args.menus]


def _answer(way: str, backend, prompt, j: int, args: argparse.Namespace, max_tokens: int):
    """Menu ``j`` answered one way: K generate calls, K continuations of one shared prompt, or the exact law."""
    from liedar.behavioral.runners.common import letter_continuations
    from liedar.behavioral.runners.menus import menu_seed
    from liedar.models.sampling import choice_law, sample_shared_prefix

    if way == "loop":
        return [
            backend.generate(
                prompt, max_tokens=max_tokens, temperature=args.temperature, seed=menu_seed(args.seed, j) + k
            )
            for k in range(args.samples)
        ]
    if way == "shared":
        return sample_shared_prefix(
            backend, prompt, samples=args.samples, max_tokens=max_tokens, temperature=args.temperature,
            seed=menu_seed(args.seed, j),
        )  # fmt: skip
    return choice_law(backend, prompt, letter_continuations(_n_options(prompt), chat=True),
                      args.temperature)  # fmt: skip


def main() -> int:
    args = _parse()

    from liedar import models
    from liedar.behavioral.items.menus import FRAMINGS
    from liedar.models.sampling import option_tokens

    extra = {"dtype": args.dtype} if args.backend == "transformers" else {}
    backend = models.load(args.model, backend=args.backend, n_threads=args.threads, **extra)
    framing = FRAMINGS[args.framing]
    max_tokens = 160 if framing.reasoning else 12
    jobs = _menu_prompts(args, framing)
    backend.generate(jobs[0], max_tokens=4, temperature=args.temperature)  # warm-up
    load0 = os.getloadavg()
    ways = [w for w in ("loop", "shared", "exact") if w in args.ways.split(",")]
    secs = {w: 0.0 for w in ways}
    outs: dict[str, list] = {w: [] for w in ways}
    for j, prompt in enumerate(jobs):
        for way in ways if j % 2 == 0 else ways[::-1]:
            t0 = time.perf_counter()
            outs[way].append(_answer(way, backend, prompt, j, args, max_tokens))
            secs[way] += time.perf_counter() - t0
    _answer_all_at_once(backend, jobs, args, max_tokens, outs, secs)
    sampled_way = next((w for w in ("batched", "whole", "shared", "loop") if w in outs), None)
    lengths = [len(g.token_ids) for menu in outs.get(sampled_way, []) for g in menu]
    same = {
        w: sum(a.token_ids == b.token_ids for m, n in zip(outs["loop"], outs[w]) for a, b in zip(m, n))
        for w in ("shared", "batched", "whole")
        if w in outs and "loop" in outs
    }
    if "whole" in outs and "batched" in outs:
        same["whole vs batched"] = sum(
            a.token_ids == b.token_ids for m, n in zip(outs["batched"], outs["whole"]) for a, b in zip(m, n)
        )
    mass, fits = [], []
    for j, prompt in enumerate(jobs):
        if "exact" in outs:
            law = outs["exact"][j]
            mass.append(float(law.mass.sum()))
            if sampled_way is not None:
                letters = [ids[k] for ids, k in option_tokens(backend, prompt, law.options)]
                firsts = [g.token_ids[0] if g.token_ids else None for g in outs[sampled_way][j]]
                fits.append((np.array([firsts.count(t) for t in letters]), law.probs))
    load1 = os.getloadavg()
    n = len(jobs)
    print(f"{args.model} ({args.backend}, {args.dtype}, {args.threads} thread(s)), {n} menus of {args.scenario} "
          f"x {args.framing}, "
          f"K={args.samples}, T={args.temperature}, max_tokens={max_tokens}")  # fmt: skip
    for way, s in secs.items():
        print(f"  {way:7s} {s:8.2f} s   {s / n:7.3f} s/menu")
    if lengths:
        at_cap = sum(n_tok >= max_tokens for n_tok in lengths)
        print(f"sampled reply length: mean {np.mean(lengths):.1f} tokens, median {np.median(lengths):.0f}, "
              f"{at_cap}/{len(lengths)} cut at max_tokens")  # fmt: skip
    for way, n_same in same.items():
        label = way if " vs " in way else f"loop vs {way}"
        print(f"replies identical token for token ({label}): {n_same}/{n * args.samples}")
    if mass:
        print(f"exact law: mean probability that a sampled reply starts with a menu letter {np.mean(mass):.3f}")
    if fits:
        stat, p, n_on, df = _goodness_of_fit(fits, np.random.default_rng(args.seed))
        print(f"sampled ({sampled_way}) first-token letters vs the exact law: {n_on} of {n * args.samples} replies "
              "start with a")  # fmt: skip
        print(f"  menu letter; Pearson statistic {stat:.1f} on {df} degrees of freedom, Monte-Carlo p = {p:.3f}")
    print(f"load average (1, 5, 15 min) before: {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}, "
          f"after: {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}")  # fmt: skip
    for way in ("shared", "batched"):
        if "loop" in secs and way in secs:
            print(f"speed ratio, loop / {way}: {secs['loop'] / secs[way]:.1f}x")
    if "loop" in secs and "exact" in secs:
        print(f"speed ratio, loop / exact: {secs['loop'] / secs['exact']:.1f}x")
    if {"batched", "exact", "whole"} <= secs.keys():
        print(f"speed ratio, (batched + exact) / whole: {(secs['batched'] + secs['exact']) / secs['whole']:.2f}x")
    return 0


def _answer_all_at_once(backend, jobs: list, args: argparse.Namespace, max_tokens: int, outs: dict, secs: dict) -> None:
    """The ways that answer every menu of the subset in one call (``batched``, ``whole``),
    each timed once, their replies (and the one pass's laws) added to ``outs``."""
    from liedar.behavioral.runners.common import letter_continuations
    from liedar.behavioral.runners.menus import menu_seed
    from liedar.models.sampling import sample_shared_prefix_many, sample_with_choice_laws

    seeds = [menu_seed(args.seed, j) for j in range(len(jobs))]
    if "batched" in args.ways.split(","):
        t0 = time.perf_counter()
        outs["batched"] = sample_shared_prefix_many(
            backend, jobs, samples=args.samples, max_tokens=max_tokens, temperature=args.temperature, seeds=seeds
        )
        secs["batched"] = time.perf_counter() - t0
    if "whole" in args.ways.split(","):
        t0 = time.perf_counter()
        outs["whole"], whole_laws = sample_with_choice_laws(
            backend, jobs, [letter_continuations(_n_options(p), chat=True) for p in jobs], samples=args.samples,
            max_tokens=max_tokens, temperature=args.temperature, seeds=seeds,
        )  # fmt: skip
        secs["whole"] = time.perf_counter() - t0
        if "exact" not in outs:  # the goodness of fit reads these laws
            outs["exact"] = whole_laws


def _n_options(prompt) -> int:
    block = prompt.messages[-1].content.split("Options:")[1].split("\n\n")[0]
    return len(block.strip().splitlines())


def _pearson(counts: np.ndarray, probs: np.ndarray) -> float:
    n = counts.sum()
    if n == 0:
        return 0.0
    expected = n * probs
    keep = expected > 0
    return float((((counts - expected) ** 2)[keep] / expected[keep]).sum())


def _goodness_of_fit(fits, rng: np.random.Generator, draws: int = 1999) -> tuple[float, float, int, int]:
    """Pearson statistic summed over menus and its Monte-Carlo p-value under the law."""
    stat = sum(_pearson(c, p) for c, p in fits)
    sims = np.zeros(draws)
    for c, p in fits:
        n = int(c.sum())
        if n:
            sims += [_pearson(x, p) for x in rng.multinomial(n, p, size=draws)]
    df = sum(len(p) - 1 for c, p in fits if c.sum())
    n_on = int(sum(c.sum() for c, _ in fits))
    return stat, float((1 + (sims >= stat).sum()) / (1 + draws)), n_on, df


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
