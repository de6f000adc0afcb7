"""Reports: of a run (terminal summary, JSON, JUnit XML, Markdown, HTML with a regression
section against a baseline, or a diff on its own page) and of a mutation test (terminal, JSON,
JUnit XML) and of a monitor run (terminal, JSON, Markdown) and of a monitor measuring itself
(Markdown). A new report format of a run is one module here and one line in
`REPORT_FORMATS`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stateval._lazy import lazy_names
from stateval.reports._atomic import atomic_file, write_atomically
from stateval.reports._formats import REPORT_FORMATS, ReportFormat, ReportRequest

if TYPE_CHECKING:
    from stateval.reports._charts import require_charts
    from stateval.reports._html import HtmlSection, html_report, write_html_report
    from stateval.reports._json import write_json_report
    from stateval.reports._junit import junit_xml, write_junit_report
    from stateval.reports._markdown import markdown_report, write_markdown_report
    from stateval.reports._monitor_measures import rates_markdown, recall_markdown
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
    "REPORT_FORMATS",
    "HtmlSection",
    "ReportFormat",
    "ReportRequest",
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
    "rates_markdown",
    "recall_markdown",
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

# The writers load the run machinery; the table above does not, so `stateval --help` lists the
# report options without it. The rest is imported on first use (PEP 562).
_LAZY = {
    "require_charts": "._charts",
    "HtmlSection": "._html",
    "html_report": "._html",
    "write_html_report": "._html",
    "write_json_report": "._json",
    "junit_xml": "._junit",
    "write_junit_report": "._junit",
    "markdown_report": "._markdown",
    "write_markdown_report": "._markdown",
    "rates_markdown": "._monitor_measures",
    "recall_markdown": "._monitor_measures",
    "inert_summary": "._mutation",
    "mutation_junit_xml": "._mutation",
    "print_mutation_report": "._mutation",
    "write_mutation_json": "._mutation",
    "write_mutation_junit": "._mutation",
    "diff_html_report": "._regressions",
    "regression_section": "._regressions",
    "write_diff_html_report": "._regressions",
    "print_summary": "._terminal",
    "print_traces_summary": "._traces",
    "traces_markdown": "._traces",
    "write_traces_json": "._traces",
    "write_traces_markdown": "._traces",
}


__getattr__ = lazy_names(__name__, _LAZY, globals())
