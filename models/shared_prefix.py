"""Attention for a batch of rows that continue a few shared prompts, each prompt read once a step.

The menu study samples K = 20 replies to each of a configuration's 15 prompts: 300 rows, 20
of which share every prompt token. A key-value cache with one copy of the prompt per row
makes every decoding step read the prompt 20 times over (profiled on smollm2-135m's
chain-of-thought framing, with a copied cache: attention was 40% of the step). Here the
prompts' keys and values are kept once. Each step attends every row's query to its prompt
(the 20 rows of a prompt are 20 more queries against the same keys, one attention call for
all prompts) and, separately, to the row's own generated tokens; the two parts are merged
by their log-sum-exps into the one softmax a cache holding the whole sequence would give
("cascade" attention).

It plugs into a transformers model through the library's own seam: the function is
registered in ``transformers.AttentionInterface`` under `ATTENTION_NAME`, and the model's
forward passes a `SharedPrefixState` to it as the ``shared_prefix`` keyword, so no cache
object of the library is involved (``use_cache=False``) and the model's weights and
positions are its own.

The output layer of such a batch writes its logits into one buffer kept for the whole
decoding (`logits_into_buffer`), since at hundreds of rows over a large vocabulary a fresh
logits array every step costs page faults on every step.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional

import torch

ATTENTION_NAME = "liedar_shared_prefix"


class SharedPrefixState:
    """The prompts' keys and values, and each row's generated keys and values, per layer.

    The prompts are read in up to two forward passes: their ``common`` shared leading tokens
    once (a batch of one), then what follows them, left-padded, as one batch attending to
    those keys and to its own. Why: the 15 menus of a configuration share their system turn
    and case (smollm2-135m: 62 of 103-147 tokens), and a batch of whole prompts reads those
    tokens 15 times over.

    Parameters
    ----------
    prompt_mask : torch.Tensor
        ``[prompts, width]`` bool: the real tokens of each left-padded prompt after its
        ``common`` leading tokens.
    owners : torch.Tensor
        ``[rows]`` long: the prompt each decoding row continues.
    budget : int
        Generated tokens a row can hold.
    common : int
        Leading tokens every prompt shares, read once (0: none; each prompt whole).
    """

    def __init__(self, prompt_mask: torch.Tensor, owners: torch.Tensor, budget: int, common: int = 0):
        prompts, width = prompt_mask.shape
        self.common = common
        self.prompt_mask = torch.cat([torch.ones(prompts, common, dtype=torch.bool), prompt_mask.bool()], 1)
        column = torch.arange(common + width)
        pad = width - prompt_mask.sum(1)
        self.key_positions = torch.where(column < common, column, column - pad[:, None])  # [prompts, keys]
        self.lengths = common + width - pad  # each prompt's tokens
        self.budget = budget
        self.phase = "common" if common else "prompts"
        self.written = 0  # generated columns already in the suffix
        self._common: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self._prefix: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self._suffix: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self._set_rows(owners)

    def _set_rows(self, owners: torch.Tensor) -> None:
        """Where each row sits in the ``[prompts, most rows of a prompt]`` grid the shared
        products use: a prompt's rows fill its slots in batch order, in whatever batch rows
        they sit; a prompt with fewer rows leaves its grid slots empty."""
        counts = torch.bincount(owners, minlength=self.prompt_mask.shape[0])
        first = torch.cumsum(counts, 0) - counts
        by_prompt = torch.argsort(owners, stable=True)
        rank = torch.empty_like(owners)
        rank[by_prompt] = torch.arange(len(owners)) - first[owners[by_prompt]]
        self.owners = owners
        self.rows = len(owners)
        self.per_prompt = int(counts.max())
        self.slots = owners * self.per_prompt + rank

    def shed(self, ended: list[int]) -> torch.Tensor:
        """Drop the ``ended`` rows: the last rows still drawing move into their places.

        Why moved and not closed up: closing the gaps copies every row after the first
        ended one (every generated column of every layer); filling them from the end copies
        only as many rows as ended, so the batch can shed rows at every step instead of
        decoding ended rows until enough of them have piled up.

        Returns
        -------
        torch.Tensor
            ``[rows left]`` long: the old row each row of the smaller batch continues.
        """
        left = self.rows - len(ended)
        gone = set(ended)
        holes = [b for b in sorted(gone) if b < left]
        movers = [b for b in range(left, self.rows) if b not in gone]
        order = torch.arange(left)
        if holes:
            src, dst = torch.tensor(movers), torch.tensor(holes)
            order[dst] = src
            with torch.inference_mode():  # the buffers were made inside the forward pass's
                for k, v in self._suffix.values():
                    k[dst, :, : self.written] = k[src, :, : self.written]
                    v[dst, :, : self.written] = v[src, :, : self.written]
        self._set_rows(self.owners[order])
        return order

    def advance(self) -> None:
        """Close a forward pass: the shared tokens are in, the prompts are, or one generated
        column is written."""
        if self.phase == "decode":
            self.written += 1
        else:
            self.phase = "prompts" if self.phase == "common" else "decode"

    def attend(self, module, query, key, value, scaling, sliding_window):
        """The attention of the pass `phase` names."""
        step = {"common": self.prefill_common, "prompts": self.prefill, "decode": self.decode}[self.phase]
        return step(module, query, key, value, scaling, sliding_window)

    def prefill_common(self, module, query, key, value, scaling, sliding_window):
        """Causal attention over the prompts' shared leading tokens (one row); kept."""
        self._common[module.layer_idx] = (key, value)
        position = torch.arange(self.common)
        allowed = position[None, :] <= position[:, None]
        if sliding_window:
            allowed &= position[None, :] > position[:, None] - sliding_window
        return _attend_grouped(query, key, value, scaling, _bias(allowed, query)[None, None])

    def prefill(self, module, query, key, value, scaling, sliding_window):
        """Causal attention of the left-padded prompts' tokens over the shared tokens and
        their own; all their keys and values are kept, the shared ones first."""
        if self.common:
            shared_k, shared_v = self._common[module.layer_idx]
            prompts = key.shape[0]
            key = torch.cat([shared_k.expand(prompts, -1, -1, -1), key], 2)
            value = torch.cat([shared_v.expand(prompts, -1, -1, -1), value], 2)
        self._prefix[module.layer_idx] = (key, value)
        keys = self.key_positions[:, None, :]
        queries = self.key_positions[:, self.common :, None]
        allowed = (keys <= queries) & self.prompt_mask[:, None, :]
        if sliding_window:
            allowed &= keys > queries - sliding_window
        own = torch.arange(queries.shape[1])
        allowed[:, own, self.common + own] = True  # a pad query sees itself: no empty softmax
        return _attend_grouped(query, key, value, scaling, _bias(allowed, query)[:, None])

    def decode(self, module, query, key, value, scaling, sliding_window):
        """One new token per row against its prompt (shared) and its own generated tokens: two
        attentions, each with its log-sum-exp, merged into the one softmax over both."""
        layer, column = module.layer_idx, self.written
        if layer not in self._suffix:
            shape = (key.shape[0], key.shape[1], self.budget, key.shape[3])
            self._suffix[layer] = (key.new_empty(shape), value.new_empty(shape))
        own_k, own_v = self._suffix[layer]
        own_k, own_v = own_k[: self.rows], own_v[: self.rows]  # a shed batch keeps its buffers' first rows
        own_k[:, :, column] = key[:, :, 0]
        own_v[:, :, column] = value[:, :, 0]
        prompt_k, prompt_v = self._prefix[layer]
        rows, heads, _, dim = query.shape
        prompts, kv_heads, width, _ = prompt_k.shape
        groups = heads // kv_heads
        q = query.reshape(rows, kv_heads, groups, dim)
        seen = self.prompt_mask
        if sliding_window:  # the rows of a prompt ask from position its length + column
            seen = seen & (self.key_positions > (self.lengths + column - sliding_window)[:, None])
        grid = self._to_grid(q, prompts)  # a prompt's rows as more queries against its keys
        shared, shared_lse = _attend(grid, prompt_k, prompt_v, scaling, _bias(seen, q)[:, None, None])
        shared_lse = shared_lse.masked_fill(~seen.any(-1)[:, None, None], float("-inf"))  # all out of the window
        own_seen = torch.ones(column + 1, dtype=torch.bool)
        if sliding_window and column >= sliding_window:  # generated past the window itself
            own_seen[: column - sliding_window + 1] = False
        own_k, own_v = own_k[:, :, : column + 1], own_v[:, :, : column + 1]
        own, own_lse = _attend(q, own_k, own_v, scaling, _bias(own_seen, q)[None, None, None])
        shared_lse = self._from_grid(shared_lse[..., None], groups)
        total = torch.logaddexp(shared_lse, own_lse[..., None])
        shared_share = torch.exp(shared_lse - total).to(query.dtype)  # weights in the model's dtype: the
        own_share = torch.exp(own_lse[..., None] - total).to(query.dtype)  # sum is rounded to it anyway
        out = self._from_grid(shared, groups) * shared_share + own * own_share
        return out.reshape(rows, heads, 1, dim)

    def _to_grid(self, per_row: torch.Tensor, prompts: int) -> torch.Tensor:
        """``[rows, kv_heads, groups, n]`` to ``[prompts, kv_heads, per_prompt * groups, n]``."""
        rows, kv_heads, groups, n = per_row.shape
        grid = per_row.new_zeros(prompts * self.per_prompt, kv_heads, groups, n)
        grid[self.slots] = per_row
        grid = grid.view(prompts, self.per_prompt, kv_heads, groups, n).transpose(1, 2)
        return grid.reshape(prompts, kv_heads, self.per_prompt * groups, n)

    def _from_grid(self, grid: torch.Tensor, groups: int) -> torch.Tensor:
        """The inverse of `_to_grid`, for the rows that exist."""
        prompts, kv_heads, _, n = grid.shape
        grid = grid.view(prompts, kv_heads, self.per_prompt, groups, n).transpose(1, 2)
        return grid.reshape(prompts * self.per_prompt, kv_heads, groups, n)[self.slots]


