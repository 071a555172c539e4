"""Paimon's pages: ``maxResults`` (default and cap 100, as Paimon's server), ``pageToken`` (the key
of the last item of the previous page: a page holds the keys strictly after it), a name pattern
(SQL LIKE: ``%`` any run, ``_`` one character; Paimon documents prefix patterns ``abc%``), and an
answer of the list plus ``nextPageToken``, always present (pypaimon requires the key), null on a
page that is not full. Keys are sorted, so a page is stable while names come and go.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from paimon_sql.server.rest.errors import bad_request

MAX_RESULTS = 100


def like(pattern: Optional[str]) -> Callable[[str], bool]:
    """A test of names against SQL LIKE ``pattern`` (None or empty: every name)."""
    if not pattern:
        return lambda name: True
    regex = re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern), re.S)
    return lambda name: regex.fullmatch(name) is not None


def page(items: Iterable[Tuple[str, Any]], query: Dict[str, str], key: str) -> Dict[str, Any]:
    """``{key: [...], "nextPageToken": ...}``: the page ``query`` asks for of (sort key, item) pairs."""
    text = query.get("maxResults")
    try:
        wanted = int(text) if text else MAX_RESULTS
    except ValueError:
        raise bad_request(f"maxResults must be a number, got {text!r}") from None
    size = min(wanted, MAX_RESULTS) if wanted > 0 else MAX_RESULTS
    after = query.get("pageToken") or None
    ordered = sorted(((k, v) for k, v in items if after is None or k > after), key=lambda kv: kv[0])
    chosen: List[Tuple[str, Any]] = ordered[:size]
    token = chosen[-1][0] if len(chosen) == size and len(ordered) > size else None
    return {key: [v for _, v in chosen], "nextPageToken": token}
