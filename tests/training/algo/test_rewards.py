from __future__ import annotations

import math

import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.tasks import GoldCall
from training.algo import RewardConfig, args_match, score_episode

from .episodes import call, execute, explore, run, task


async def test_sequential_success_scores_every_level_by_hand() -> None:
    flight = task("flight_arrival_weather")
    number = flight.calls[0].arguments["flight_number"]
    city = flight.calls[1].arguments["city"]
    episode = await run(
        flight,
        [
            explore(
                call("search_tools", query="flight by number", top_k=3),
                call("search_tools", query="current weather in a city", top_k=3),
            ),
            execute(call("aviation__get_flight", flight_number=number)),
            execute(call("weather__get_current_weather", city=city.upper())),
            f"<answer>{flight.gold_answer}</answer>",
        ],
    )
    rewards = score_episode(episode, flight)
    assert rewards.success and rewards.n_turns == 4
    assert [s.kind for s in rewards.steps] == ["explore", "execute", "execute", "final"]
    # explore: 0.2 format + 1.0 * (2 of 2 gold tools new); execute: 0.2 + 0.3 * 1 + 1.0 * 1/2.
    assert [round(s.value, 6) for s in rewards.steps] == [1.2, 1.0, 1.0, 0.2]
    explore_phase, execute_phase = rewards.phases
    assert explore_phase.turns == [0] and explore_phase.components["recall"] == 1.0
    assert execute_phase.turns == [1, 2]
    assert execute_phase.components == {"dag_completed": 1.0, "levels_per_turn": 1.0}
    assert execute_phase.value == pytest.approx(1.5)
    # correct 1 + format 0.2 * 1 + efficiency 0.3 * 1 (3 tool turns = depth 2 + 1 explore; 2 calls).
    assert rewards.trajectory == pytest.approx(1.5)


async def test_parallel_width_bonus_and_ndcg() -> None:
    weather = task("multi_city_weather")
    cities = [node.arguments["city"] for node in weather.calls]
    episode = await run(
        weather,
        [
            explore(call("search_tools", query="current weather conditions in a city", top_k=2)),
            execute(*(call("weather__get_current_weather", city=c) for c in cities)),
            f"<answer>{weather.gold_answer}</answer>",
        ],
    )
    rewards = score_episode(episode, weather)
    step = rewards.steps[1].components
    assert step["gold_calls"] == 1.0 and step["parallel"] == 1.0
    assert rewards.steps[1].value == pytest.approx(0.2 + 0.3 + 1.0 + 0.3)
    found_first = episode.turns[0].results[0].content[0]["name"] == "weather__get_current_weather"
    assert rewards.phases[0].components["ndcg"] == pytest.approx(
        1.0 if found_first else 1 / math.log2(3)
    )
    assert rewards.phases[0].components["used_share"] == pytest.approx(0.5)


async def test_a_chained_call_made_before_its_input_exists_is_premature() -> None:
    flight = task("flight_arrival_weather")
    number = flight.calls[0].arguments["flight_number"]
    weather = call("weather__get_current_weather", city="Atlantis City")  # a guessed arrival city
    episode = await run(
        flight,
        [
            explore(
                call("search_tools", query="flight by number", top_k=3),
                call("search_tools", query="current weather in a city", top_k=3),
            ),
            execute(call("aviation__get_flight", flight_number=number), weather),
            execute(weather),  # the flight is known now: wrong, but no longer premature
        ],
    )
    plain = score_episode(episode, flight)
    penalized = score_episode(episode, flight, RewardConfig(step_premature=0.3))
    assert [s.components["premature"] for s in penalized.steps[1:]] == [1.0, 0.0]
    assert plain.steps[1].components["premature"] == 1.0  # counted, weighted 0 by default
    assert penalized.steps[1].value == pytest.approx(plain.steps[1].value - 0.3)
    assert penalized.steps[2].value == pytest.approx(plain.steps[2].value)


async def test_duplicates_wrong_arguments_and_wrong_answer() -> None:
    weather = task("multi_city_weather")
    search = call("search_tools", query="current weather", top_k=1)
    episode = await run(
        weather,
        [
            explore(search),
            explore(search),
            execute(call("weather__get_current_weather", city="Atlantis City")),
            "<answer>It is sunny everywhere.</answer>",
        ],
    )
    rewards = score_episode(episode, weather)
    assert rewards.steps[1].components["duplicates"] == 1.0
    assert rewards.steps[1].value == pytest.approx(0.2 - 0.2)
    assert rewards.steps[2].components["gold_calls"] == 0.0
    assert len(rewards.phases) == 2 and rewards.phases[0].turns == [0, 1]
    assert not rewards.success
    assert rewards.trajectory_components == {
        "correct": 0.0,
        "format": 1.0,
        "efficiency": 0.0,
        "facts": 0.25,  # "sunny" is one city's sky: 1 of the 4 facts
    }


