"""The ``news``, ``sports`` and ``movies`` providers."""

from __future__ import annotations

from typing import Any

from ..errors import ToolEnvNotFoundError
from ..geo import normalize_name
from ..world import Article, League, Match, Movie, World
from ._common import CITY, DATE, parse_day, stable_id
from ._registry import Provider
from ._schema import array, integer, number, obj, string

news = Provider("news", "News")
sports = Provider("sports", "Sports")
movies = Provider("movies", "Entertainment")

NEWS_CATEGORY = string(
    "News category.", enum=("business", "technology", "sports", "travel", "science", "world")
)
_ARTICLE = obj(
    {
        "article_id": string(),
        "title": string(),
        "category": string(),
        "source": string(),
        "published_at": string(),
    },
    ("article_id", "title", "source"),
)
TEAM = string(
    "Team name, e.g. 'Madrid Wanderers' (a unique part such as 'Wanderers' also works).",
    min_length=2,
)
_MATCH = obj(
    {
        "match_id": string(),
        "date": string(),
        "home": string(),
        "away": string(),
        "venue_city": string(),
        "home_score": {"type": ["integer", "null"]},
        "away_score": {"type": ["integer", "null"]},
    },
    ("match_id", "date", "home", "away", "venue_city"),
)
MOVIE_ID = string("Movie id such as 'mv_004' (see search_movies).", pattern=r"^mv_\d{3}$")


def _article(article: Article) -> dict[str, Any]:
    return {
        "article_id": article.article_id,
        "title": article.title,
        "category": article.category,
        "source": article.source,
        "published_at": article.published_at,
    }


def _match(match: Match) -> dict[str, Any]:
    return {
        "match_id": match.match_id,
        "date": match.date,
        "home": match.home,
        "away": match.away,
        "venue_city": match.venue_city,
        "home_score": match.home_score,
        "away_score": match.away_score,
    }


@news.tool(
    "get_top_headlines",
    "Latest top headlines, optionally for one category, newest first.",
    params={
        "category": NEWS_CATEGORY,
        "limit": integer("Maximum number of headlines.", minimum=1, maximum=30, default=5),
    },
    output=obj({"articles": array(_ARTICLE)}, ("articles",)),
)
def _get_top_headlines(world: World, args: dict[str, Any]) -> dict[str, Any]:
    found = [a for a in world.articles if args.get("category") in (None, a.category)]
    return {"articles": [_article(a) for a in found[: args.get("limit", 5)]]}


@news.tool(
    "search_news",
    "Search recent news articles by keywords (all words must appear in the headline or summary).",
    params={
        "query": string("Keywords.", min_length=1),
        "limit": integer("Maximum number of articles.", minimum=1, maximum=30, default=5),
    },
    required=("query",),
    output=obj({"query": string(), "articles": array(_ARTICLE)}, ("query", "articles")),
)
def _search_news(world: World, args: dict[str, Any]) -> dict[str, Any]:
    words = normalize_name(args["query"]).split()
    found = [
        a
        for a in world.articles
        if all(w in normalize_name(f"{a.title} {a.summary}") for w in words)
    ]
    return {
        "query": args["query"],
        "articles": [_article(a) for a in found[: args.get("limit", 5)]],
    }


@news.tool(
    "get_article",
    "Full text of a news article by id.",
    params={"article_id": string("Article id such as 'art_0012'.", pattern=r"^art_\d{4}$")},
    required=("article_id",),
    output=obj(
        {
            "article_id": string(),
            "title": string(),
            "category": string(),
            "source": string(),
            "published_at": string(),
            "summary": string(),
            "country": string(),
        },
        ("article_id", "title", "summary"),
    ),
)
def _get_article(world: World, args: dict[str, Any]) -> dict[str, Any]:
    for article in world.articles:
        if article.article_id == args["article_id"]:
            return {**_article(article), "summary": article.summary, "country": article.country}
    raise ToolEnvNotFoundError(f"no article with id {args['article_id']!r}")


@news.tool(
    "get_trending_topics",
    "Topics most mentioned in today's news with their article counts.",
    params={},
    output=obj(
        {"topics": array(obj({"topic": string(), "articles": integer()}, ("topic", "articles")))},
        ("topics",),
    ),
)
def _get_trending_topics(world: World, args: dict[str, Any]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for article in world.articles:
        for word in article.title.split():
            if word[:1].isupper() and len(word) > 3:
                counts[word.strip(".,")] = counts.get(word.strip(".,"), 0) + 1
    top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:8]
    return {"topics": [{"topic": topic, "articles": count} for topic, count in top]}


