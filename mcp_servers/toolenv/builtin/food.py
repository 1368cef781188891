"""The ``recipes`` provider: recipe search, details, nutrition and ingredient substitutes."""

from __future__ import annotations

from typing import Any

from ..geo import normalize_name
from ..world import Recipe, World
from ._registry import Provider
from ._schema import array, integer, number, obj, string

provider = Provider("recipes", "Food")

RECIPE_ID = string("Recipe id such as 'rcp_007' (see search_recipes).", pattern=r"^rcp_\d{3}$")
DIET = string("Dietary requirement.", enum=("vegetarian", "vegan", "gluten free", "dairy free"))
_SUBSTITUTES = {
    "butter": ("olive oil", "margarine", "coconut oil"),
    "egg": ("flax egg", "mashed banana", "apple sauce"),
    "milk": ("oat milk", "soy milk", "almond milk"),
    "yogurt": ("sour cream", "coconut yogurt"),
    "flour": ("oat flour", "almond flour", "rice flour"),
    "sugar": ("honey", "maple syrup"),
    "parmesan": ("pecorino", "nutritional yeast"),
    "soy sauce": ("tamari", "coconut aminos"),
    "cream": ("coconut cream", "cashew cream"),
    "beef": ("mushrooms", "seitan", "lentils"),
}


def _summary(recipe: Recipe) -> dict[str, Any]:
    return {
        "recipe_id": recipe.recipe_id,
        "name": recipe.name,
        "cuisine": recipe.cuisine,
        "minutes": recipe.minutes,
        "diets": list(recipe.diets),
    }


@provider.tool(
    "search_recipes",
    "Find recipes by keywords, cuisine, diet and maximum total cooking time.",
    params={
        "query": string("Keywords, e.g. 'pasta' or 'curry'."),
        "cuisine": string("Cuisine.", enum=World.cuisines() + ("korean",)),
        "diet": DIET,
        "max_minutes": integer("Maximum total time in minutes.", minimum=5),
    },
    output=obj(
        {
            "recipes": array(
                obj(
                    {
                        "recipe_id": string(),
                        "name": string(),
                        "cuisine": string(),
                        "minutes": integer(),
                        "diets": array(string()),
                    },
                    ("recipe_id", "name"),
                )
            )
        },
        ("recipes",),
    ),
)
def _search_recipes(world: World, args: dict[str, Any]) -> dict[str, Any]:
    words = normalize_name(args.get("query", "")).split()
    found = [
        r
        for r in world.recipes.values()
        if all(w in normalize_name(f"{r.name} {' '.join(r.ingredients)}") for w in words)
        and args.get("cuisine") in (None, r.cuisine)
        and (args.get("diet") is None or args["diet"] in r.diets)
        and r.minutes <= args.get("max_minutes", 10_000)
    ]
    return {"recipes": [_summary(r) for r in found]}


@provider.tool(
    "get_recipe",
    "Ingredients, steps, servings and total time of a recipe.",
    params={"recipe_id": RECIPE_ID},
    required=("recipe_id",),
    output=obj(
        {
            "recipe_id": string(),
            "name": string(),
            "cuisine": string(),
            "minutes": integer(),
            "diets": array(string()),
            "servings": integer(),
            "ingredients": array(string()),
            "steps": array(string()),
        },
        ("recipe_id", "name", "ingredients", "steps"),
    ),
)
def _get_recipe(world: World, args: dict[str, Any]) -> dict[str, Any]:
    r = world.recipe(args["recipe_id"])
    return {
        **_summary(r),
        "servings": r.servings,
        "ingredients": list(r.ingredients),
        "steps": list(r.steps),
    }


@provider.tool(
    "get_nutrition",
    (
        "Calories and macronutrients (protein, carbohydrates, fat in grams) of a recipe for a "
        "number of servings."
    ),
    params={
        "recipe_id": RECIPE_ID,
        "servings": integer("Number of servings.", minimum=1, maximum=20, default=1),
    },
    required=("recipe_id",),
    output=obj(
        {
            "recipe_id": string(),
            "servings": integer(),
            "calories": integer(),
            "protein_g": number(),
            "carbs_g": number(),
            "fat_g": number(),
        },
        ("recipe_id", "servings", "calories"),
    ),
)
def _get_nutrition(world: World, args: dict[str, Any]) -> dict[str, Any]:
    r = world.recipe(args["recipe_id"])
    n = args.get("servings", 1)
    return {
        "recipe_id": r.recipe_id,
        "servings": n,
        "calories": r.calories * n,
        "protein_g": round(r.protein_g * n, 1),
        "carbs_g": round(r.carbs_g * n, 1),
        "fat_g": round(r.fat_g * n, 1),
    }


@provider.tool(
    "get_ingredient_substitutes",
    "Common substitutes for a cooking ingredient (e.g. for butter, egg, milk).",
    params={"ingredient": string("Ingredient name.", min_length=2)},
    required=("ingredient",),
    output=obj(
        {"ingredient": string(), "substitutes": array(string())}, ("ingredient", "substitutes")
    ),
)
def _get_ingredient_substitutes(world: World, args: dict[str, Any]) -> dict[str, Any]:
    key = normalize_name(args["ingredient"]).removesuffix("s")
    return {"ingredient": args["ingredient"], "substitutes": list(_SUBSTITUTES.get(key, ()))}
