"""The ``ppdm`` command line: a thin typer shell over :mod:`ppdm.pipeline` and friends.

Expected errors (:class:`ppdm.exceptions.PPDMError` and usage errors) print one line to stderr and
exit with code 2; no traceback is shown unless ``PPDM_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["main"]


def _short_warning(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
    print(f"warning ({category.__name__}): {message}", file=sys.stderr)


def _exit_code(e: BaseException) -> int | None:
    """Exit code of a click/typer ``Exit`` (typer may vendor its own click, so match by name)."""
    if type(e).__name__ == "Exit" and hasattr(e, "exit_code"):
        return int(e.exit_code)
    return None


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``ppdm`` console script."""
    from ppdm.cli.app import app
    from ppdm.exceptions import PPDMError

    warnings.showwarning = _short_warning
    debug = os.environ.get("PPDM_DEBUG") == "1"
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="ppdm")
    except PPDMError as e:
        if debug:
            raise
        print(f"ppdm: error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("ppdm: interrupted; no output was written", file=sys.stderr)
        sys.exit(130)
    except MemoryError:
        print("ppdm: error: out of memory; sample the rows or use --backend dask", file=sys.stderr)
        sys.exit(2)
    except Exception as e:
        code = _exit_code(e)
        if code is not None:
            sys.exit(code)
        if type(e).__name__ == "Abort":
            print("ppdm: aborted", file=sys.stderr)
            sys.exit(130)
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):  # click/typer usage errors
            if debug:
                raise
            ctx = getattr(e, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            print(f"ppdm: error: {e.format_message()}{hint}", file=sys.stderr)
            sys.exit(2)
        if debug:
            raise
        # an unexpected failure is a bug: one line, traceback on request
        print(f"ppdm: internal error: {type(e).__name__}: {e} (rerun with PPDM_DEBUG=1 for details)",
              file=sys.stderr)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)
