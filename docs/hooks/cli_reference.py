"""MkDocs hook: replace ``<!-- ppdm-cli-reference -->`` with the help of every ``ppdm`` command.

The reference is generated from the commands themselves at build time, so it cannot drift from the code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

_MARKER = "<!-- ppdm-cli-reference -->"


def _commands() -> list[list[str]]:
    """Every command path, read from the typer app (groups first, then their subcommands)."""
    import click
    import typer.main

    from ppdm.cli.app import app

    out: list[list[str]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        out.append(path)
        if hasattr(cmd, "list_commands"):  # typer may vendor click: duck-type groups
            ctx = click.Context(cmd)
            for name in sorted(cmd.list_commands(ctx)):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return out


def _help(path: list[str]) -> str:
    # a fixed width and no colours keep the page the same on every machine
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1", TERM="dumb")
    p = subprocess.run([sys.executable, "-m", "ppdm", *path, "--help"], capture_output=True, text=True,
                       env=env, timeout=120, check=True)
    return p.stdout.rstrip()


def reference() -> str:
    parts = []
    for path in _commands():
        title = " ".join(["ppdm", *path])
        parts.append(f"## `{title}`\n\n```text\n{_help(path)}\n```\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 (MkDocs hook signature)
    if _MARKER in markdown:
        return markdown.replace(_MARKER, reference())
    return markdown