def _standings(league: League) -> list[dict[str, Any]]:
    table = {
        team: {"team": team, "played": 0, "won": 0, "drawn": 0, "lost": 0, "points": 0}
        for team in league.teams
    }
    for match in league.matches:
        if match.home_score is None or match.away_score is None:
            continue
        for team, mine, theirs in (
            (match.home, match.home_score, match.away_score),
            (match.away, match.away_score, match.home_score),
        ):
            row = table[team]
            row["played"] += 1
            outcome = "won" if mine > theirs else "lost" if mine < theirs else "drawn"
            row[outcome] += 1
            row["points"] += {"won": 3 if league.sport == "football" else 2, "drawn": 1, "lost": 0}[
                outcome
            ]
    rows = sorted(table.values(), key=lambda r: (-r["points"], -r["won"], r["team"]))
    return [{"position": i + 1, **row} for i, row in enumerate(rows)]


@sports.tool(
    "list_leagues",
    "The leagues covered, with their sport and teams.",
    params={},
    output=obj(
        {
            "leagues": array(
                obj(
                    {"name": string(), "sport": string(), "teams": array(string())},
                    ("name", "sport"),
                )
            )
        },
        ("leagues",),
    ),
)
def _list_leagues(world: World, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "leagues": [
            {"name": lg.name, "sport": lg.sport, "teams": list(lg.teams)}
            for lg in world.leagues.values()
        ]
    }


@sports.tool(
    "get_league_standings",
    "Current league table: position, games played, wins, draws, losses and points of every team.",
    params={"league": string("League name, e.g. 'Continental Football League'.", min_length=3)},
    required=("league",),
    output=obj(
        {
            "league": string(),
            "table": array(
                obj(
                    {
                        "position": integer(),
                        "team": string(),
                        "played": integer(),
                        "won": integer(),
                        "drawn": integer(),
                        "lost": integer(),
                        "points": integer(),
                    },
                    ("position", "team", "points"),
                )
            ),
        },
        ("league", "table"),
    ),
)
def _get_league_standings(world: World, args: dict[str, Any]) -> dict[str, Any]:
    league = world.league(args["league"])
    return {"league": league.name, "table": _standings(league)}


@sports.tool(
    "get_team_info",
    "Profile of a team: league, sport, home city and current league position.",
    params={"team": TEAM},
    required=("team",),
    output=obj(
        {
            "team": string(),
            "league": string(),
            "sport": string(),
            "home_city": string(),
            "position": integer(),
            "founded": integer(),
        },
        ("team", "league", "home_city"),
    ),
)
def _get_team_info(world: World, args: dict[str, Any]) -> dict[str, Any]:
    league, team = world.team(args["team"])
    position = next(row["position"] for row in _standings(league) if row["team"] == team)
    return {
        "team": team,
        "league": league.name,
        "sport": league.sport,
        "home_city": league.team_cities[team],
        "position": position,
        "founded": world.rng("founded", team).randint(1880, 2005),
    }


def _team_matches(world: World, name: str, *, played: bool) -> tuple[str, list[Match]]:
    league, team = world.team(name)
    matches = [
        m
        for m in league.matches
        if team in (m.home, m.away) and (m.home_score is not None) == played
    ]
    return team, matches


@sports.tool(
    "get_last_match",
    "Result of a team's most recent match: opponent, score, date and venue.",
    params={"team": TEAM},
    required=("team",),
    output=obj(
        {"team": string(), "match": _MATCH, "result": string(enum=("win", "draw", "loss"))},
        ("team", "match", "result"),
    ),
)
def _get_last_match(world: World, args: dict[str, Any]) -> dict[str, Any]:
    team, matches = _team_matches(world, args["team"], played=True)
    match = matches[-1]
    home, away = match.home_score or 0, match.away_score or 0
    mine, theirs = (home, away) if match.home == team else (away, home)
    return {
        "team": team,
        "match": _match(match),
        "result": "win" if mine > theirs else "loss" if mine < theirs else "draw",
    }


@sports.tool(
    "get_next_match",
    "A team's next scheduled match: opponent, date and the city where it is played.",
    params={"team": TEAM},
    required=("team",),
    output=obj({"team": string(), "match": _MATCH}, ("team", "match")),
)
def _get_next_match(world: World, args: dict[str, Any]) -> dict[str, Any]:
    team, matches = _team_matches(world, args["team"], played=False)
    return {"team": team, "match": _match(matches[0])}


def _movie(movie: Movie) -> dict[str, Any]:
    return {
        "movie_id": movie.movie_id,
        "title": movie.title,
        "genre": movie.genre,
        "year": movie.year,
        "rating": movie.rating,
    }


