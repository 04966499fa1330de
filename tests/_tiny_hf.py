"""Tiny Hugging Face models built offline: a byte-level BPE tokenizer trained on a few
sentences and 2-layer GPT-2, Llama and DeBERTa-v2 models with random weights (fixed seeds),
saved with ``save_pretrained`` so components load them exactly as they load real checkpoints.

Needs torch, transformers and tokenizers (the ``hf`` extra); import it after
``pytest.importorskip("torch")``.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach the hub

from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

# One thread for every test that runs tiny models: they gain nothing from more, and on a
# shared 2-core machine OpenMP threads spinning against other processes slow each pass ~10x.
torch.set_num_threads(1)

CORPUS = [
    "How do I keep basil alive on a windowsill? Give it sun and water it when the soil is dry.",
    "A hash table stores values in buckets chosen by a hash of the key.",
    "What is 17 + 25? The answer is 42, but you should double-check.",
    "Write a two-line poem about rain. Rain taps the glass; the garden drinks.",
    "Sure. Great question! I think the answer is probably right.",
]

#: Chat template of the GPT-2 tokenizer (role markers are special tokens).
TURN_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}{{ eos_token }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
#: Llama-2-style chat template: BOS, [INST] ... [/INST] answer EOS.
INST_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}"
    "[INST] {{ m['content'] }} [/INST]{% else %} {{ m['content'] }}{{ eos_token }}"
    "{% endif %}{% endfor %}"
)

SPECIAL = [
    "<pad>",
    "<s>",
    "</s>",
    "[CLS]",
    "[SEP]",
    "<|user|>",
    "<|assistant|>",
    "[INST]",
    "[/INST]",
]


def _bpe(vocab_size: int) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(CORPUS, trainer)
    return tokenizer


def tokenizer(kind: str, vocab_size: int = 400) -> transformers.PreTrainedTokenizerFast:
    """'turns': GPT-2 style with a pad token and TURN_TEMPLATE; 'inst': Llama style with
    INST_TEMPLATE and no pad token; 'pair': DeBERTa style, [CLS] A [SEP] B [SEP] with token
    types and no chat template."""
    backend = _bpe(vocab_size)
    kwargs = {"bos_token": "<s>", "eos_token": "</s>"}
    if kind == "turns":
        kwargs.update(
            pad_token="<pad>",
            chat_template=TURN_TEMPLATE,
            model_input_names=["input_ids", "attention_mask"],
        )
    elif kind == "inst":
        kwargs.update(
            chat_template=INST_TEMPLATE, model_input_names=["input_ids", "attention_mask"]
        )
    elif kind == "pair":
        cls, sep = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
        backend.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
        )
        kwargs.update(
            pad_token="<pad>",
            cls_token="[CLS]",
            sep_token="[SEP]",
            model_input_names=["input_ids", "token_type_ids", "attention_mask"],
        )
    else:
        raise ValueError(kind)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, **kwargs)


#: name → (tokenizer kind, tokenizer vocabulary size, model class, config family, seed)
MODELS = {
    "gpt2-rm": ("turns", 400, "GPT2ForSequenceClassification", "gpt2", 1),
    "llama-rm": ("inst", 400, "LlamaForSequenceClassification", "llama", 2),
    "deberta-rm": ("pair", 400, "DebertaV2ForSequenceClassification", "deberta", 3),
    "gpt2-lm": ("turns", 400, "GPT2LMHeadModel", "gpt2", 4),
    "gpt2-lm-ref": ("turns", 400, "GPT2LMHeadModel", "gpt2", 5),
    "gpt2-lm-other-vocab": ("turns", 320, "GPT2LMHeadModel", "gpt2", 6),
    "llama-lm": ("inst", 400, "LlamaForCausalLM", "llama", 7),
}


def _config(family: str, tok, num_labels: int) -> transformers.PretrainedConfig:
    common = {
        "vocab_size": len(tok),
        "bos_token_id": tok.bos_token_id,
        "eos_token_id": tok.eos_token_id,
        "pad_token_id": tok.pad_token_id,
        "num_labels": num_labels,
    }
    if family == "gpt2":
        # a wide init so that scores spread over O(1) and a 1e-5 tolerance means something
        return transformers.GPT2Config(
            n_embd=32, n_layer=2, n_head=2, n_positions=256, initializer_range=0.5, **common
        )
    if family == "llama":
        return transformers.LlamaConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=256,
            initializer_range=0.5,
            **common,
        )
    return transformers.DebertaV2Config(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=256,
        type_vocab_size=2,
        relative_attention=True,
        position_buckets=32,
        pos_att_type=["p2c", "c2p"],
        initializer_range=0.5,
        **common,
    )


def build(name: str, folder: Path) -> Path:
    """Save tiny model ``name`` (a key of MODELS) and its tokenizer under ``folder / name``."""
    kind, vocab_size, class_name, family, seed = MODELS[name]
    tok = tokenizer(kind, vocab_size)
    torch.manual_seed(seed)
    num_labels = 3 if name == "llama-rm" else 1
    model = getattr(transformers, class_name)(_config(family, tok, num_labels))
    path = folder / name
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


#: Language-code tokens of the tiny translator (as M2M100 / NLLB name their targets).
LANGUAGE_TOKENS = ["__en__", "__de__"]


def build_seq2seq(folder: Path, name: str = "bart-mt", seed: int = 8) -> Path:
    """A 1-layer BART with random weights and the 'turns' tokenizer plus LANGUAGE_TOKENS: a
    stand-in for a translation model (its "translations" are gibberish, but deterministic)."""
    tok = tokenizer("turns")
    tok.add_special_tokens({"additional_special_tokens": LANGUAGE_TOKENS})
    torch.manual_seed(seed)
    config = transformers.BartConfig(
        vocab_size=len(tok),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=256,
        init_std=0.5,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,
        forced_eos_token_id=None,
    )
    model = transformers.BartForConditionalGeneration(config)
    path = folder / name
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
