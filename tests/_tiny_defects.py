"""Tiny Hugging Face reward models built offline, each with one seeded defect that the
scoring checks must catch (docs/real-models.md, "Scoring checks"), and their correct twins:

- ``last-token-rm`` pools the last position of the padded row whatever the attention mask
  says (a custom model class, loaded as remote code); ``mask-token-rm`` is the same class and
  weights pooling each row's last real token;
- ``dropout-rm``: mask-token-rm whose config leaves dropout on at inference (its code drops
  out the pooled state whatever the module's train/eval mode), so no two passes agree;
- ``double-bos-rm``: llama-rm whose chat template writes BOS on top of the one its template
  already writes;
- ``bf16-fragile-rm``: gpt2-rm whose final layer norm adds a large constant, so bfloat16
  hidden states (a step of 2 at 300) round away what tells items apart.

Import after ``pytest.importorskip("torch")``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import _tiny_hf
import torch
import transformers

MODELING = '''
"""A GPT-2 reward model that pools one position per row: the last real token (attention
mask), or with ``pool_last_position`` the row's last position, padding or not."""

import torch
from transformers import GPT2Config, GPT2Model, GPT2PreTrainedModel
from transformers.modeling_outputs import SequenceClassifierOutput


class PooledConfig(GPT2Config):
    model_type = "pooled-gpt2-rm"

    def __init__(self, pool_last_position=False, dropout_at_inference=0.0, **kwargs):
        self.pool_last_position = pool_last_position
        self.dropout_at_inference = dropout_at_inference
        super().__init__(**kwargs)


class PooledRewardModel(GPT2PreTrainedModel):
    config_class = PooledConfig

    def __init__(self, config):
        super().__init__(config)
        self.transformer = GPT2Model(config)
        self.reward_head = torch.nn.Linear(config.n_embd, config.num_labels, bias=False)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, **kwargs):
        hidden = self.transformer(input_ids, attention_mask=attention_mask).last_hidden_state
        if self.config.pool_last_position or attention_mask is None:
            pooled = hidden[:, -1]
        else:
            last = attention_mask.sum(-1) - 1
            pooled = hidden[torch.arange(len(hidden), device=hidden.device), last]
        if self.config.dropout_at_inference:
            pooled = torch.nn.functional.dropout(
                pooled, self.config.dropout_at_inference, training=True
            )
        return SequenceClassifierOutput(logits=self.reward_head(pooled))
'''


def _modeling_module(folder: Path):
    """The modeling code as an importable module file (save_pretrained copies it)."""
    path = folder / "modeling_pooled.py"
    path.write_text(MODELING, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("modeling_pooled", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["modeling_pooled"] = module
    spec.loader.exec_module(module)
    return module


def build_pooled(folder: Path, *, pool_last_position: bool, dropout: float = 0.0) -> Path:
    """A GPT-2 RM with gpt2-rm's tokenizer and the PooledRewardModel class (remote code:
    load it with trust_remote_code); ``dropout``: left on at inference."""
    name = "last-token-rm" if pool_last_position else "dropout-rm" if dropout else "mask-token-rm"
    folder.mkdir(parents=True, exist_ok=True)
    module = _modeling_module(folder)
    tok = _tiny_hf.tokenizer("turns")
    config = module.PooledConfig(
        pool_last_position=pool_last_position,
        dropout_at_inference=dropout,
        vocab_size=len(tok),
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_positions=256,
        initializer_range=0.5,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        num_labels=1,
    )
    module.PooledConfig.register_for_auto_class()
    module.PooledRewardModel.register_for_auto_class("AutoModelForSequenceClassification")
    torch.manual_seed(11)
    model = module.PooledRewardModel(config)
    path = folder / name
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def build_double_bos(folder: Path) -> Path:
    """llama-rm with a chat template that writes BOS, then the INST template's own BOS."""
    path = _tiny_hf.build("llama-rm", folder / "double-bos")
    config = path / "tokenizer_config.json"
    settings = json.loads(config.read_text(encoding="utf-8"))
    settings["chat_template"] = "{{ bos_token }}" + _tiny_hf.INST_TEMPLATE
    config.write_text(json.dumps(settings), encoding="utf-8")
    (path / "chat_template.jinja").unlink(missing_ok=True)
    target = folder / "double-bos-rm"
    path.rename(target)
    return target


def build_bf16_fragile(folder: Path, offset: float = 300.0) -> Path:
    """gpt2-rm whose final layer norm outputs ``offset`` + small variations."""
    path = _tiny_hf.build("gpt2-rm", folder / "bf16-fragile")
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path)
    with torch.no_grad():
        model.transformer.ln_f.weight.mul_(0.05)
        model.transformer.ln_f.bias.fill_(offset)
    target = folder / "bf16-fragile-rm"
    model.save_pretrained(target)
    transformers.AutoTokenizer.from_pretrained(path).save_pretrained(target)
    return target
