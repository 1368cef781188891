"""The ``translation`` provider: a phrasebook translator and a language detector."""

from __future__ import annotations

from typing import Any

from paraagent_runtime.checker import normalize_name

from ..errors import ToolEnvNotFoundError
from ..world import World
from ._registry import Provider
from ._schema import array, number, obj, string

provider = Provider("translation", "Language")

LANGUAGES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
}
LANGUAGE = string("ISO 639-1 language code.", enum=tuple(LANGUAGES))
# One row per phrase, columns in LANGUAGES order.
_PHRASES: tuple[tuple[str, ...], ...] = (
    ("good morning", "guten Morgen", "bonjour", "buenos días", "buongiorno", "bom dia"),
    ("thank you", "danke", "merci", "gracias", "grazie", "obrigado"),
    ("good night", "gute Nacht", "bonne nuit", "buenas noches", "buona notte", "boa noite"),
    (
        "where is the train station?",
        "wo ist der Bahnhof?",
        "où est la gare ?",
        "¿dónde está la estación de tren?",
        "dov'è la stazione?",
        "onde fica a estação de comboios?",
    ),
    (
        "how much does it cost?",
        "wie viel kostet das?",
        "combien ça coûte ?",
        "¿cuánto cuesta?",
        "quanto costa?",
        "quanto custa?",
    ),
    (
        "the bill, please",
        "die Rechnung, bitte",
        "l'addition, s'il vous plaît",
        "la cuenta, por favor",
        "il conto, per favore",
        "a conta, por favor",
    ),
    (
        "i would like a coffee",
        "ich hätte gern einen Kaffee",
        "je voudrais un café",
        "quisiera un café",
        "vorrei un caffè",
        "queria um café",
    ),
    ("see you tomorrow", "bis morgen", "à demain", "hasta mañana", "a domani", "até amanhã"),
)
_CODES = tuple(LANGUAGES)


def _lookup(text: str) -> tuple[int, str] | None:
    key = normalize_name(text)
    for row_index, row in enumerate(_PHRASES):
        for code, phrase in zip(_CODES, row, strict=True):
            if normalize_name(phrase) == key:
                return row_index, code
    return None


@provider.tool(
    "translate_text",
    "Translate a short phrase into another language (source language auto-detected when omitted).",
    params={
        "text": string("Text to translate.", min_length=1, max_length=500),
        "target_language": LANGUAGE,
        "source_language": LANGUAGE,
    },
    required=("text", "target_language"),
    output=obj(
        {
            "text": string(),
            "source_language": string(),
            "target_language": string(),
            "translation": string(),
        },
        ("translation", "target_language"),
    ),
)
def _translate_text(world: World, args: dict[str, Any]) -> dict[str, Any]:
    found = _lookup(args["text"])
    if found is None:
        raise ToolEnvNotFoundError(
            f"no translation available for {args['text']!r}; try a common travel phrase"
        )
    row, detected = found
    target = args["target_language"]
    return {
        "text": args["text"],
        "source_language": args.get("source_language", detected),
        "target_language": target,
        "translation": _PHRASES[row][_CODES.index(target)],
    }


@provider.tool(
    "detect_language",
    "Detect the language of a text, with a confidence between 0 and 1.",
    params={"text": string("Text to analyse.", min_length=1, max_length=2000)},
    required=("text",),
    output=obj(
        {"language": string(), "name": string(), "confidence": number(minimum=0, maximum=1)},
        ("language", "confidence"),
    ),
)
def _detect_language(world: World, args: dict[str, Any]) -> dict[str, Any]:
    found = _lookup(args["text"])
    code, confidence = (found[1], 0.99) if found else ("en", 0.41)
    return {"language": code, "name": LANGUAGES[code], "confidence": confidence}


@provider.tool(
    "list_languages",
    "Languages the translator supports.",
    params={},
    output=obj(
        {"languages": array(obj({"code": string(), "name": string()}, ("code", "name")))},
        ("languages",),
    ),
)
def _list_languages(world: World, args: dict[str, Any]) -> dict[str, Any]:
    return {"languages": [{"code": code, "name": name} for code, name in LANGUAGES.items()]}
