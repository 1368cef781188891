"""Reusing the attention keys and values of earlier turns: a prefix cache for local generation.

Each turn of an episode sends a prompt that starts with the previous turn's prompt and answer, so
without a cache every turn prefills the whole episode again (on CPU, prefill of a ~1.2k-token
prompt costs more than generating 192 tokens). :class:`PrefixCache` keeps the keys and values of
recent sequences; a new prompt reuses those of its longest common prefix with any of them and only
prefills the rest. The match is on token ids, so a re-rendered chat that tokenizes an earlier
answer differently still reuses everything before the first differing token.

:func:`layout_batch` assembles a batch whose rows reuse prefixes of different lengths: row ``i`` is
``[pad][cached prefix][pad][uncached suffix]``, left-aligned so every cached prefix ends at the
same column. The padding is masked out, and ``generate`` derives position ids from the attention
mask, so each row sees exactly the positions it would see alone.

Only plain ``DynamicLayer`` caches (full attention, no sliding window) are reused.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError

if TYPE_CHECKING:
    import torch
    from transformers import Cache

__all__ = [
    "BatchLayout",
    "NO_MATCH",
    "Match",
    "PrefixCache",
    "PrefixCacheStats",
    "cache_is_reusable",
    "layout_batch",
    "row_key_values",
]

KeyValues = list[tuple["torch.Tensor", "torch.Tensor"]]
"""Per layer, the keys and values of one sequence, each ``(heads, tokens, head_dim)``."""


@dataclass
class PrefixCacheStats:
    """Counters of a :class:`PrefixCache`.

    Attributes:
        lookups: prompts looked up.
        hits: lookups that reused at least one token.
        reused_tokens: prompt tokens taken from the cache instead of prefilled.
        prompt_tokens: prompt tokens looked up in all.
        evicted: entries dropped to stay within the memory budget.
    """

    lookups: int = 0
    hits: int = 0
    reused_tokens: int = 0
    prompt_tokens: int = 0
    evicted: int = 0

    @property
    def reuse_ratio(self) -> float:
        """The share of prompt tokens that were not prefilled."""
        return self.reused_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass(eq=False)
class _Entry:
    token_ids: np.ndarray
    key_values: KeyValues
    nbytes: int


@dataclass(frozen=True)
class Match:
    """The cached prefix a prompt reuses: ``length`` tokens of ``entry`` (none when 0)."""

    entry: _Entry | None
    length: int


NO_MATCH = Match(None, 0)
"""A prompt that reuses nothing."""


class PrefixCache:
    """Keys and values of recent sequences, reused by prompts that share a prefix with them.

    Args:
        max_bytes: the memory budget of the cached tensors; least recently used entries go first.
        min_match: a shorter common prefix is not worth the padding it adds to a batch.

    Thread-safe. :meth:`clear` must be called whenever the weights change (an RL update, another
    adapter): cached keys and values are only valid for the weights that computed them.
    """

    def __init__(self, max_bytes: int, *, min_match: int = 16) -> None:
        if max_bytes < 0:
            raise ConfigError(f"the prefix cache budget must be >= 0 bytes, got {max_bytes}")
        self.max_bytes = max_bytes
        self.min_match = min_match
        self.stats = PrefixCacheStats()
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._keys = itertools.count()
        self._bytes = 0
        self._generation = 0
        self._lock = threading.Lock()

    @property
    def generation(self) -> int:
        """Bumped by every :meth:`clear`; a batch started before a clear must not :meth:`add`."""
        return self._generation

    @property
    def nbytes(self) -> int:
        """The bytes of cached tensors now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every entry (the weights changed)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self._generation += 1

    def match(self, prompt_ids: Sequence[int]) -> Match:
        """The longest cached prefix of ``prompt_ids``, leaving at least one token to prefill."""
        prompt = np.asarray(prompt_ids, dtype=np.int64)
        best, best_key = NO_MATCH, -1
        with self._lock:
            for key, entry in self._entries.items():
                length = _common_prefix(prompt, entry.token_ids)
                if length > best.length:
                    best = Match(entry, length)
                    best_key = key
            self.stats.lookups += 1
            self.stats.prompt_tokens += len(prompt)
            length = min(best.length, len(prompt) - 1)
            if length < self.min_match:
                return NO_MATCH
            self._entries.move_to_end(best_key)
            self.stats.hits += 1
            self.stats.reused_tokens += length
        return Match(best.entry, length)

    def add(self, token_ids: Sequence[int], key_values: KeyValues, *, generation: int) -> None:
        """Cache the keys and values of ``token_ids`` (one ``(heads, len, dim)`` pair per layer).

        Entries that are prefixes of the new one are dropped (it serves every prompt they
        served). Ignored when the cache was cleared since ``generation`` was read, or when the
        entry alone exceeds the budget.
        """
        ids = np.asarray(token_ids, dtype=np.int64)
        nbytes = sum(k.nbytes + v.nbytes for k, v in key_values)
        if len(ids) < self.min_match or nbytes > self.max_bytes:
            return
        with self._lock:
            if generation != self._generation:
                return
            for key, entry in list(self._entries.items()):
                if len(entry.token_ids) <= len(ids) and _common_prefix(ids, entry.token_ids) == len(
                    entry.token_ids
                ):
                    self._drop(key)
            self._entries[next(self._keys)] = _Entry(ids, key_values, nbytes)
            self._bytes += nbytes
            while self._bytes > self.max_bytes:
                self._drop(next(iter(self._entries)))
                self.stats.evicted += 1

    def _drop(self, key: int) -> None:
        self._bytes -= self._entries.pop(key).nbytes


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differs = np.flatnonzero(a[:n] != b[:n])
    return int(differs[0]) if len(differs) else n


