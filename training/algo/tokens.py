"""Per-token training tensors from an episode's recorded tokens (token-in-token-out).

Each :class:`~paraagent_runtime.trajectory.TurnRecord` holds the exact prompt ids the policy saw
and the ids it sampled, with their log-probs. Nothing is re-tokenized: a row is the prompt ids of a
turn followed by its sampled ids. Consecutive turns share one row when the next turn's prompt
extends the row (the usual case: the chat template renders the previous turn back to the same
ids); the ids in between — end-of-turn markers, the tool message, the next assistant header — are
context, masked out of the loss. When a prompt does not extend the row (the decoded text of a turn
re-tokenizes differently, e.g. after a stop string), the turn starts a new row with its own prompt,
so every sampled token is trained on exactly the context it was sampled from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from paraagent_runtime import ConfigError, Episode

__all__ = ["TokenBatch", "TokenRow", "collate", "episode_rows"]


@dataclass
class TokenRow:
    """One training sequence of an episode.

    Attributes:
        input_ids: Prompt and sampled ids.
        assistant_mask: True on ids the policy sampled.
        turn_index: The turn of each sampled id (``-1`` on context ids).
        old_logprobs: The sampling policy's log-prob of each sampled id (0 on context ids).
    """

    input_ids: list[int] = field(default_factory=list)
    assistant_mask: list[bool] = field(default_factory=list)
    turn_index: list[int] = field(default_factory=list)
    old_logprobs: list[float] = field(default_factory=list)

    def extend(
        self, ids: Sequence[int], *, turn: int = -1, logprobs: Sequence[float] | None = None
    ) -> None:
        """Append context ids (``turn == -1``) or one turn's sampled ids with their log-probs."""
        sampled = turn >= 0
        self.input_ids.extend(ids)
        self.assistant_mask.extend([sampled] * len(ids))
        self.turn_index.extend([turn] * len(ids))
        self.old_logprobs.extend(list(logprobs) if logprobs is not None else [0.0] * len(ids))


def episode_rows(episode: Episode) -> list[TokenRow]:
    """The episode's turns as token rows (usually one row; more when a prompt is not a prefix).

    Raises:
        ConfigError: a turn lacks prompt ids, sampled ids or log-probs, or their lengths differ
            (the episode came from a backend without token output, e.g. a scripted policy).
    """
    rows: list[TokenRow] = []
    for turn in episode.turns:
        prompt, sampled, logprobs = turn.prompt_token_ids, turn.token_ids, turn.logprobs
        if prompt is None or sampled is None or logprobs is None:
            raise ConfigError(
                f"episode {episode.id} turn {turn.index} has no token ids/log-probs; RL needs a "
                "policy backend that returns them (transformers or vLLM)"
            )
        if len(sampled) != len(logprobs):
            raise ConfigError(
                f"episode {episode.id} turn {turn.index}: {len(sampled)} token ids but "
                f"{len(logprobs)} log-probs"
            )
        current = rows[-1] if rows else None
        if current is not None and prompt[: len(current.input_ids)] == current.input_ids:
            current.extend(prompt[len(current.input_ids) :])
        else:
            current = TokenRow()
            current.extend(prompt)
            rows.append(current)
        current.extend(sampled, turn=turn.index, logprobs=logprobs)
    return rows


@dataclass
class TokenBatch:
    """Right-padded tensors of many rows (``B`` rows, ``T`` columns).

    Attributes:
        input_ids: ``[B, T]`` long.
        attention_mask: ``[B, T]`` long, 1 on real ids.
        assistant_mask: ``[B, T]`` bool, true on sampled ids (the loss mask).
        turn_index: ``[B, T]`` long, the turn of each sampled id, -1 elsewhere.
        old_logprobs: ``[B, T]`` float, sampling log-probs (0 elsewhere).
        row_episode: ``[B]`` long, the episode (index in the collated list) of each row.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    assistant_mask: torch.Tensor
    turn_index: torch.Tensor
    old_logprobs: torch.Tensor
    row_episode: torch.Tensor

    @property
    def n_assistant_tokens(self) -> int:
        """Sampled ids in the batch."""
        return int(self.assistant_mask.sum())

    def select(self, rows: torch.Tensor | Sequence[int]) -> TokenBatch:
        """The sub-batch of the given row indices (for micro-batching)."""
        index = torch.as_tensor(rows, dtype=torch.long)
        return TokenBatch(
            **{name: getattr(self, name)[index] for name in self.__dataclass_fields__}
        )


def collate(
    episodes_rows: Sequence[Sequence[TokenRow]], *, pad_token_id: int, max_length: int | None = None
) -> TokenBatch:
    """Pad the rows of many episodes into one :class:`TokenBatch`.

    Args:
        episodes_rows: For each episode, its rows (from :func:`episode_rows`).
        pad_token_id: The id written in padding.
        max_length: Cut rows longer than this (their last ids are dropped).

    Raises:
        ConfigError: there is no row, or ``max_length`` is below 2.
    """
    if max_length is not None and max_length < 2:
        raise ConfigError(f"collate: max_length must be >= 2, got {max_length}")
    flat = [(episode, row) for episode, rows in enumerate(episodes_rows) for row in rows]
    if not flat:
        raise ConfigError("collate: no token rows to collate")
    width = max(len(row.input_ids) for _, row in flat)
    if max_length is not None:
        width = min(width, max_length)
    shape = (len(flat), width)
    batch = TokenBatch(
        input_ids=torch.full(shape, pad_token_id, dtype=torch.long),
        attention_mask=torch.zeros(shape, dtype=torch.long),
        assistant_mask=torch.zeros(shape, dtype=torch.bool),
        turn_index=torch.full(shape, -1, dtype=torch.long),
        old_logprobs=torch.zeros(shape, dtype=torch.float32),
        row_episode=torch.tensor([episode for episode, _ in flat], dtype=torch.long),
    )
    for b, (_, row) in enumerate(flat):
        n = min(len(row.input_ids), width)
        batch.input_ids[b, :n] = torch.tensor(row.input_ids[:n], dtype=torch.long)
        batch.attention_mask[b, :n] = 1
        batch.assistant_mask[b, :n] = torch.tensor(row.assistant_mask[:n], dtype=torch.bool)
        batch.turn_index[b, :n] = torch.tensor(row.turn_index[:n], dtype=torch.long)
        batch.old_logprobs[b, :n] = torch.tensor(row.old_logprobs[:n], dtype=torch.float32)
    return batch
