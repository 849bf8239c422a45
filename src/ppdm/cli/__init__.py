"""The ``ppdm`` command line: a thin typer shell over :mod:`ppdm.pipeline` and friends.

Expected errors (:class:`ppdm.exceptions.PPDMError` and usage errors) print one line to stderr and
exit with code 2; no traceback is shown unless ``PPDM_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

__all__ = ["command", "main"]


def _short_warning(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
    print(f"warning ({category.__name__}): {message}", file=sys.stderr)


def _one_line(text: str) -> str:
    """Control characters (a newline in a column name, a terminal escape) shown escaped: one line, no forgery."""
    import re

    return re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], text)


def _exit_code(e: BaseException) -> int | None:
    """Exit code of a click/typer ``Exit`` (typer may vendor its own click, so match by name)."""
    if type(e).__name__ == "Exit" and hasattr(e, "exit_code"):
        return int(e.exit_code)
    return None


def _plain_flags(cmd: Any) -> Any:
    """Boolean flags take no value: show no ``<bool>`` placeholder for them in ``--help``."""
    for param in getattr(cmd, "params", []):
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    make_help = cmd.get_help_option

    def help_option(ctx: Any) -> Any:
        opt = make_help(ctx)  # built per context, after the loop above
        if opt is not None:
            opt.metavar = ""
        return opt

    cmd.get_help_option = help_option
    for sub in getattr(cmd, "commands", {}).values():
        _plain_flags(sub)
    return cmd


def command() -> Any:
    """The click command behind the ``ppdm`` typer app (what ``main`` runs and the docs render)."""
    import typer.main

    from ppdm.cli.app import app

    return _plain_flags(typer.main.get_command(app))


def _terminate(signum: int, frame: Any) -> None:
    """SIGTERM and SIGHUP end a run as Ctrl-C does: what it was writing is removed (a publication under way
    finishes first: see :mod:`ppdm.data.publish`)."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``ppdm`` console script."""
    import signal
    import threading

    from ppdm.utils.memory import quiet_worker_restarts

    warnings.showwarning = _short_warning
    quiet_worker_restarts()
    polite = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None))
              if s is not None and threading.current_thread() is threading.main_thread()
              and signal.getsignal(s) is signal.SIG_DFL]
    try:
        for sig in polite:
            signal.signal(sig, _terminate)
        try:
            _run(argv)
        finally:
            for sig in polite:
                signal.signal(sig, signal.SIG_DFL)
    except KeyboardInterrupt:
        # a signal that landed outside the run's own handling (as the run ended and its exit was under way):
        # still the exit code of an interrupted run, never Python's own death by SIGINT
        _interrupted()


def _interrupted() -> None:
    """End an interrupted run: one line saying what it had published, exit code 130."""
    from ppdm.data.publish import published

    done = "; the outputs it had published are complete" if published() else "; no output was written"
    print(f"ppdm: interrupted{done}", file=sys.stderr)
    sys.exit(130)


def _run(argv: list[str] | None) -> None:
    """Run the command line; every way out is an exit code (see :func:`main`)."""
    from ppdm.exceptions import PPDMError

    debug = os.environ.get("PPDM_DEBUG") == "1"
    try:
        rv = command().main(args=argv, standalone_mode=False, prog_name="ppdm")
    except PPDMError as e:
        if debug:
            raise
        print(f"ppdm: error: {_one_line(str(e))}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:
        # the environment, not ppdm: a name too long, a full disk, a missing permission
        if debug:
            raise
        where = f" ('{_one_line(str(e.filename))[-120:]}')" if getattr(e, "filename", None) else ""
        print(f"ppdm: error: {_one_line(e.strerror or str(e))}{where}; check the path, its permissions and the free "
              "space", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        _interrupted()
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
            message = e.format_message()
            if not message.strip() and type(e).__name__ == "NoArgsIsHelpError":
                sys.exit(0)  # a group without its subcommand: its help was printed
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            print(f"ppdm: error: {_one_line(message)}{hint}", file=sys.stderr)
            sys.exit(2)
        if debug:
            raise
        # an unexpected failure is a bug: one line, traceback on request
        print(f"ppdm: internal error: {type(e).__name__}: {e} (rerun with PPDM_DEBUG=1 for details)",
              file=sys.stderr)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)
