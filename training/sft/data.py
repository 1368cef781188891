"""Turn demos into token sequences with an assistant-only loss mask.

Tokens come from the serving path itself: :meth:`TransformersPolicy.encode_messages` renders the
conversation with the model's chat template (mapping ``tool`` messages exactly as serving does).
Assistant turn *i* is the span between the prompt the policy sees before it
(``encode(messages[:i], add_generation_prompt=True)``) and the end-of-turn token that closes it,
so every trained token is one the policy would generate at that point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from paraagent_runtime import ConfigError, Message

from ..demos.dataset import Demo

__all__ = ["ChatEncoder", "TokenizedDemos", "encode_demo", "tokenize_demos"]


class ChatEncoder(Protocol):
    """Anything that renders messages to token ids like the policy does (``TransformersPolicy``)."""

    def encode_messages(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """Token ids of ``messages`` under the chat template."""
        ...


@dataclass
class TokenizedDemos:
    """Training rows (``input_ids`` + ``assistant_masks``) and what was dropped on the way."""

    rows: list[dict[str, list[int]]] = field(default_factory=list)
    dropped_long: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    no_loss: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        """Total tokens over all rows."""
        return sum(len(row["input_ids"]) for row in self.rows)

    @property
    def trained_tokens(self) -> int:
        """Tokens that carry loss (assistant tokens)."""
        return sum(sum(row["assistant_masks"]) for row in self.rows)


def encode_demo(
    messages: Sequence[Message],
    encoder: ChatEncoder,
    eos_ids: Sequence[int],
    *,
    skip_turns: Sequence[int] = (),
) -> tuple[list[int], list[int]]:
    """``(input_ids, assistant_mask)`` of one conversation.

    ``skip_turns`` are assistant turn indices (0-based) left out of the loss: a demo's injected
    mistake stays in the context the recovery learns from, but is never itself imitated.

    Raises:
        ConfigError: the chat template is not prefix-consistent (a conversation's rendering does
            not start with the rendering of its prompt), so assistant spans cannot be located.
    """
    full = encoder.encode_messages(messages, add_generation_prompt=False)
    mask = [0] * len(full)
    assistant = -1
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue
        assistant += 1
        if assistant in skip_turns:
            continue
        prompt = encoder.encode_messages(messages[:index], add_generation_prompt=True)
        upto = encoder.encode_messages(messages[: index + 1], add_generation_prompt=False)
        if full[: len(prompt)] != prompt or full[: len(upto)] != upto:
            raise ConfigError(
                "the chat template is not prefix-consistent: the rendering of a conversation "
                "does not start "
                "with the rendering of its prompt, so assistant tokens cannot be masked"
            )
        end = len(upto)
        closing = [i for i in range(len(prompt), end) if full[i] in eos_ids]
        if closing:
            end = closing[-1] + 1
        for i in range(len(prompt), end):
            mask[i] = 1
    return full, mask


def tokenize_demos(
    demos: Sequence[Demo],
    encoder: ChatEncoder,
    *,
    eos_ids: Sequence[int],
    max_length: int,
    drop_long: bool = True,
) -> TokenizedDemos:
    """Tokenize demos; ones over ``max_length`` are dropped or truncated (keeping the start)."""
    out = TokenizedDemos()
    for demo in demos:
        ids, mask = encode_demo(demo.messages, encoder, eos_ids, skip_turns=demo.mistake_turns)
        if len(ids) > max_length:
            if drop_long:
                out.dropped_long.append(demo.id)
                continue
            ids, mask = ids[:max_length], mask[:max_length]
            out.truncated.append(demo.id)
        if any(mask):
            out.rows.append({"input_ids": ids, "assistant_masks": mask})
        else:
            out.no_loss.append(demo.id)
    return out
