"""Tiny process reward models built offline (docs/prm-models.md), saved with
``save_pretrained`` so the PRM components load them as they load real checkpoints:

- ``token-prm``: a 2-layer Llama token classifier (2 classes) with a ChatML tokenizer whose
  ``<extra_0>`` is a special token (Qwen2.5-Math-PRM's layout, through
  AutoModelForTokenClassification);
- ``custom-head-prm``: Qwen2.5-Math-PRM's shape — a Qwen2 base model and its own head (linear,
  ReLU, linear to 2 classes) in the checkpoint's own code, registered for AutoModel: it loads
  with ``model_class = "auto-model"`` and ``trust_remote_code``;
- ``no-separator-prm``: ``token-prm`` built with a tokenizer that has no ``<extra_0>`` (a
  token classifier not made for Qwen's separator);
- ``nan-prm`` (seeded defect): ``token-prm`` with one weight of its head NaN, so every step
  score is NaN;
- ``tag-prm``: a 2-layer Llama causal LM with a tokenizer that has ``ки``, ``+`` and ``-``
  (Math-Shepherd's layout);
- ``padding-tag-prm`` (seeded defect): ``tag-prm``'s weights under the checkpoint's own causal
  LM class that adds the mean of every position's embedding, padding included, to each
  position's logits: its scores change with the padding a batch adds.

Every tokenizer is byte-level BPE trained on CORPUS, whose texts end in a blank line, so
"\\n\\n" is one token alone but splits where a blank line runs into the next step's text;
it adds a BOS to a text, as Llama's do.
Import after ``pytest.importorskip("torch")``.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach the hub

import importlib.util  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import (  # noqa: E402
    Tokenizer,
    decoders,
    models,
    pre_tokenizers,
    processors,
    trainers,
)

torch.set_num_threads(1)  # see tests/_tiny_hf.py

CORPUS = [
    "Find x if 2x + 3 = 11.\n\n",
    "Subtract 3 from both sides: 2x = 8.\n\n",
    "Divide by 2, so x = 4. The answer is 4.\n\n",
    "Step 1: 17 + 25 = 42 ки\nStep 2: 42 - 2 = 40 ки\n",
    "+ - + - ки ки + -\n\n",
    "The area of a circle of radius 3 is 9 pi, about 28.27.\n\n",
]

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<pad>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<extra_0>"]


def tokenizer(
    vocab_size: int = 600, separator: bool = True
) -> transformers.PreTrainedTokenizerFast:
    """``separator``: with ``<extra_0>`` among its special tokens."""
    special = SPECIAL if separator else [t for t in SPECIAL if t != "<extra_0>"]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    backend.train_from_iterator(CORPUS * 4, trainer)
    bos = backend.token_to_id("<s>")  # a BOS before a plain text, as Llama's tokenizers add
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", bos)]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        additional_special_tokens=special[3:],
        chat_template=CHATML,
        model_input_names=["input_ids", "attention_mask"],
    )


def _llama(tok, **extra) -> transformers.LlamaConfig:
    return transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        initializer_range=0.5,  # scores spread over (0, 1), so a 1e-5 tolerance means something
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        **extra,
    )


def _save(model, tok, path: Path) -> Path:
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def _token_classifier(separator: bool = True):
    tok = tokenizer(separator=separator)
    torch.manual_seed(21)
    return transformers.LlamaForTokenClassification(_llama(tok, num_labels=2)), tok


def build_token_prm(folder: Path) -> Path:
    return _save(*_token_classifier(), folder / "token-prm")


def build_no_separator_prm(folder: Path) -> Path:
    return _save(*_token_classifier(separator=False), folder / "no-separator-prm")


def build_nan_prm(folder: Path) -> Path:
    model, tok = _token_classifier()
    with torch.no_grad():
        model.score.weight[1, 0] = float("nan")  # the positive class's logit: every one NaN
    return _save(model, tok, folder / "nan-prm")


def build_tag_prm(folder: Path) -> Path:
    tok = tokenizer()
    torch.manual_seed(22)
    return _save(transformers.LlamaForCausalLM(_llama(tok)), tok, folder / "tag-prm")


MODELING = '''
"""Tiny process reward models with their own classes (loaded as remote code)."""

import torch
from transformers import LlamaForCausalLM, Qwen2Model, Qwen2PreTrainedModel
from transformers.modeling_outputs import CausalLMOutputWithPast, TokenClassifierOutput


class CustomHeadPRM(Qwen2PreTrainedModel):
    """A Qwen2 base model and a two-layer head giving 2 classes per token (the shape of
    Qwen2.5-Math-PRM's Qwen2ForProcessRewardModel)."""

    def __init__(self, config):
        super().__init__(config)
        self.model = Qwen2Model(config)
        self.score = torch.nn.Sequential(
            torch.nn.Linear(config.hidden_size, config.hidden_size),
            torch.nn.ReLU(),
            torch.nn.Linear(config.hidden_size, 2),
        )
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, use_cache=None,
                **kwargs):
        hidden = self.model(
            input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False
        ).last_hidden_state
        return TokenClassifierOutput(logits=self.score(hidden))


class PaddingReadingLM(LlamaForCausalLM):
    """A causal LM whose logits at every position add a term from the mean embedding of all
    the row's positions, padding included (the attention mask ignored)."""

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        out = super().forward(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
            **kwargs,
        )
        mean = self.model.embed_tokens(input_ids).mean(dim=1, keepdim=True)
        return CausalLMOutputWithPast(logits=out.logits + 4.0 * self.lm_head(mean))
'''


def _modeling(folder: Path):
    """The modeling code as an importable module file (save_pretrained copies it)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "modeling_tiny_prm.py"
    path.write_text(MODELING, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("modeling_tiny_prm", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["modeling_tiny_prm"] = module
    spec.loader.exec_module(module)
    return module


def build_custom_head_prm(folder: Path) -> Path:
    module = _modeling(folder)
    tok = tokenizer()
    config = transformers.Qwen2Config(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        initializer_range=0.5,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    module.CustomHeadPRM.register_for_auto_class("AutoModel")
    torch.manual_seed(23)
    return _save(module.CustomHeadPRM(config), tok, folder / "custom-head-prm")


def build_padding_tag_prm(folder: Path) -> Path:
    module = _modeling(folder)
    tok = tokenizer()
    module.PaddingReadingLM.register_for_auto_class("AutoModelForCausalLM")
    torch.manual_seed(22)  # tag-prm's weights
    return _save(module.PaddingReadingLM(_llama(tok)), tok, folder / "padding-tag-prm")


BUILDERS = {
    "token-prm": build_token_prm,
    "no-separator-prm": build_no_separator_prm,
    "nan-prm": build_nan_prm,
    "custom-head-prm": build_custom_head_prm,
    "tag-prm": build_tag_prm,
    "padding-tag-prm": build_padding_tag_prm,
}


def build(name: str, folder: Path) -> Path:
    """Save tiny PRM ``name`` (a key of BUILDERS) and its tokenizer under ``folder / name``."""
    return BUILDERS[name](folder)
