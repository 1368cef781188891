from __future__ import annotations

import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.trajectory import Episode, TurnRecord
from training.algo import collate, episode_rows


def turn(index: int, prompt: list[int], sampled: list[int]) -> TurnRecord:
    return TurnRecord(
        index=index,
        text="",
        prompt_token_ids=prompt,
        token_ids=sampled,
        logprobs=[-0.5] * len(sampled),
    )


def test_turns_whose_prompt_extends_the_row_share_it() -> None:
    episode = Episode(task="t", turns=[turn(0, [1, 2], [3, 4]), turn(1, [1, 2, 3, 4, 9, 9], [5])])
    (row,) = episode_rows(episode)
    assert row.input_ids == [1, 2, 3, 4, 9, 9, 5]
    assert row.assistant_mask == [False, False, True, True, False, False, True]
    assert row.turn_index == [-1, -1, 0, 0, -1, -1, 1]
    assert row.old_logprobs == [0.0, 0.0, -0.5, -0.5, 0.0, 0.0, -0.5]


def test_a_prompt_that_is_not_a_prefix_starts_a_new_row() -> None:
    episode = Episode(task="t", turns=[turn(0, [1, 2], [3, 4]), turn(1, [1, 2, 7, 9], [5, 6])])
    first, second = episode_rows(episode)
    assert first.input_ids == [1, 2, 3, 4] and second.input_ids == [1, 2, 7, 9, 5, 6]
    assert second.turn_index == [-1, -1, -1, -1, 1, 1]
    batch = collate([[first, second], [first]], pad_token_id=0, max_length=5)
    assert batch.input_ids.shape == (3, 5)
    assert batch.row_episode.tolist() == [0, 0, 1]
    assert batch.attention_mask[0].tolist() == [1, 1, 1, 1, 0]
    assert batch.assistant_mask[1].tolist() == [False, False, False, False, True]
    assert batch.n_assistant_tokens == 2 + 1 + 2
    # The second row's last sampled id (6) lies past max_length: 5 of the 6 sampled ids remain.
    assert batch.assistant_mask[1].sum() == 1 and batch.input_ids[1].tolist() == [1, 2, 7, 9, 5]
    assert batch.select([2]).input_ids.tolist() == [[1, 2, 3, 4, 0]]


def test_episodes_without_tokens_are_refused() -> None:
    episode = Episode(task="t", turns=[TurnRecord(index=0, text="<answer>x</answer>")])
    with pytest.raises(ConfigError, match="token ids"):
        episode_rows(episode)
    broken = Episode(
        task="t",
        turns=[
            TurnRecord(index=0, text="", prompt_token_ids=[1], token_ids=[2, 3], logprobs=[0.0])
        ],
    )
    with pytest.raises(ConfigError, match="log-probs"):
        episode_rows(broken)


def test_collate_rejects_empty_input_and_tiny_max_length() -> None:
    with pytest.raises(ConfigError, match="no token rows"):
        collate([], pad_token_id=0)
    with pytest.raises(ConfigError, match="max_length"):
        collate([[]], pad_token_id=0, max_length=1)
