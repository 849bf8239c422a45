"""``ppdm app``: the data steward's workbench in the browser.

A local web application (Starlette, served by uvicorn on 127.0.0.1 behind a random token) that walks a data
steward through a release: open a table, check its schema, set the policy, run the sweep with live progress,
explore the frontier of candidates, look at one candidate's attacks, choose another than the policy's with a
reason kept in the record, and download the release, the record and the report. Every run is
:func:`ppdm.release.release`, as ``ppdm release`` calls it. Needs the ``app`` extra (``pip install 'ppdm[app]'``).
"""

from __future__ import annotations

__all__ = ["serve"]


def serve(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Run the workbench (see :func:`ppdm.app.server.serve`)."""
    from ppdm.app.server import serve as _serve

    return _serve(*args, **kwargs)
