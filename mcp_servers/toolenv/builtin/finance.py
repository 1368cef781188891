"""The ``finance`` (stock market) and ``currency`` (exchange rates) providers."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from paraagent_runtime.checker import normalize_name

from ..world import World
from ._registry import Provider
from ._schema import array, integer, number, obj, string

finance = Provider("finance", "Finance")
currency = Provider("currency", "Finance")

SYMBOL = string("Ticker symbol, e.g. 'AAPL', 'SAP' or '7203.T'.", pattern=r"^[A-Za-z0-9.]{1,12}$")
CURRENCY = string("ISO 4217 currency code, e.g. 'USD', 'EUR', 'JPY'.", pattern=r"^[A-Za-z]{3}$")


@finance.tool(
    "get_stock_quote",
    (
        "Latest stock quote for a ticker symbol: price in the listing currency, change since "
        "previous close, exchange."
    ),
    params={"symbol": SYMBOL},
    required=("symbol",),
    output=obj(
        {
            "symbol": string(),
            "name": string(),
            "price": number(),
            "currency": string(),
            "previous_close": number(),
            "change": number(),
            "change_percent": number(),
            "exchange": string(),
            "as_of": string(),
        },
        ("symbol", "price", "currency"),
    ),
)
def _get_stock_quote(world: World, args: dict[str, Any]) -> dict[str, Any]:
    stock = world.stock(args["symbol"])
    change = round(stock.price - stock.previous_close, 2)
    return {
        "symbol": stock.symbol,
        "name": stock.name,
        "price": stock.price,
        "currency": stock.currency,
        "previous_close": stock.previous_close,
        "change": change,
        "change_percent": round(100 * change / stock.previous_close, 2),
        "exchange": stock.exchange,
        "as_of": world.now_utc.strftime("%Y-%m-%dT%H:%MZ"),
    }


@finance.tool(
    "get_stock_history",
    "Daily closing prices of a stock for the last N trading days (oldest first).",
    params={"symbol": SYMBOL, "days": integer("Number of days.", minimum=2, maximum=60, default=5)},
    required=("symbol",),
    output=obj(
        {
            "symbol": string(),
            "currency": string(),
            "closes": array(obj({"date": string(), "close": number()}, ("date", "close"))),
        },
        ("symbol", "closes"),
    ),
)
def _get_stock_history(world: World, args: dict[str, Any]) -> dict[str, Any]:
    stock = world.stock(args["symbol"])
    return {
        "symbol": stock.symbol,
        "currency": stock.currency,
        "closes": world.stock_history(stock.symbol, args.get("days", 5)),
    }


@finance.tool(
    "search_ticker",
    "Find ticker symbols by company name (e.g. 'toyota' → 7203.T).",
    params={"query": string("Company name or part of it.", min_length=1)},
    required=("query",),
    output=obj(
        {
            "query": string(),
            "matches": array(
                obj(
                    {"symbol": string(), "name": string(), "exchange": string()}, ("symbol", "name")
                )
            ),
        },
        ("query", "matches"),
    ),
)
def _search_ticker(world: World, args: dict[str, Any]) -> dict[str, Any]:
    key = normalize_name(args["query"])
    matches = [
        {"symbol": s.symbol, "name": s.name, "exchange": s.exchange}
        for s in world.stocks.values()
        if key in normalize_name(s.name) or key == normalize_name(s.symbol)
    ]
    return {"query": args["query"], "matches": matches}


@finance.tool(
    "get_company_profile",
    (
        "Company fundamentals for a ticker: sector, headquarters, employees, market "
        "capitalisation (billions), P/E ratio."
    ),
    params={"symbol": SYMBOL},
    required=("symbol",),
    output=obj(
        {
            "symbol": string(),
            "name": string(),
            "sector": string(),
            "headquarters": string(),
            "employees": integer(),
            "market_cap_billion": number(),
            "pe_ratio": number(),
            "currency": string(),
        },
        ("symbol", "name", "sector"),
    ),
)
def _get_company_profile(world: World, args: dict[str, Any]) -> dict[str, Any]:
    s = world.stock(args["symbol"])
    return {
        "symbol": s.symbol,
        "name": s.name,
        "sector": s.sector,
        "headquarters": s.headquarters,
        "employees": s.employees,
        "market_cap_billion": s.market_cap_billion,
        "pe_ratio": s.pe_ratio,
        "currency": s.currency,
    }


_INDICES = {
    "americas": (("S&P 500", 5200), ("Dow Jones", 39000), ("Nasdaq Composite", 16500)),
    "europe": (("DAX", 18000), ("FTSE 100", 8100), ("CAC 40", 7900)),
    "asia": (("Nikkei 225", 38500), ("Hang Seng", 17800), ("KOSPI", 2700)),
}


@finance.tool(
    "get_market_summary",
    "Level and daily change of the main stock indices of a region.",
    params={"region": string("Market region.", enum=tuple(_INDICES), default="americas")},
    output=obj(
        {
            "region": string(),
            "indices": array(
                obj(
                    {"name": string(), "value": number(), "change_percent": number()},
                    ("name", "value"),
                )
            ),
        },
        ("region", "indices"),
    ),
)
def _get_market_summary(world: World, args: dict[str, Any]) -> dict[str, Any]:
    region = args.get("region", "americas")
    indices = []
    for name, base in _INDICES[region]:
        rng = world.rng("index", name)
        indices.append(
            {
                "name": name,
                "value": round(base * math.exp(rng.gauss(0, 0.05)), 2),
                "change_percent": round(rng.gauss(0, 0.9), 2),
            }
        )
    return {"region": region, "indices": indices}


@currency.tool(
    "convert_currency",
    "Convert an amount of money from one currency to another at today's exchange rate.",
    params={
        "amount": number("Amount in the source currency.", minimum=0),
        "from_currency": CURRENCY,
        "to_currency": CURRENCY,
    },
    required=("amount", "from_currency", "to_currency"),
    output=obj(
        {
            "amount": number(),
            "from_currency": string(),
            "to_currency": string(),
            "rate": number(),
            "converted_amount": number(),
            "as_of": string(),
        },
        ("amount", "from_currency", "to_currency", "rate", "converted_amount"),
    ),
)
def _convert_currency(world: World, args: dict[str, Any]) -> dict[str, Any]:
    base, quote = (
        world.currency_code(args["from_currency"]),
        world.currency_code(args["to_currency"]),
    )
    return {
        "amount": args["amount"],
        "from_currency": base,
        "to_currency": quote,
        "rate": world.exchange_rate(base, quote),
        "converted_amount": world.convert(float(args["amount"]), base, quote),
        "as_of": world.today.isoformat(),
    }


@currency.tool(
    "get_exchange_rate",
    (
        "Today's exchange rate: how many units of the quote currency one unit of the base "
        "currency buys."
    ),
    params={"base": CURRENCY, "quote": CURRENCY},
    required=("base", "quote"),
    output=obj(
        {"base": string(), "quote": string(), "rate": number(), "as_of": string()},
        ("base", "quote", "rate"),
    ),
)
def _get_exchange_rate(world: World, args: dict[str, Any]) -> dict[str, Any]:
    base, quote = world.currency_code(args["base"]), world.currency_code(args["quote"])
    return {
        "base": base,
        "quote": quote,
        "rate": world.exchange_rate(base, quote),
        "as_of": world.today.isoformat(),
    }


@currency.tool(
    "list_currencies",
    "All supported currency codes with their names.",
    params={},
    output=obj(
        {"currencies": array(obj({"code": string(), "name": string()}, ("code", "name")))},
        ("currencies",),
    ),
)
def _list_currencies(world: World, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "currencies": [
            {"code": code, "name": world.currency_name(code)} for code in world.currencies()
        ]
    }


@currency.tool(
    "get_rate_history",
    (
        "Daily exchange rates between two currencies over the last N days (oldest first, ending "
        "today)."
    ),
    params={
        "base": CURRENCY,
        "quote": CURRENCY,
        "days": integer("Number of days.", minimum=2, maximum=90, default=7),
    },
    required=("base", "quote"),
    output=obj(
        {
            "base": string(),
            "quote": string(),
            "rates": array(obj({"date": string(), "rate": number()}, ("date", "rate"))),
        },
        ("base", "quote", "rates"),
    ),
)
def _get_rate_history(world: World, args: dict[str, Any]) -> dict[str, Any]:
    base, quote = world.currency_code(args["base"]), world.currency_code(args["quote"])
    days = args.get("days", 7)
    rng = world.rng("fx-history", base, quote)
    rates = [world.exchange_rate(base, quote)]
    for _ in range(days - 1):
        rates.append(round(rates[-1] * (1 + rng.gauss(0, 0.004)), 6))
    rates.reverse()
    return {
        "base": base,
        "quote": quote,
        "rates": [
            {"date": (world.today - timedelta(days=days - 1 - i)).isoformat(), "rate": r}
            for i, r in enumerate(rates)
        ],
    }
