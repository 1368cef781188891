"""The ``hotels`` provider: search, details, reviews, availability, bookings."""

from __future__ import annotations

from typing import Any

from ..world import Hotel, World
from ._common import CITY, DATE, parse_day, stable_id
from ._registry import Provider
from ._schema import array, integer, number, obj, string

provider = Provider("hotels", "Travel")

HOTEL_ID = string(
    "Hotel id as returned by search_hotels, e.g. 'CDG-H2'.", pattern=r"^[A-Za-z]{3}-H\d+$"
)
NIGHTS = integer("Number of nights.", minimum=1, maximum=30, default=1)
_SUMMARY = obj(
    {
        "hotel_id": string(),
        "name": string(),
        "stars": integer(minimum=1, maximum=5),
        "rating": number(),
        "price_per_night_usd": number(),
        "total_price_usd": number(),
        "distance_to_center_km": number(),
    },
    ("hotel_id", "name", "stars", "price_per_night_usd"),
)


def _summary(hotel: Hotel, nights: int) -> dict[str, Any]:
    return {
        "hotel_id": hotel.hotel_id,
        "name": hotel.name,
        "stars": hotel.stars,
        "rating": hotel.rating,
        "price_per_night_usd": hotel.price_per_night_usd,
        "total_price_usd": round(hotel.price_per_night_usd * nights, 2),
        "distance_to_center_km": hotel.distance_to_center_km,
    }


@provider.tool(
    "search_hotels",
    (
        "Search hotels in a city for given dates, filtered by minimum stars and maximum nightly "
        "price (USD); sorted by price, rating or distance."
    ),
    params={
        "city": CITY,
        "check_in": DATE,
        "nights": NIGHTS,
        "min_stars": integer("Minimum star rating.", minimum=1, maximum=5),
        "max_price_usd": number("Maximum price per night in USD.", exclusive_minimum=0),
        "sort_by": string("Sort order.", enum=("price", "rating", "distance"), default="price"),
    },
    required=("city", "check_in"),
    output=obj(
        {"city": string(), "check_in": string(), "nights": integer(), "hotels": array(_SUMMARY)},
        ("city", "check_in", "hotels"),
    ),
)
def _search_hotels(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["city"])
    day = parse_day(world, args["check_in"], horizon=(0, 90))
    nights = args.get("nights", 1)
    hotels = [
        h
        for h in world.hotels_in(city)
        if h.stars >= args.get("min_stars", 1)
        and h.price_per_night_usd <= args.get("max_price_usd", float("inf"))
    ]
    keys = {
        "price": lambda h: h.price_per_night_usd,
        "rating": lambda h: -h.rating,
        "distance": lambda h: h.distance_to_center_km,
    }
    hotels.sort(key=keys[args.get("sort_by", "price")])
    return {
        "city": city.name,
        "check_in": day.isoformat(),
        "nights": nights,
        "hotels": [_summary(h, nights) for h in hotels],
    }


@provider.tool(
    "get_hotel_details",
    "Full details of one hotel: address, stars, guest rating, nightly rate in USD, amenities.",
    params={"hotel_id": HOTEL_ID},
    required=("hotel_id",),
    output=obj(
        {
            "hotel_id": string(),
            "name": string(),
            "city": string(),
            "address": string(),
            "stars": integer(),
            "rating": number(),
            "price_per_night_usd": number(),
            "distance_to_center_km": number(),
            "amenities": array(string()),
        },
        ("hotel_id", "name", "city", "price_per_night_usd"),
    ),
)
def _get_hotel_details(world: World, args: dict[str, Any]) -> dict[str, Any]:
    hotel = world.hotel(args["hotel_id"])
    return {
        "hotel_id": hotel.hotel_id,
        "name": hotel.name,
        "city": hotel.city.name,
        "address": hotel.address,
        "stars": hotel.stars,
        "rating": hotel.rating,
        "price_per_night_usd": hotel.price_per_night_usd,
        "distance_to_center_km": hotel.distance_to_center_km,
        "amenities": list(hotel.amenities),
    }


_PRAISE = (
    "Friendly staff",
    "Great breakfast",
    "Spotless rooms",
    "Quiet at night",
    "Excellent location",
    "Comfortable beds",
)
_GRIPES = (
    "Thin walls",
    "Slow elevator",
    "Small bathroom",
    "Pricey minibar",
    "Wi-Fi drops sometimes",
    "Noisy street",
)


