"""Reports of a run: terminal summary, JSON, JUnit XML, Markdown, HTML."""

from __future__ import annotations

from stateval.reports._charts import require_charts
from stateval.reports._html import HtmlSection, html_report, write_html_report
from stateval.reports._json import write_json_report
from stateval.reports._junit import junit_xml, write_junit_report
from stateval.reports._markdown import markdown_report, write_markdown_report
from stateval.reports._terminal import print_summary

__all__ = [
    "HtmlSection",
    "html_report",
    "junit_xml",
    "markdown_report",
    "print_summary",
    "require_charts",
    "write_html_report",
    "write_json_report",
    "write_junit_report",
    "write_markdown_report",
]