@movies.tool(
    "search_movies",
    "Search films by title words, genre or minimum rating.",
    params={
        "query": string("Words from the title."),
        "genre": string(
            "Genre.",
            enum=(
                "drama",
                "comedy",
                "thriller",
                "science fiction",
                "animation",
                "documentary",
                "action",
                "romance",
            ),
        ),
        "min_rating": number("Minimum average rating out of 10.", minimum=0, maximum=10),
    },
    output=obj(
        {
            "movies": array(
                obj(
                    {
                        "movie_id": string(),
                        "title": string(),
                        "genre": string(),
                        "year": integer(),
                        "rating": number(),
                    },
                    ("movie_id", "title"),
                )
            )
        },
        ("movies",),
    ),
)
def _search_movies(world: World, args: dict[str, Any]) -> dict[str, Any]:
    words = normalize_name(args.get("query", "")).split()
    found = [
        m
        for m in world.movies.values()
        if all(w in normalize_name(m.title) for w in words)
        and args.get("genre") in (None, m.genre)
        and m.rating >= args.get("min_rating", 0)
    ]
    return {"movies": [_movie(m) for m in found]}


@movies.tool(
    "get_movie_details",
    "Details of a film: year, runtime, rating, director, cast and synopsis.",
    params={"movie_id": MOVIE_ID},
    required=("movie_id",),
    output=obj(
        {
            "movie_id": string(),
            "title": string(),
            "genre": string(),
            "year": integer(),
            "rating": number(),
            "runtime_minutes": integer(),
            "director": string(),
            "cast": array(string()),
            "synopsis": string(),
        },
        ("movie_id", "title", "director"),
    ),
)
def _get_movie_details(world: World, args: dict[str, Any]) -> dict[str, Any]:
    m = world.movie(args["movie_id"])
    return {
        **_movie(m),
        "runtime_minutes": m.runtime_minutes,
        "director": m.director,
        "cast": list(m.cast),
        "synopsis": m.synopsis,
    }


@movies.tool(
    "get_showtimes",
    "Cinema screenings of a film in a city on a date, with ticket prices in local currency.",
    params={"movie_id": MOVIE_ID, "city": CITY, "date": DATE},
    required=("movie_id", "city"),
    output=obj(
        {
            "movie_id": string(),
            "city": string(),
            "date": string(),
            "showtimes": array(
                obj(
                    {
                        "showtime_id": string(),
                        "cinema": string(),
                        "start": string(),
                        "price": number(),
                        "currency": string(),
                    },
                    ("showtime_id", "cinema", "start"),
                )
            ),
        },
        ("movie_id", "city", "date", "showtimes"),
    ),
)
def _get_showtimes(world: World, args: dict[str, Any]) -> dict[str, Any]:
    movie, city = world.movie(args["movie_id"]), world.city(args["city"])
    day = parse_day(world, args.get("date"), horizon=(0, 14))
    return {
        "movie_id": movie.movie_id,
        "city": city.name,
        "date": day.isoformat(),
        "showtimes": world.showtimes(movie, city, day),
    }


@movies.tool(
    "get_movie_reviews",
    "Critics' reviews of a film with scores out of 10.",
    params={"movie_id": MOVIE_ID},
    required=("movie_id",),
    output=obj(
        {
            "movie_id": string(),
            "reviews": array(
                obj({"critic": string(), "score": number(), "quote": string()}, ("critic", "score"))
            ),
        },
        ("movie_id", "reviews"),
    ),
)
def _get_movie_reviews(world: World, args: dict[str, Any]) -> dict[str, Any]:
    movie = world.movie(args["movie_id"])
    rng = world.rng("critics", movie.movie_id)
    quotes = (
        "A quiet triumph.",
        "Overlong but heartfelt.",
        "Sharp, funny and humane.",
        "Looks great, says little.",
    )
    reviews = [
        {
            "critic": f"Critic {rng.randint(10, 99)}",
            "score": round(min(10.0, max(1.0, rng.gauss(movie.rating, 1.0))), 1),
            "quote": rng.choice(quotes),
        }
        for _ in range(3)
    ]
    return {"movie_id": movie.movie_id, "reviews": reviews}


@movies.tool(
    "book_movie_tickets",
    "Buy cinema tickets for a showtime.",
    params={
        "showtime_id": string("Showtime id from get_showtimes.", pattern=r"^st_\w+$"),
        "seats": integer("Number of seats.", minimum=1, maximum=10),
    },
    required=("showtime_id", "seats"),
    output=obj(
        {
            "order_id": string(),
            "status": string(enum=("confirmed",)),
            "showtime_id": string(),
            "seats": integer(),
        },
        ("order_id", "status"),
    ),
    read_only=False,
)
def _book_movie_tickets(world: World, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "order_id": stable_id("TK-", args),
        "status": "confirmed",
        "showtime_id": args["showtime_id"],
        "seats": args["seats"],
    }
