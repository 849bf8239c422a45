from __future__ import annotations

from collections.abc import Callable

import pytest

from ppdm.cli import main


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``ppdm ARGS`` in-process; return (exit code, stdout, stderr)."""

    def run(*args: object) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as e:
            main([str(a) for a in args])
        out, err = capsys.readouterr()
        return int(e.value.code or 0), out, err

    return run
