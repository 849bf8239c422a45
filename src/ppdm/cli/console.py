"""The command line's consoles: rich without markup, because what they print holds the user's own strings.

Column names, categories, ids and paths come from the user's table and command line. With rich's markup on,
a column named ``[/b]`` stopped ``ppdm schema`` with a markup error and one named ``[bold]x`` printed as a
bold ``x``. The few words the commands mean to style are styled as :class:`rich.text.Text` spans instead.
"""

from __future__ import annotations

from typing import Any

__all__ = ["plain_console", "styled"]


def plain_console(stderr: bool = False, **kwargs: Any) -> Any:
    """A rich console that prints strings as they are (no markup, no highlighting)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, markup=False, **kwargs)


def styled(*parts: str | tuple[str, str]) -> Any:
    """One line of plain strings and ``(text, style)`` spans, e.g. ``styled(("mdav", "bold"), " -> out.csv")``."""
    from rich.text import Text

    return Text.assemble(*parts)
