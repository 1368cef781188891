"""Rendering a conversation to token ids with a Hugging Face tokenizer's chat template."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .base import Message

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = ["ChatTemplate", "token_texts"]

logger = logging.getLogger(__name__)


class ChatTemplate:
    """A tokenizer's chat template, remembering whether it accepts the ``tool`` role.

    Args:
        tokenizer: a tokenizer with a chat template.
        model_name: the model's name, for messages.

    Raises:
        ConfigError: the tokenizer has no chat template.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, model_name: str) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ConfigError(f"the tokenizer of {model_name} has no chat template")
        self.tokenizer = tokenizer
        self.model_name = model_name
        self._tool_role_supported: bool | None = None

    def encode(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """The token ids of the conversation.

        ``tool`` messages keep their role when the template accepts it, and otherwise become
        ``user`` messages holding the tool responses.
        """
        has_tool_role = any(message.role == "tool" for message in messages)
        if has_tool_role and self._tool_role_supported is not False:
            try:
                ids = self._apply(messages, tools, add_generation_prompt, map_tool_role=False)
            except Exception as exc:
                # Templates reject roles they do not know in many ways (jinja raise_exception,
                # TemplateError, KeyError); fall back to user messages once and remember it.
                logger.info(
                    "chat template of %s rejects the tool role (%s); using user",
                    self.model_name,
                    exc,
                )
                self._tool_role_supported = False
            else:
                self._tool_role_supported = True
                return ids
        return self._apply(messages, tools, add_generation_prompt, map_tool_role=has_tool_role)

    def token_texts(self, token_ids: Sequence[int]) -> list[str]:
        """The text of each token id on its own (for log-prob listings)."""
        return token_texts(self.tokenizer, token_ids)

    def _apply(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None,
        add_generation_prompt: bool,
        *,
        map_tool_role: bool,
    ) -> list[int]:
        rendered: list[dict[str, Any]] = []
        for message in messages:
            role = "user" if map_tool_role and message.role == "tool" else message.role
            entry: dict[str, Any] = {"role": role, "content": message.content}
            if message.tool_calls:
                entry["tool_calls"] = message.tool_calls
            rendered.append(entry)
        encoded = self.tokenizer.apply_chat_template(
            rendered,
            tools=list(tools) if tools else None,
            add_generation_prompt=add_generation_prompt,
            tokenize=True,
            return_dict=True,
        )
        return list(encoded["input_ids"])


def token_texts(tokenizer: PreTrainedTokenizerBase, token_ids: Sequence[int]) -> list[str]:
    """The text of each token id on its own (for log-prob listings); needs no chat template."""
    return [tokenizer.decode([token], clean_up_tokenization_spaces=False) for token in token_ids]
