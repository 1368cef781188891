"""Shared fixtures: the built-in catalog and example arguments valid in any world."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_servers.toolenv import World, builtin_records
from mcp_servers.toolenv.records import ToolRecord


@pytest.fixture(scope="session")
def records() -> list[ToolRecord]:
    return builtin_records()


def example_arguments(world: World) -> dict[str, dict[str, Any]]:
    """Valid arguments for every built-in tool in ``world`` (dates and ids taken from it)."""
    day = (world.today).isoformat()
    flight = sorted(world.flights)[0]
    hotel = sorted(world.hotels)[0]
    event = world.events[0].event_id
    message = world.emails[0].message_id
    article = world.articles[0].article_id
    team = next(iter(world.leagues.values())).teams[0]
    return {
        "weather/get_current_weather": {"city": "Paris", "units": "imperial"},
        "weather/get_forecast": {"city": "Tokyo", "days": 7},
        "weather/get_hourly_forecast": {"city": "Sydney", "hours": 30},
        "weather/get_air_quality": {"city": "Mumbai"},
        "weather/get_weather_alerts": {"city": "Dubai"},
        "weather/get_sun_times": {"city": "Oslo", "date": day},
        "aviation/get_flight": {"flight_number": flight},
        "aviation/get_flight_status": {"flight_number": flight, "date": day},
        "aviation/search_flights": {"origin": "FRA", "destination": "New York", "date": day},
        "aviation/get_airport": {"code": "JFK"},
        "aviation/get_airport_weather": {"code": "LHR"},
        "aviation/list_departures": {"code": "FRA", "limit": 3},
        "aviation/book_flight": {
            "flight_number": flight,
            "date": day,
            "passenger_name": "Alex Morgan",
        },
        "aviation/cancel_flight_booking": {"booking_id": "BK-ABC123"},
        "hotels/search_hotels": {
            "city": "Rome",
            "check_in": day,
            "nights": 2,
            "min_stars": 2,
            "sort_by": "rating",
        },
        "hotels/get_hotel_details": {"hotel_id": hotel},
        "hotels/get_hotel_reviews": {"hotel_id": hotel, "limit": 2},
        "hotels/check_hotel_availability": {"hotel_id": hotel, "check_in": day, "nights": 3},
        "hotels/book_hotel": {"hotel_id": hotel, "check_in": day, "guest_name": "Alex Morgan"},
        "hotels/cancel_booking": {"booking_id": "HB-ABC123"},
        "finance/get_stock_quote": {"symbol": "aapl"},
        "finance/get_stock_history": {"symbol": "SAP", "days": 10},
        "finance/search_ticker": {"query": "toyota"},
        "finance/get_company_profile": {"symbol": "7203.T"},
        "finance/get_market_summary": {"region": "europe"},
        "currency/convert_currency": {"amount": 100, "from_currency": "USD", "to_currency": "EUR"},
        "currency/get_exchange_rate": {"base": "GBP", "quote": "JPY"},
        "currency/list_currencies": {},
        "currency/get_rate_history": {"base": "EUR", "quote": "CHF", "days": 5},
        "maps/geocode": {"query": "São Paulo"},
        "maps/reverse_geocode": {"lat": 48.9, "lon": 2.4},
        "maps/get_distance": {"origin": "Berlin", "destination": "Munich"},
        "maps/get_directions": {"origin": "Berlin", "destination": "Munich", "mode": "transit"},
        "maps/search_places": {"city": "Vienna", "category": "museum", "open_now": True},
        "maps/get_timezone": {"city": "Mumbai"},
        "time/get_current_time": {"city": "Toronto"},
        "time/convert_time": {"time": "23:30", "from_city": "London", "to_city": "Tokyo"},
        "time/get_time_difference": {"city": "Tokyo", "other_city": "New York"},
        "calendar/list_events": {"start_date": day},
        "calendar/get_event": {"event_id": event},
        "calendar/create_event": {
            "title": "Sync",
            "start": f"{day}T10:00",
            "attendees": ["a@b.com"],
        },
        "calendar/delete_event": {"event_id": event},
        "calendar/find_free_slots": {"date": day, "duration_minutes": 30},
        "email/list_emails": {"unread_only": True},
        "email/read_email": {"message_id": message},
        "email/search_emails": {"query": "hi"},
        "email/send_email": {"to": ["a@b.com"], "subject": "Hello", "body": "Hi there"},
        "email/find_contact": {"name": world.contacts[0].name.split()[0]},
        "news/get_top_headlines": {"category": "business", "limit": 3},
        "news/search_news": {"query": "shares"},
        "news/get_article": {"article_id": article},
        "news/get_trending_topics": {},
        "sports/list_leagues": {},
        "sports/get_league_standings": {"league": "football"},
        "sports/get_team_info": {"team": team},
        "sports/get_last_match": {"team": team},
        "sports/get_next_match": {"team": team},
        "movies/search_movies": {"query": "the"},
        "movies/get_movie_details": {"movie_id": "mv_001"},
        "movies/get_showtimes": {"movie_id": "mv_002", "city": "Paris", "date": day},
        "movies/get_movie_reviews": {"movie_id": "mv_003"},
        "movies/book_movie_tickets": {"showtime_id": "st_001_cdg_0101_18", "seats": 2},
        "recipes/search_recipes": {"diet": "vegan", "max_minutes": 40},
        "recipes/get_recipe": {"recipe_id": "rcp_001"},
        "recipes/get_nutrition": {"recipe_id": "rcp_002", "servings": 3},
        "recipes/get_ingredient_substitutes": {"ingredient": "eggs"},
        "translation/translate_text": {"text": "Thank you", "target_language": "de"},
        "translation/detect_language": {"text": "bonne nuit"},
        "translation/list_languages": {},
    }