async def test_an_answer_with_some_gold_facts_gets_partial_credit() -> None:
    weather = task("multi_city_weather")
    cities = [node.arguments["city"] for node in weather.calls]
    first = weather.facts[0]
    assert all(fact.value != first.value for fact in weather.facts[1:])
    episode = await run(
        weather,
        [
            explore(call("search_tools", query="current weather conditions in a city", top_k=2)),
            execute(*(call("weather__get_current_weather", city=c) for c in cities)),
            f"<answer>{first.label}: {first.value}</answer>",
        ],
    )
    share = 1 / len(weather.facts)
    plain = score_episode(episode, weather)
    partial = score_episode(episode, weather, RewardConfig(traj_facts=0.5))
    assert not plain.success and len(weather.facts) >= 2
    assert plain.trajectory_components["facts"] == pytest.approx(share)
    assert plain.trajectory == pytest.approx(0.2)  # counted, weighted 0 by default
    assert partial.trajectory == pytest.approx(0.2 + 0.5 * share)


async def test_bound_arguments_resolve_from_observed_outputs() -> None:
    stock = task("stock_in_currency")
    first, second = stock.calls
    episode = await run(
        stock,
        [
            explore(
                call("search_tools", query="stock quote price", top_k=3),
                call("search_tools", query="convert currency amount", top_k=3),
            ),
            execute(call("finance__get_stock_quote", symbol=first.arguments["symbol"].lower())),
            execute(
                call(
                    "currency__convert_currency",
                    amount=second.arguments["amount"],
                    from_currency=second.arguments["from_currency"].lower(),
                    to_currency=second.arguments["to_currency"],
                )
            ),
        ],
    )
    assert episode.status == "error"  # the script ran out before answering
    rewards = score_episode(episode, stock)
    assert [s.components["gold_calls"] for s in rewards.steps[1:]] == [0.5, 0.5]
    assert rewards.phases[1].components == {"dag_completed": 1.0, "levels_per_turn": 1.0}
    assert rewards.trajectory == 0.0


async def test_calls_to_unloaded_tools_satisfy_nothing() -> None:
    stock = task("stock_in_currency")
    symbol = stock.calls[0].arguments["symbol"]
    episode = await run(
        stock, [execute(call("finance__get_stock_quote", symbol=symbol))], max_turns=1
    )
    rewards = score_episode(episode, stock)
    assert not episode.turns[0].results[0].ok
    assert rewards.steps[0].components["valid_calls"] == 0.0
    assert rewards.phases[0].components["dag_completed"] == 0.0


def test_args_match_is_lenient_but_not_blind() -> None:
    node = GoldCall(
        id="n2",
        tool="currency/convert_currency",
        arguments={"amount": 165.8, "from_currency": "USD", "to_currency": "CHF"},
        depends_on=["n1"],
        bindings={"amount": "n1.price"},
    )
    observed = {"n1": {"price": 170.0}}
    assert args_match(
        node, {"amount": 170, "from_currency": "usd ", "to_currency": "CHF"}, observed
    )
    assert args_match(node, {"amount": "165.8", "from_currency": "USD", "to_currency": "chf"}, {})
    assert not args_match(
        node, {"amount": 99, "from_currency": "USD", "to_currency": "CHF"}, observed
    )
    assert not args_match(node, {"amount": 165.8, "from_currency": "USD"}, {})
    email = GoldCall(
        id="n2",
        tool="email/send_email",
        arguments={"to": ["a@b.com"], "body": "Hi Ann, quick note about the budget draft."},
        bindings={"to": "[n1.contacts.0.email]"},
    )
    assert args_match(
        email, {"to": "A@b.com", "body": "hi ann - a quick note about the budget draft"}, {}
    )
    assert not args_match(email, {"to": "a@b.com", "body": "unrelated words entirely"}, {})


async def test_format_errors_and_unanswered_episodes() -> None:
    weather = task("multi_city_weather")
    episode = await run(
        weather, ['<tool_call>{"name": oops</tool_call>', "no tags at all"], max_turns=2
    )
    rewards = score_episode(episode, weather)
    assert [s.components["format"] for s in rewards.steps] == [-1.0, -1.0]
    assert rewards.phases == [] and not rewards.success
    assert rewards.trajectory_components["format"] == 0.0


async def test_episode_of_another_task_is_refused() -> None:
    weather, flight = task("multi_city_weather"), task("flight_arrival_weather")
    episode = await run(weather, ["<answer>x</answer>"])
    with pytest.raises(ConfigError, match="not"):
        score_episode(episode, flight)


@pytest.mark.parametrize(
    "bad", [{"step_format": -1.0}, {"traj_correct": math.nan}, {"phase_ndcg": True}]
)
def test_reward_config_rejects_bad_weights(bad: dict) -> None:
    with pytest.raises(ConfigError, match=next(iter(bad))):
        RewardConfig(**bad)
