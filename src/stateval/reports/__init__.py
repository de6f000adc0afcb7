"""Reports of a run: terminal summary, JSON, JUnit XML, Markdown."""

from __future__ import annotations

from stateval.reports._json import write_json_report
from stateval.reports._junit import junit_xml, write_junit_report
from stateval.reports._markdown import markdown_report, write_markdown_report
from stateval.reports._terminal import print_summary

__all__ = [
    "junit_xml",
    "markdown_report",
    "print_summary",
    "write_json_report",
    "write_junit_report",
    "write_markdown_report",
]
