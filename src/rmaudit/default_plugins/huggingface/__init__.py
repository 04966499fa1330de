"""Hugging Face components: sequence-classifier RMs (``classifier``), DPO implicit RMs
(``dpo``), a causal LM as a judge under audit (``judge``), a causal-LM policy
(``causal_lm``) and process reward models
(``prm_classifier``, ``prm_step_tag``, sharing ``process``); what they share is in
``common``.

They need the ``hf`` extra (torch, transformers).  Nothing here imports either at module
import — ``rmaudit plugins`` and the main audit work without them — and a component loads
its model on first use, so ``rmaudit run --dry-run`` on a recipe naming a 7B hub model
loads nothing.  ``trust_remote_code`` is passed to every ``from_pretrained`` call and is
off unless the recipe turns it on.  How models run (batches, packing, devices) lives in
:mod:`rmaudit.backends.hf`.
"""

from rmaudit import hookimpl
from rmaudit.default_plugins.huggingface.causal_lm import HFCausalLM
from rmaudit.default_plugins.huggingface.classifier import HFClassifier
from rmaudit.default_plugins.huggingface.dpo import DPOImplicit
from rmaudit.default_plugins.huggingface.judge import HFJudgeRM
from rmaudit.default_plugins.huggingface.prm_classifier import HFPRMClassifier
from rmaudit.default_plugins.huggingface.prm_step_tag import HFPRMStepTag

__all__ = [
    "DPOImplicit",
    "HFCausalLM",
    "HFClassifier",
    "HFJudgeRM",
    "HFPRMClassifier",
    "HFPRMStepTag",
]


@hookimpl
def register_reward_models(register):
    register(HFClassifier)
    register(DPOImplicit)
    register(HFJudgeRM)


@hookimpl
def register_process_reward_models(register):
    register(HFPRMClassifier)
    register(HFPRMStepTag)


@hookimpl
def register_reference_policies(register):
    register(HFCausalLM)
