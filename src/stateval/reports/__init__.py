"""Reports: of a run (terminal summary, JSON, JUnit XML, Markdown, HTML with a regression
section against a baseline, or a diff on its own page) and of a mutation test (terminal, JSON,
JUnit XML) and of a monitor run (terminal, JSON, Markdown). A new report format goes here, one
module per format."""

from __future__ import annotations

from stateval.reports._atomic import atomic_file, write_atomically
from stateval.reports._charts import require_charts
from stateval.reports._html import HtmlSection, html_report, write_html_report
from stateval.reports._json import write_json_report
from stateval.reports._junit import junit_xml, write_junit_report
from stateval.reports._markdown import markdown_report, write_markdown_report
from stateval.reports._mutation import (
    inert_summary,
    mutation_junit_xml,
    print_mutation_report,
    write_mutation_json,
    write_mutation_junit,
)
from stateval.reports._regressions import (
    diff_html_report,
    regression_section,
    write_diff_html_report,
)
from stateval.reports._terminal import print_summary
from stateval.reports._traces import (
    print_traces_summary,
    traces_markdown,
    write_traces_json,
    write_traces_markdown,
)

__all__ = [
    "HtmlSection",
    "atomic_file",
    "diff_html_report",
    "html_report",
    "inert_summary",
    "junit_xml",
    "markdown_report",
    "mutation_junit_xml",
    "print_mutation_report",
    "print_summary",
    "print_traces_summary",
    "regression_section",
    "require_charts",
    "traces_markdown",
    "write_atomically",
    "write_diff_html_report",
    "write_html_report",
    "write_json_report",
    "write_junit_report",
    "write_markdown_report",
    "write_mutation_json",
    "write_mutation_junit",
    "write_traces_json",
    "write_traces_markdown",
]