def _bias(seen: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """An additive mask in ``like``'s dtype: 0 where a key is seen, minus infinity where not."""
    return torch.zeros(seen.shape, dtype=like.dtype).masked_fill(~seen, float("-inf"))


def _attend_grouped(query, key, value, scaling, bias):
    """`_attend` with each key-value head repeated for its group of query heads."""
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)
    out, _ = _attend(query, key, value, scaling, bias)
    return out


def _attend(query, key, value, scaling, bias):
    """Attention and its log-sum-exp per query, from PyTorch's fused CPU kernel (float32
    accumulation, as the model's own attention has; a product of bfloat16 matrices rounds
    the scores themselves to bfloat16). A query that sees no key gets zeros and a
    log-sum-exp of 0, not minus infinity: `SharedPrefixState.decode` corrects it."""
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(  # noqa: SLF001 (public: no LSE)
        query, key, value, 0.0, False, attn_mask=bias, scale=scaling
    )


def shared_prefix_attention(
    module, query, key, value, attention_mask, scaling=None, dropout=0.0, shared_prefix=None, **kwargs
):
    """The ``AttentionInterface`` entry: the model's attention call, answered by the state."""
    if shared_prefix is None:
        raise RuntimeError(f"the {ATTENTION_NAME!r} attention runs only inside shared_prefix_decoding")
    if kwargs.get("softcap") is not None:
        raise NotImplementedError("the shared-prefix sampler does not soft-cap attention scores (gemma2's)")
    if scaling is None:
        scaling = query.shape[-1] ** -0.5
    out = shared_prefix.attend(module, query, key, value, scaling, kwargs.get("sliding_window"))
    return out.transpose(1, 2), None


