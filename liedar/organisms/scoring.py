"""Option scoring with the prompt computed once: the organisms' ground truth, cheaper.

Why: measuring an organism asks every held-out item with its four option texts as
continuations (cloze), and ``BackendBase.score_options`` runs prompt + option as four full
sequences. On a transformers backend the prompt can be run once and its key/value cache
repeated for the four short continuations; the log-probabilities are the same numbers
(tokenization is identical: prompt and option are tokenized together exactly as
`score_options` does, and the shared prefix is taken from those very token ids; pinned by
a test against `score_options`). Any other backend, or options whose tokens do not share
the prefix, go through `score_options` unchanged.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from liedar.models.backend import Backend
from liedar.models.chat import TextInput, render


def score_options_shared(backend: Backend, prompt: TextInput, options: Sequence[str]) -> np.ndarray:
    if getattr(backend, "kind", None) != "transformers" or not hasattr(backend, "model") or len(options) < 2:
        return np.asarray(backend.score_options(prompt, options), dtype=np.float64)
    head = render(
        prompt,
        backend.chat_template,
        bos_token=backend.bos_token,
        eos_token=backend.eos_token,
        add_generation_prompt=True,
    )
    seqs, starts = [], []
    for option in options:
        if not option:
            return np.asarray(backend.score_options(prompt, options), dtype=np.float64)  # its own error message
        ids, offsets = backend.tokenize(head.text + option, head.templated)
        k = next((t for t, (a, b) in enumerate(offsets) if b > len(head.text)), None)
        if k is None or k == 0 or len(ids) > backend.n_ctx:
            return np.asarray(backend.score_options(prompt, options), dtype=np.float64)
        seqs.append(list(ids))
        starts.append(k)
    k = starts[0]
    if any(s != k for s in starts) or any(seq[:k] != seqs[0][:k] for seq in seqs):
        return np.asarray(backend.score_options(prompt, options), dtype=np.float64)
    import torch

    hf: Any = backend  # the transformers backend (checked above): its model, cache keyword and pad id
    model = hf.model
    kw = hf.cache_kw
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([seqs[0][:k]], dtype=torch.long), use_cache=True)
        past = getattr(out, kw)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        n = len(seqs)
        past.batch_repeat_interleave(n)
        width = max(len(s) - k for s in seqs)
        ids = torch.full((n, width), hf.pad_id, dtype=torch.long)
        mask = torch.zeros((n, k + width), dtype=torch.long)
        mask[:, :k] = 1
        for r, s in enumerate(seqs):
            ids[r, : len(s) - k] = torch.tensor(s[k:], dtype=torch.long)
            mask[r, k : len(s)] = 1
        cache_position = torch.arange(k, k + width)
        logits = model(
            input_ids=ids, attention_mask=mask, use_cache=True, cache_position=cache_position, **{kw: past}
        ).logits.float()
        logp = torch.log_softmax(logits, dim=-1)
    scores = []
    for r, s in enumerate(seqs):
        suffix = s[k:]
        total = float(first[suffix[0]])
        for j in range(1, len(suffix)):
            total += float(logp[r, j - 1, suffix[j]])
        scores.append(total)
    return np.array(scores, dtype=np.float64)
