"""Prompts and responses as chat messages, for components that talk to chat models.

Conventions every prompt source and policy follows (so policies, judges and reward models
agree on what a conversation is):

* ``prompt.meta["messages"]``: the chat messages the prompt consists of (OpenAI format), for a
  prompt that is a dialogue context (Anthropic HH); absent: one user message, the prompt text.
* ``prompt.meta["turns"]``: the user turns of a multi-turn prompt set (MT-bench), asked one
  after another; the policy answers each, ``response.meta["turns"]`` holds the answers and
  ``response.text`` is the last one.
"""

from __future__ import annotations

from typing import Any

from rmaudit.components import Prompt, Response
from rmaudit.errors import BadInput

Message = dict[str, str]


def prompt_messages(prompt: Prompt) -> list[Message]:
    """The messages a policy answers: the prompt's own, or one user message."""
    messages = prompt.meta.get("messages")
    if messages is None:
        return [{"role": "user", "content": prompt.text}]
    if not (isinstance(messages, list) and messages and all(_is_message(m) for m in messages)):
        raise BadInput(
            f"prompt {prompt.id}: expected meta 'messages' to be a list of "
            f"{{role, content}} objects",
            value=messages,
        )
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def user_turns(prompt: Prompt) -> list[str] | None:
    """The user turns of a multi-turn prompt set, or None for a single-turn prompt."""
    turns = prompt.meta.get("turns")
    if turns is None:
        return None
    if not (isinstance(turns, list) and turns and all(isinstance(t, str) for t in turns)):
        raise BadInput(
            f"prompt {prompt.id}: expected meta 'turns' to be a list of strings", value=turns
        )
    return turns


def conversation_messages(prompt: Prompt, response: Response) -> list[Message]:
    """The whole conversation a response ends: what a reward model scores."""
    turns = user_turns(prompt)
    answers = response.meta.get("turns")
    if turns is not None and isinstance(answers, list) and len(answers) == len(turns):
        return [
            m
            for question, answer in zip(turns, answers, strict=True)
            for m in (
                {"role": "user", "content": question},
                {"role": "assistant", "content": answer},
            )
        ]
    return prompt_messages(prompt) + [{"role": "assistant", "content": response.text}]


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("role") in ("system", "user", "assistant")
        and isinstance(value.get("content"), str)
    )
