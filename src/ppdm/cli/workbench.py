"""``ppdm app``: the data steward's workbench in the browser (needs the ``app`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

LOCAL = "127.0.0.1"


def app_command(
    input: Annotated[str | None, typer.Argument(help="Table to open (CSV/TSV/Parquet), or none.")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Output directory of the release (default: TABLE-release in this directory).")] = None,
    config: Annotated[Path | None, typer.Option(
        help="YAML config to start from (methods, grids, threat, policy), as ppdm release --config.")] = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Cache of scored candidates.")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: a free one).", min=1, max=65535)] = None,
    host: Annotated[str, typer.Option(
        help="Address to listen on. Anything but 127.0.0.1 lets other machines reach the workbench (the token "
             "still guards it, over plain HTTP): only with care.")] = LOCAL,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Only print the URL.")] = False,
) -> None:
    """Start the steward's workbench on this machine and print (and open) its URL with its access token."""
    import sys

    from ppdm.exceptions import ParameterError

    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise ParameterError("ppdm app needs the app extra: pip install 'ppdm[app]'") from None
    if host not in (LOCAL, "localhost", "::1"):
        print(f"warning: ppdm app listens on {host}: other machines can reach it (over plain HTTP, the token "
              "is all that guards the table's schema and the release)", file=sys.stderr)
    from ppdm.app import serve

    serve(input, host=host, port=port, open_browser=not no_browser, output=output, config=config,
          cache_dir=cache_dir)


def register(app: typer.Typer) -> None:
    app.command("app")(app_command)
