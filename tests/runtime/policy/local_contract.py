"""What every local backend must do the same way: shared by the backends' test modules."""

from __future__ import annotations

from paraagent_runtime.policy import Message, Policy, SamplingParams

CONVERSATION = [
    Message(role="system", content="You are an agent."),
    Message(role="user", content="Find the weather."),
    Message(
        role="assistant", content='<tool_call>{"name": "search_tools", "arguments": {}}</tool_call>'
    ),
    Message(role="tool", content='<tool_response name="search_tools" id="c0">[]</tool_response>'),
]


async def check_stop_string_and_streaming(policy: Policy, *, max_tokens: int) -> None:
    """A stop string cuts text and tokens where it starts; streamed deltas add up to the text."""
    sampling = SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=3)
    full = await policy.complete(CONVERSATION, sampling=sampling)
    assert full.finish_reason == "length" and len(full.token_ids) == max_tokens
    stop = full.text[len(full.text) // 2 :][:2]
    assert stop
    deltas: list[str] = []
    cut = await policy.complete(
        CONVERSATION, sampling=sampling.model_copy(update={"stop": [stop]}), on_text=deltas.append
    )
    assert cut.text == full.text[: full.text.index(stop)]
    assert cut.finish_reason == "stop"
    assert cut.token_ids == full.token_ids[: len(cut.token_ids)]
    assert "".join(deltas) == cut.text
