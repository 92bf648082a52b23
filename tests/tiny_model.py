"""Build a tiny random-weight Hugging Face causal LM, fully offline, in about a second.

Why: unit tests must exercise the real transformers code path (hooks, padding, chat
templates, KV-cache generation) without a shipped model. The tokenizer is a small BPE
trained here on a few sentences with the `tokenizers` library (no download), wrapped as a
fast tokenizer with a ChatML-style chat template, so offsets and templates behave like a
real model's.

Other tests import it with ``from tiny_model import build_tiny_model`` (tests/ is put on
sys.path by tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

TINY_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] | trim + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_CORPUS = [
    "Paris is the capital of France.",
    "Rome is the capital of Italy.",
    "The sky is blue and the grass is green.",
    "Water boils at one hundred degrees Celsius.",
    "I am an honest assistant and I never lie to the user.",
    "The user asked a question and the assistant answered it truthfully.",
    "Madrid, Berlin, London and Lisbon are cities in Europe.",
    "Two plus two equals four; three times three equals nine.",
]
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]


def build_tiny_model(directory: Path, *, n_layers: int = 3, d_model: int = 48, seed: int = 0, n_ctx: int = 256) -> Path:
    """Write a random-weight LlamaForCausalLM + fast BPE tokenizer into `directory` (``n_ctx``:
    its context, long enough for the instruments' full prompts at 1024)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(_CORPUS, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<pad>",
        unk_token="<|endoftext|>",
    )
    tokenizer.chat_template = TINY_CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=d_model,
        intermediate_size=2 * d_model,
        num_hidden_layers=n_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=n_ctx,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    # Larger-than-default init so layers differ visibly and attention is not uniform.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.2)
    model.save_pretrained(directory)
    return directory
