"""Reward models behind HTTP servers: each server's protocol (:mod:`.protocols`: vLLM's
pooling runner, OpenRLHF's remote RM, SGLang's reward-model endpoint) and the findings of
their scoring checks that only a server has (:mod:`.findings`).  The requests go through the
judges' client (:mod:`rmaudit.backends.openai_api`)."""