@provider.tool(
    "get_hotel_reviews",
    "Recent guest reviews of a hotel with scores out of 10.",
    params={
        "hotel_id": HOTEL_ID,
        "limit": integer("Maximum number of reviews.", minimum=1, maximum=20, default=5),
    },
    required=("hotel_id",),
    output=obj(
        {
            "hotel_id": string(),
            "average_score": number(),
            "reviews": array(
                obj({"author": string(), "score": number(), "text": string()}, ("score", "text"))
            ),
        },
        ("hotel_id", "reviews"),
    ),
)
def _get_hotel_reviews(world: World, args: dict[str, Any]) -> dict[str, Any]:
    hotel = world.hotel(args["hotel_id"])
    rng = world.rng("reviews", hotel.hotel_id)
    reviews = []
    for _ in range(args.get("limit", 5)):
        score = round(min(10.0, max(1.0, rng.gauss(hotel.rating, 0.9))), 1)
        text = (
            f"{rng.choice(_PRAISE)}. {rng.choice(_GRIPES) if score < 8.5 else rng.choice(_PRAISE)}."
        )
        reviews.append({"author": f"Guest {rng.randint(100, 999)}", "score": score, "text": text})
    return {"hotel_id": hotel.hotel_id, "average_score": hotel.rating, "reviews": reviews}


@provider.tool(
    "check_hotel_availability",
    (
        "Check whether a hotel has rooms for the given check-in date and nights, and the total "
        "price in USD."
    ),
    params={"hotel_id": HOTEL_ID, "check_in": DATE, "nights": NIGHTS},
    required=("hotel_id", "check_in"),
    output=obj(
        {
            "hotel_id": string(),
            "check_in": string(),
            "nights": integer(),
            "available": {"type": "boolean"},
            "rooms_left": integer(minimum=0),
            "total_price_usd": number(),
        },
        ("hotel_id", "available", "total_price_usd"),
    ),
)
def _check_hotel_availability(world: World, args: dict[str, Any]) -> dict[str, Any]:
    hotel = world.hotel(args["hotel_id"])
    day = parse_day(world, args["check_in"], horizon=(0, 90))
    nights = args.get("nights", 1)
    rooms = world.rng("rooms", hotel.hotel_id, day, nights).choice((0, 1, 2, 3, 5, 8, 12))
    return {
        "hotel_id": hotel.hotel_id,
        "check_in": day.isoformat(),
        "nights": nights,
        "available": rooms > 0,
        "rooms_left": rooms,
        "total_price_usd": round(hotel.price_per_night_usd * nights, 2),
    }


@provider.tool(
    "book_hotel",
    "Reserve a room at a hotel for a guest; returns a booking id and the total price in USD.",
    params={
        "hotel_id": HOTEL_ID,
        "check_in": DATE,
        "nights": NIGHTS,
        "guest_name": string("Guest's full name.", min_length=2),
    },
    required=("hotel_id", "check_in", "guest_name"),
    output=obj(
        {
            "booking_id": string(),
            "status": string(enum=("confirmed",)),
            "hotel_id": string(),
            "check_in": string(),
            "nights": integer(),
            "total_price_usd": number(),
        },
        ("booking_id", "status", "total_price_usd"),
    ),
    read_only=False,
)
def _book_hotel(world: World, args: dict[str, Any]) -> dict[str, Any]:
    hotel = world.hotel(args["hotel_id"])
    day = parse_day(world, args["check_in"], horizon=(0, 90))
    nights = args.get("nights", 1)
    return {
        "booking_id": stable_id("HB-", hotel.hotel_id, day, nights, args["guest_name"]),
        "status": "confirmed",
        "hotel_id": hotel.hotel_id,
        "check_in": day.isoformat(),
        "nights": nights,
        "total_price_usd": round(hotel.price_per_night_usd * nights, 2),
    }


@provider.tool(
    "cancel_booking",
    "Cancel a hotel reservation by booking id.",
    params={
        "booking_id": string("Hotel booking id such as 'HB-4F5E6D'.", pattern=r"^HB-[A-Z0-9]{6}$")
    },
    required=("booking_id",),
    output=obj(
        {
            "booking_id": string(),
            "status": string(enum=("cancelled",)),
            "cancellation_fee_usd": number(),
        },
        ("booking_id", "status"),
    ),
    read_only=False,
    destructive=True,
)
def _cancel_booking(world: World, args: dict[str, Any]) -> dict[str, Any]:
    fee = world.rng("hotel-cancel", args["booking_id"]).choice((0.0, 0.0, 25.0, 50.0))
    return {"booking_id": args["booking_id"], "status": "cancelled", "cancellation_fee_usd": fee}
