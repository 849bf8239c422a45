"""The web application's server: a Starlette app behind a token, served by uvicorn on this machine.

Every request must carry the access token: in the URL (``?token=...``, as printed and opened) or in the
cookie the first good request sets (HttpOnly, SameSite=Strict: another site's page cannot send it). Any
other request gets 403. Uploaded tables go to a private temporary directory (0700) removed on exit; uvicorn's
access log is off (a URL holds the token, a form field a column name).
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["TOKEN_COOKIE", "TokenGuard", "make_app", "serve", "listening_socket"]

TOKEN_COOKIE = "ppdm_token"


class TokenGuard:
    """ASGI middleware: a request without the right token gets 403; a good ``?token=`` sets the cookie."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse

        request = Request(scope)
        given = request.query_params.get("token")
        cookie = request.cookies.get(TOKEN_COOKIE)
        good_query = given is not None and secrets.compare_digest(given, self.token)
        good_cookie = cookie is not None and secrets.compare_digest(cookie, self.token)
        if not (good_query or good_cookie):
            response = PlainTextResponse("403: this ppdm workbench needs its access token: open the URL ppdm app "
                                         "printed", status_code=403)
            await response(scope, receive, send)
            return
        if not good_query or good_cookie:
            await self.app(scope, receive, send)
            return

        async def with_cookie(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                value = f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                headers.append((b"set-cookie", value.encode("latin-1")))
                message = message | {"headers": headers}
            await send(message)

        await self.app(scope, receive, with_cookie)


class _SecurityHeaders:
    """No framing, no sniffing, no referrer (the token is in the URL), scripts from this server only."""

    HEADERS = ((b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"),
               (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store"),
               # Vega compiles its expressions with Function(): 'unsafe-eval', and nothing from elsewhere
               (b"content-security-policy", b"default-src 'self'; script-src 'self' 'unsafe-eval'; "
                                            b"style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                                            b"connect-src 'self'; frame-ancestors 'none'; form-action 'self'"))

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def add(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = message | {"headers": [*message.get("headers", []), *self.HEADERS]}
            await send(message)

        await self.app(scope, receive, add)


def make_app(bench: Any, token: str) -> Any:
    """The Starlette application of ``bench`` (a :class:`ppdm.app.workbench.Workbench`) behind ``token``."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    from ppdm.app.routes import routes

    return Starlette(routes=routes(bench), middleware=[Middleware(_SecurityHeaders), Middleware(TokenGuard,
                                                                                               token=token)])


def listening_socket(host: str, port: int | None) -> socket.socket:
    """A socket bound to ``host`` (on ``port``, or a free one) and already listening: the URL printed next
    answers at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port or 0))
        sock.listen(64)
    except OSError as e:
        sock.close()
        from ppdm.exceptions import ParameterError

        raise ParameterError(f"cannot listen on {host}:{port or 0} ({e.strerror or e}); choose another --port or "
                             "--host") from None
    return sock


@contextlib.contextmanager
def private_dir() -> Iterator[Path]:
    """A temporary directory only this user can read (uploads), removed on exit however the server ends."""
    path = Path(tempfile.mkdtemp(prefix="ppdm-app-"))
    path.chmod(0o700)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def serve(table: str | None, *, host: str = "127.0.0.1", port: int | None = None, open_browser: bool = True,
          output: Path | None = None, config: Path | None = None, cache_dir: Path | None = None) -> None:
    """Run the workbench until Ctrl-C: print (and open) its URL with a fresh token; uploads removed on exit."""
    import uvicorn

    from ppdm.app.workbench import Workbench

    token = secrets.token_urlsafe(24)
    with private_dir() as uploads:
        bench = Workbench(upload_dir=uploads, output=output, config_path=config, cache_dir=cache_dir)
        bench.config()  # a bad --config is refused before the server starts
        if table is not None:
            bench.open_table(table)
        bench.load_record()
        sock = listening_socket(host, port)
        port = int(sock.getsockname()[1])
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}/?token={token}"
        server = uvicorn.Server(uvicorn.Config(make_app(bench, token), host=host, port=port, log_level="warning",
                                               access_log=False, lifespan="off"))
        print(f"ppdm app: open {url}", flush=True)
        print("ppdm app: Ctrl-C stops it (a run under way is cancelled; uploads are removed)", file=sys.stderr,
              flush=True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass  # uvicorn hands Ctrl-C back once it has shut down: stopping is this command's normal end
        finally:
            if bench.runner.busy():
                # the run stops at its next stage and publishes nothing; a run killed later than this is
                # recovered by the next run on the same outputs (ppdm.data.publish)
                bench.runner.cancel()
                bench.runner.wait(timeout=60)
            sock.close()
        print("ppdm app: stopped", file=sys.stderr, flush=True)
