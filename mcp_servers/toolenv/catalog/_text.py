"""Text helpers shared by the importers: HTML stripping, shortening, identifiers."""

from __future__ import annotations

import hashlib
import html
import re

__all__ = ["clean_text", "slug", "tool_name"]

_TAG = re.compile(r"<[^>]+>")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_MARK = re.compile(r"(\*\*|__|`+|^#+\s*)", re.MULTILINE)
_SPACE = re.compile(r"\s+")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_NAME_INVALID = re.compile(r"_*[^A-Za-z0-9_-]+_*")


def clean_text(text: object, *, limit: int = 400) -> str:
    """Return ``text`` without HTML tags or Markdown marks, on one line, cut to ``limit`` chars.

    A cut prefers the end of a sentence when one lies in the second half of the limit.
    """
    if not isinstance(text, str) or not text or limit <= 0:
        return ""
    plain = _MD_MARK.sub("", _MD_LINK.sub(r"\1", _TAG.sub(" ", text)))
    plain = _SPACE.sub(" ", html.unescape(plain)).strip()
    if len(plain) <= limit:
        return plain
    head = plain[:limit]
    stop = head.rfind(". ")
    if stop >= limit // 2:
        return head[: stop + 1]
    return head[: limit - 1].rstrip() + "…"


def slug(text: str, *, max_len: int = 40) -> str:
    """A lower-case ``[a-z0-9_]`` identifier of ``text``.

    A cut adds a short hash so it stays unique.
    """
    base = _NON_ALNUM.sub("_", text).strip("_").lower() or "x"
    if len(base) <= max_len:
        return base
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
    return f"{base[: max_len - 7].rstrip('_')}_{digest}"


def tool_name(text: str) -> str:
    """A tool name made of ``[A-Za-z0-9_-]`` (case kept); invalid runs become ``_``."""
    return _NAME_INVALID.sub("_", text).strip("_") or "tool"