def cache_is_reusable(cache: Cache | None) -> bool:
    """Whether ``cache`` is a plain full-attention ``DynamicCache`` whose rows can be reused."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    return isinstance(cache, DynamicCache) and all(
        type(layer) is DynamicLayer and layer.keys is not None for layer in cache.layers
    )


@dataclass
class BatchLayout:
    """A left-padded batch whose rows may start from cached keys and values.

    Attributes:
        input_ids: ``(rows, width)`` token ids, cached columns included (``generate`` skips them).
        attention_mask: 1 on real tokens, 0 on padding.
        cache: the cached columns' keys and values, or ``None`` when no row reuses a prefix.
        width: the prompt width; generated tokens start at this column.
        positions: per row, the columns holding its prompt tokens, in order.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    cache: Cache | None
    width: int
    positions: list[torch.Tensor]


def layout_batch(
    prompts: Sequence[Sequence[int]], matches: Sequence[Match], pad_id: int, device: torch.device
) -> BatchLayout:
    """Lay out ``prompts`` (each reusing its ``matches`` entry) as one batch for ``generate``."""
    import torch
    from transformers import DynamicCache

    cached = max(match.length for match in matches)
    suffix = max(len(prompt) - match.length for prompt, match in zip(prompts, matches, strict=True))
    width = cached + suffix
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros_like(input_ids)
    positions = []
    for row, (prompt, match) in enumerate(zip(prompts, matches, strict=True)):
        prefix_columns = torch.arange(cached - match.length, cached)
        suffix_columns = torch.arange(width - (len(prompt) - match.length), width)
        columns = torch.cat([prefix_columns, suffix_columns])
        input_ids[row, columns] = torch.tensor(list(prompt), dtype=torch.long)
        attention_mask[row, columns] = 1
        positions.append(columns)
    cache = None
    if cached:
        reference = next(match.entry for match in matches if match.entry is not None)
        layers = []
        for layer, (key, value) in enumerate(reference.key_values):
            keys = key.new_zeros((len(prompts), key.shape[0], cached, key.shape[2]))
            values = value.new_zeros((len(prompts), value.shape[0], cached, value.shape[2]))
            for row, match in enumerate(matches):
                if match.entry is not None and match.length:
                    row_key, row_value = match.entry.key_values[layer]
                    keys[row, :, cached - match.length :] = row_key[:, : match.length]
                    values[row, :, cached - match.length :] = row_value[:, : match.length]
            layers.append((keys.to(device), values.to(device)))
        cache = DynamicCache(ddp_cache_data=layers)
    return BatchLayout(input_ids.to(device), attention_mask.to(device), cache, width, positions)


def row_key_values(cache: Cache, layout: BatchLayout, row: int, generated: int) -> KeyValues:
    """Row ``row``'s keys and values for its prompt and first ``generated`` sampled tokens."""
    import torch

    available = cache.get_seq_length() - layout.width
    generated = max(0, min(generated, available))
    columns = torch.cat(
        [layout.positions[row], torch.arange(layout.width, layout.width + generated)]
    ).to(cache.layers[0].keys.device)
    return [
        (
            layer.keys[row].index_select(1, columns),
            layer.values[row].index_select(1, columns),
        )
        for layer in cache.layers
    ]