@contextmanager
def shared_prefix_decoding(model) -> Iterator[None]:
    """Route ``model``'s attention through `shared_prefix_attention` for the block; the
    model's own implementation is restored after it, also on error."""
    from transformers import AttentionInterface

    AttentionInterface.register(ATTENTION_NAME, shared_prefix_attention)
    configs = {id(m.config): m.config for m in model.modules() if hasattr(m, "config")}
    saved = {key: config._attn_implementation for key, config in configs.items()}  # noqa: SLF001 (the
    try:  # switch the attention layers of every transformers from 4.48 read)
        for config in configs.values():
            config._attn_implementation = ATTENTION_NAME  # noqa: SLF001
        yield
    finally:
        for key, config in configs.items():
            config._attn_implementation = saved[key]  # noqa: SLF001


class HeadIntoBuffer(torch.nn.Module):
    """A linear output layer whose logits land in a buffer reused by every call that fits it."""

    def __init__(self, head: torch.nn.Linear, rows: int):
        super().__init__()
        self.head = head
        self.buffer = head.weight.new_empty((rows, head.out_features))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        n = hidden.numel() // hidden.shape[-1]
        if n > len(self.buffer) or hidden.dtype != self.buffer.dtype:
            return self.head(hidden)
        flat, out = hidden.reshape(n, -1), self.buffer[:n]
        if self.head.bias is None:
            torch.mm(flat, self.head.weight.t(), out=out)
        else:
            torch.addmm(self.head.bias, flat, self.head.weight.t(), out=out)
        return out.view(*hidden.shape[:-1], -1)


@contextmanager
def logits_into_buffer(model, rows: int) -> Iterator[Optional[torch.Tensor]]:
    """Within the block, ``model``'s output layer writes up to ``rows`` rows of logits into
    one buffer, so each forward pass's logits overwrite the last one's: read or copy them
    before the next pass. Yields the ``[rows, vocabulary]`` buffer (None when the model keeps
    its own output layer), which a caller may also fill itself between passes.

    Why: a decoding step of the menu study's batch is 300 rows of logits, for gemma3-270m
    157 MB in bfloat16 (262,144 tokens a row). A fresh array that size is mapped anew by the
    allocator and faulted in page by page every step: the output layer alone took 0.302 s
    into a fresh array and 0.239 s into a reused one, the same logits (300 rows, one thread,
    random weights of gemma3's shape; scripts/bench_logits_path.py, 2026-12-05). A model
    whose output layer is not a plain ``torch.nn.Linear`` (e.g. wrapped by an adapter) keeps
    its own.
    """
    head = model.get_output_embeddings()
    if type(head) is not torch.nn.Linear:
        yield None
        return
    into = HeadIntoBuffer(head, rows)
    model.set_output_embeddings(into)
    try:
        yield into.buffer
    finally:
        model.set_output_embeddings(head)
