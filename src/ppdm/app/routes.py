"""The workbench's pages and their small JSON API, page by page along the steward's path:
open a table, its schema, the policy, the run, the frontier, a candidate (and choosing it), the downloads.

Forms are posted URL-encoded and read here (no multipart parser: an upload is the file's bytes in the body
of one request). Every error a steward can make is a :class:`ppdm.exceptions.PPDMError`, shown on the page
as the CLI prints it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from ppdm.app import views
from ppdm.app.jobs import JobBusy
from ppdm.exceptions import PPDMError

__all__ = ["routes"]

#: the largest upload taken (a larger table is opened by its path on this machine)
MAX_UPLOAD = 2 * 1024**3
#: the files a steward may download, by name; the state is never one of them
DOWNLOADS = {"release": None, "record": "release.json", "report": "report.html"}

_PAGES = (("/", "Table"), ("/schema", "Schema"), ("/policy", "Policy"), ("/run", "Run"),
          ("/frontier", "Frontier"), ("/downloads", "Downloads"))


def routes(bench: Any) -> list[Any]:
    """The routes of the workbench ``bench``."""
    import jinja2
    from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    folder = resources.files("ppdm.app")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder.joinpath("templates"))),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["pct"] = lambda v: "-" if v is None else f"{float(v):.1f} %"
    env.filters["share"] = lambda v: "-" if v is None or isinstance(v, (bool, dict, list)) else f"{100 * v:.1f} %"

    def page(request: Any, name: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("error", None)
        html = env.get_template(name).render(bench=bench, pages=_PAGES, path=request.url.path,
                                             job=None if bench.runner.job is None else bench.runner.job.public(),
                                             **context)
        return HTMLResponse(html, status_code=status)

    async def form(request: Any) -> dict[str, str]:
        body = (await request.body()).decode("utf-8", "replace")
        return dict(parse_qsl(body, keep_blank_values=True))

    def go(where: str) -> Response:
        return RedirectResponse(where, status_code=303)

    # ------------------------------------------------------------------ open a table

    async def home(request: Any) -> Response:
        return page(request, "open.html.j2", title="Open a table")

    async def open_path(request: Any) -> Response:
        data = await form(request)
        try:
            bench.open_table(data.get("path", ""))
        except (PPDMError, OSError) as e:
            return page(request, "open.html.j2", 400, title="Open a table", error=_message(e))
        return go("/schema")

    async def upload(request: Any) -> Response:
        name = request.query_params.get("name", "")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_UPLOAD:
                return JSONResponse({"error": "the table is over 2 GB: open it by its path on this machine"},
                                    status_code=413)
            chunks.append(chunk)
        try:
            bench.open_table(bench.save_upload(name, chunks))
        except (PPDMError, OSError) as e:
            return JSONResponse({"error": _message(e)}, status_code=400)
        return JSONResponse({"next": "/schema"})

    # ------------------------------------------------------------------ schema and policy

    async def schema(request: Any) -> Response:
        error = None
        if request.method == "POST":
            data = await form(request)
            try:
                bench.set_roles({k[5:]: v for k, v in data.items() if k.startswith("role:")})
            except PPDMError as e:
                error = _message(e)
            else:
                return go("/policy" if data.get("next") else "/schema")
        if bench.table is None:
            return go("/")
        return page(request, "schema.html.j2", 400 if error else 200, title="Schema", error=error,
                    roles=_roles(bench), reason=views.type_reason)

    async def policy(request: Any) -> Response:
        error = None
        if request.method == "POST":
            data = await form(request)
            try:
                bench.apply_settings(data)
                if data.get("action") == "run":
                    bench.start_sweep()
                    return go("/run")
            except (PPDMError, JobBusy) as e:
                error = _message(e)
            else:
                return go("/policy")
        if bench.table is None:
            return go("/")
        return _policy_page(request, error)

    def _policy_page(request: Any, error: str | None) -> Response:
        from ppdm.attacks._threat import PRESETS
        from ppdm.release.config import DEFAULT_GRIDS, OBJECTIVES, default_methods

        cfg = bench.config()
        used = {m.method: m.grid for m in cfg.methods}
        methods = [{"name": m, "used": m in used, "grid": _flow(used.get(m, DEFAULT_GRIDS.get(m, {})))}
                   for m in dict.fromkeys([*used, *default_methods()])]
        return page(request, "policy.html.j2", 400 if error else 200, title="Policy", error=error, cfg=cfg,
                    limits=views.policy_limits(cfg), threats=PRESETS, objectives=OBJECTIVES, methods=methods)

    # ------------------------------------------------------------------ the run

    async def run(request: Any) -> Response:
        return page(request, "run.html.j2", title="Run")

    async def job(request: Any) -> Response:
        return JSONResponse(None if bench.runner.job is None else bench.runner.job.public())

    async def cancel(request: Any) -> Response:
        bench.runner.cancel()
        if "application/json" in request.headers.get("accept", ""):
            return JSONResponse({"cancelling": True})
        return go("/run")

    # ------------------------------------------------------------------ frontier and candidates

    async def frontier(request: Any) -> Response:
        if bench.record is None:
            return go("/run")
        points = views.frontier_points(bench.record)
        return page(request, "frontier.html.j2", title="Frontier", points=points, tests=views.RISK_TESTS,
                    objective=views.objective_of(bench.record), record=bench.record,
                    families=sorted({p["family"] for p in points}),
                    guarantees=sorted({p["guarantee"] for p in points}))

    async def frontier_data(request: Any) -> Response:
        if bench.record is None:
            return JSONResponse({"points": []})
        return JSONResponse({"points": views.frontier_points(bench.record),
                             "objective": views.objective_of(bench.record)})

    async def candidate(request: Any) -> Response:
        if bench.record is None:
            return go("/run")
        i = request.path_params["i"]
        if not 0 <= i < len(bench.record["candidates"]):
            return page(request, "open.html.j2", 404, title="No such candidate", error="no such candidate")
        error = None
        if request.method == "POST":
            data = await form(request)
            try:
                name = views.candidate_view(bench.record, i, bench.config().policy)["name"]
                bench.start_choice(name, data.get("reason", ""))
                return go("/run")
            except (PPDMError, JobBusy) as e:
                error = _message(e)
        view = views.candidate_view(bench.record, i, bench.config().policy)
        return page(request, "candidate.html.j2", 400 if error else 200, title=view["name"], v=view, error=error,
                    record=bench.record)

    # ------------------------------------------------------------------ downloads

    async def downloads(request: Any) -> Response:
        return page(request, "downloads.html.j2", title="Downloads", files=_files(bench), record=bench.record)

    async def download(request: Any) -> Response:
        files = _files(bench)
        what = request.path_params["what"]
        if what not in files or files[what] is None:
            return page(request, "open.html.j2", 404, title="Not found", error="no such download")
        path = files[what]
        return FileResponse(path, filename=path.name, headers={"cache-control": "no-store"})

    static = StaticFiles(directory=str(folder.joinpath("static")))
    return [
        Route("/", home), Route("/open", open_path, methods=["POST"]), Route("/upload", upload, methods=["POST"]),
        Route("/schema", schema, methods=["GET", "POST"]), Route("/policy", policy, methods=["GET", "POST"]),
        Route("/run", run), Route("/api/job", job), Route("/api/cancel", cancel, methods=["POST"]),
        Route("/frontier", frontier), Route("/api/frontier", frontier_data),
        Route("/candidate/{i:int}", candidate, methods=["GET", "POST"]),
        Route("/downloads", downloads), Route("/download/{what}", download),
        Mount("/static", static, name="static"),
    ]


def _message(e: BaseException) -> str:
    if isinstance(e, OSError):
        return f"{e.strerror or e}; check the path and its permissions"
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _roles(bench: Any) -> list[dict[str, Any]]:
    """Each column's row on the schema page: inferred type and its reason, role, treatment, counts."""
    return [{"info": i, "role": "identifier" if i.name == bench.id else i.role} for i in bench.infos]


def _flow(grid: dict[str, Any]) -> str:
    """A grid as one line of YAML (``{k: [20, 30]}``), which the page edits and the settings read back."""
    import yaml

    return yaml.safe_dump(grid, default_flow_style=True, width=10_000).strip()


def _files(bench: Any) -> dict[str, Path | None]:
    """The downloadable files of the published release (release, record, report); never the state."""
    out = bench.output
    if out is None or bench.record is None:
        return dict.fromkeys(DOWNLOADS)
    files: dict[str, Path | None] = {}
    for what, name in DOWNLOADS.items():
        name = name or bench.record["files"]["release"]
        path = out / name
        files[what] = path if path.is_file() else None
    return files
