"""Hugging Face machinery behind the ``hf-classifier``, ``dpo-implicit`` and ``hf-causal-lm``
components (``rmaudit.default_plugins.huggingface``).

``batching`` is plain Python, ``scoring_checks`` (the scoring checks' findings) numpy only, and
``hub`` (whether a model id can be reached) needs only the standard library; ``runtime`` and
``sampling`` import torch and transformers (the ``hf`` extra), so the plugin module imports
them only when a component first runs.
"""
