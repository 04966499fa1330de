"""Served reward models: a reward model behind an HTTP server, one component per protocol
(docs/real-models.md, "Served reward models"):

* ``vllm-pooling``: vLLM's ``POST /pooling`` (``vllm serve MODEL --runner pooling``);
* ``vllm-classify``: vLLM's ``POST /classify``;
* ``openrlhf-rm``: OpenRLHF's ``POST /get_reward`` (``python -m openrlhf.cli.serve_rm``);
* ``sglang-classify``: SGLang's ``POST /classify`` (``python -m sglang.launch_server
  --is-embedding``).

They share the judges' client (concurrency, retries, the request cache, the key from the
environment) and run the scoring checks a server allows (:mod:`.checks`).  Nothing here imports
torch: a tokenizer is loaded (the hf extra) only where rmaudit writes the conversation.
"""

from rmaudit import hookimpl
from rmaudit.backends.served.protocols import PROTOCOLS

from .model import ServedRM
from .options import ServedRMOptions, TextServedRMOptions


class VllmPooling(ServedRM):
    """A reward model served by vLLM's pooling runner, scored through POST /pooling."""

    name = "vllm-pooling"
    protocol = PROTOCOLS["vllm-pooling"]


class VllmClassify(ServedRM):
    """A reward model served by vLLM's pooling runner, scored through POST /classify."""

    name = "vllm-classify"
    protocol = PROTOCOLS["vllm-classify"]


class OpenRLHFRM(ServedRM):
    """A reward model served by OpenRLHF's serve_rm, scored through POST /get_reward."""

    name = "openrlhf-rm"
    Options = TextServedRMOptions
    protocol = PROTOCOLS["openrlhf-rm"]


class SGLangClassify(ServedRM):
    """A reward model served by SGLang (--is-embedding), scored through POST /classify."""

    name = "sglang-classify"
    Options = TextServedRMOptions
    protocol = PROTOCOLS["sglang-classify"]


#: the served reward models by protocol name (``--rm-protocol``)
SERVED_RMS: dict[str, type[ServedRM]] = {
    rm.name: rm for rm in (VllmPooling, VllmClassify, OpenRLHFRM, SGLangClassify)
}

__all__ = [
    "SERVED_RMS",
    "OpenRLHFRM",
    "SGLangClassify",
    "ServedRM",
    "ServedRMOptions",
    "VllmClassify",
    "VllmPooling",
]


@hookimpl
def register_reward_models(register):
    for rm in SERVED_RMS.values():
        register(rm)
