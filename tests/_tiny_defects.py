"""Tiny Hugging Face reward models built offline, each with one seeded defect that the
scoring checks must catch (docs/real-models.md, "Scoring checks"), and their correct twins:

- ``last-token-rm`` pools the last position of the padded row whatever the attention mask
  says (a custom model class, loaded as remote code); ``mask-token-rm`` is the same class and
  weights pooling each row's last real token;
- ``dropout-rm``: mask-token-rm whose config leaves dropout on at inference (its code drops
  out the pooled state whatever the module's train/eval mode), so no two passes agree;
- ``mask-blind-rm``: a BERT encoder RM that never passes the attention mask on, so its [CLS]
  token attends to the padding; ``masked-rm`` is the same class and weights passing it;
- ``double-bos-rm``: llama-rm whose chat template writes BOS on top of the one its template
  already writes;
- ``no-bos-rm``: llama-rm whose tokenizer adds a BOS to a text while its chat template
  writes none, so the model, fed the rendered text, reads no BOS;
- ``no-eos-rm``: llama-rm whose chat template closes no turn with EOS; ``dropped-eos-rm``
  the same, its tokenizer putting an EOS after every text;
- ``shared-eos-unclosed-rm``: gpt2-rm whose tokenizer has one token for BOS, EOS and unknown
  (GPT-2's ``<|endoftext|>``) and whose chat template closes no turn; ``shared-eos-rm`` the
  same tokenizer with the template closing each turn with it (correct);
- ``short-limit-rm``: gpt2-rm whose tokenizer says ``model_max_length`` 40 while the model
  reads 256 positions;
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
from tokenizers import processors

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

BLIND_MODELING = '''
"""A BERT reward model read at its [CLS] token; ``mask_blind`` never passes the attention
mask on, so [CLS] attends to padding."""

import torch
from transformers import BertConfig, BertModel, BertPreTrainedModel
from transformers.modeling_outputs import SequenceClassifierOutput


class BlindConfig(BertConfig):
    model_type = "mask-blind-bert-rm"

    def __init__(self, mask_blind=False, **kwargs):
        self.mask_blind = mask_blind
        super().__init__(**kwargs)


class BlindRewardModel(BertPreTrainedModel):
    config_class = BlindConfig

    def __init__(self, config):
        super().__init__(config)
        self.bert = BertModel(config)
        self.reward_head = torch.nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, **kwargs):
        mask = None if self.config.mask_blind else attention_mask
        hidden = self.bert(
            input_ids, attention_mask=mask, token_type_ids=token_type_ids
        ).last_hidden_state
        return SequenceClassifierOutput(logits=self.reward_head(hidden[:, 0]))
'''


def _modeling_module(folder: Path, name: str = "modeling_pooled", code: str = MODELING):
    """The modeling code as an importable module file (save_pretrained copies it)."""
    path = folder / f"{name}.py"
    path.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
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


def build_blind(folder: Path, *, mask_blind: bool) -> Path:
    """A BERT RM with the DeBERTa-style pair tokenizer and the BlindRewardModel class (remote
    code: load it with trust_remote_code)."""
    name = "mask-blind-rm" if mask_blind else "masked-rm"
    folder.mkdir(parents=True, exist_ok=True)
    module = _modeling_module(folder, "modeling_blind", BLIND_MODELING)
    tok = _tiny_hf.tokenizer("pair")
    config = module.BlindConfig(
        mask_blind=mask_blind,
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=256,
        type_vocab_size=2,
        initializer_range=0.5,
        pad_token_id=tok.pad_token_id,
        num_labels=1,
    )
    module.BlindConfig.register_for_auto_class()
    module.BlindRewardModel.register_for_auto_class("AutoModelForSequenceClassification")
    torch.manual_seed(13)
    model = module.BlindRewardModel(config)
    path = folder / name
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def _with_template(folder: Path, name: str, template: str, adds: str | None = None) -> Path:
    """llama-rm saved as ``name`` with chat template ``template``; ``adds``: the special
    token its tokenizer puts around every text it encodes ("<s>" before, "</s>" after)."""
    source = _tiny_hf.build("llama-rm", folder / f"{name}-source")
    tok = transformers.AutoTokenizer.from_pretrained(source)
    if adds is not None:
        single = f"{adds} $A" if adds == "<s>" else f"$A {adds}"
        tok._tokenizer.post_processor = processors.TemplateProcessing(
            single=single,
            pair=single + " $B",
            special_tokens=[(adds, tok.convert_tokens_to_ids(adds))],
        )
    tok.chat_template = template
    model = transformers.AutoModelForSequenceClassification.from_pretrained(source)
    target = folder / name
    model.save_pretrained(target)
    tok.save_pretrained(target)
    return target


#: INST_TEMPLATE less its BOS, and less the EOS that closes each answer
NO_BOS_TEMPLATE = _tiny_hf.INST_TEMPLATE.removeprefix("{{ bos_token }}")
NO_EOS_TEMPLATE = _tiny_hf.INST_TEMPLATE.replace("{{ eos_token }}", "")


def build_no_bos(folder: Path) -> Path:
    return _with_template(folder, "no-bos-rm", NO_BOS_TEMPLATE, adds="<s>")


def build_no_eos(folder: Path, *, tokenizer_adds: bool = False) -> Path:
    """``tokenizer_adds``: its tokenizer puts an EOS after every text (the template drops it)."""
    if tokenizer_adds:
        return _with_template(folder, "dropped-eos-rm", NO_EOS_TEMPLATE, adds="</s>")
    return _with_template(folder, "no-eos-rm", NO_EOS_TEMPLATE)


def build_shared_eos(folder: Path, *, closes: bool) -> Path:
    """gpt2-rm whose tokenizer writes one token as BOS, EOS and unknown, as GPT-2's does;
    ``closes``: its chat template closes each turn with it (TURN_TEMPLATE), else none."""
    path = _tiny_hf.build("gpt2-rm", folder / "shared-eos-source")
    tok = transformers.AutoTokenizer.from_pretrained(
        path, bos_token="</s>", eos_token="</s>", unk_token="</s>"
    )
    template = _tiny_hf.TURN_TEMPLATE
    tok.chat_template = template if closes else template.replace("{{ eos_token }}", "")
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path)
    target = folder / ("shared-eos-rm" if closes else "shared-eos-unclosed-rm")
    model.save_pretrained(target)
    tok.save_pretrained(target)
    return target


def build_short_limit(folder: Path, limit: int = 40) -> Path:
    """gpt2-rm whose tokenizer claims a limit of ``limit`` tokens (the model reads 256)."""
    path = _tiny_hf.build("gpt2-rm", folder / "short-limit-source")
    tok = transformers.AutoTokenizer.from_pretrained(path, model_max_length=limit)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path)
    target = folder / "short-limit-rm"
    model.save_pretrained(target)
    tok.save_pretrained(target)
    return target


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
