"""HTML report rendered from a release record (jinja2; plots by matplotlib, embedded as PNG)."""

from __future__ import annotations

from ppdm.report.render import render_report

__all__ = ["render_report"]
