"""The JUnit XML report (``--junit``): one test case per case, failures naming the fields.

`write_junit_report` writes the cases one at a time (they are streamed from the summary), so a
report of 100,000 cases is never held in memory whole.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from stateval.reports._atomic import atomic_file
from stateval.run import CaseScore, RunSummary

__all__ = ["junit_xml", "write_junit_report"]


def _failure_text(score: CaseScore) -> tuple[str, str]:
    wrong = score.comparison.unmatched()
    names = ", ".join(f"{f.path} ({f.status.value})" for f in wrong)
    checks = score.failed_checks
    parts = []
    if wrong:
        parts.append(f"{len(wrong)} field(s) wrong: {names}")
    if checks:
        parts.append("failed checks: " + ", ".join(c.name for c in checks))
    body = "\n".join(
        [f.explanation for f in wrong] + [f"{c.name}: {c.explanation}" for c in checks]
    )
    return "; ".join(parts), body


def _suite(summary: RunSummary) -> ET.Element:
    """The ``<testsuites>`` element with its ``<testsuite>`` and properties, no test cases."""
    root = ET.Element("testsuites", name="stateval")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=summary.suite_name,
        tests=str(summary.n_cases),
        failures=str(summary.n_failing - summary.n_errors),
        errors=str(summary.n_errors),
        time=f"{summary.mean_time * summary.n_cases:.3f}",
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("run_id", summary.run_id),
        ("overall_match_rate", f"{summary.overall_match_rate:.4f}"),
        ("accuracy", f"{summary.accuracy:.4f}"),
        ("experiment_url", summary.experiment_url or ""),
    ):
        ET.SubElement(props, "property", name=key, value=value)
    return root


def _testcase(suite_name: str, score: CaseScore) -> ET.Element:
    case = ET.Element(
        "testcase", classname=suite_name, name=score.case_id, time=f"{score.result.time_used:.3f}"
    )
    if not score.ok:
        error = ET.SubElement(
            case,
            "error",
            type=score.result.error_type or "Error",
            message=score.result.error or "mutator failed",
        )
        error.text = score.result.raw_output or score.result.error or ""
    elif not score.overall_match or score.failed_checks:
        message, body = _failure_text(score)
        failure = ET.SubElement(case, "failure", type="FieldMismatch", message=message)
        failure.text = body
    return case


def junit_xml(summary: RunSummary) -> ET.Element:
    """The ``<testsuites>`` element of a run.

    A case whose fields do not all match, or whose checks fail, is a ``<failure>`` naming the
    wrong fields; a case whose mutator raised is an ``<error>``.
    """
    root = _suite(summary)
    suite = root[0]
    for score in summary.cases:
        suite.append(_testcase(summary.suite_name, score))
    return root


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """Serialised XML with the characters XML 1.0 cannot hold (``\\x1b`` in a case id, a lone
    surrogate in a value) written as ``\\xNN`` / ``\\uNNNN``, so every parser reads the file.

    Example:
        >>> xml_safe('<testcase name="\x1b[31m" />')
        '<testcase name="\\\\x1b[31m" />'
    """
    return _NOT_XML.sub(lambda m: ascii(m.group())[1:-1], text)


def write_junit_report(summary: RunSummary, path: str | Path) -> None:
    """Write `junit_xml` to ``path``, one test case at a time."""
    root = _suite(summary)
    ET.indent(root)
    head = ET.tostring(root, encoding="unicode").removesuffix("</testsuite>\n</testsuites>")
    with atomic_file(path) as handle:
        handle.write(xml_safe("<?xml version='1.0' encoding='utf-8'?>\n" + head.rstrip()).encode())
        for score in summary.cases:
            case = _testcase(summary.suite_name, score)
            ET.indent(case, level=2)
            text = "\n    " + ET.tostring(case, encoding="unicode").rstrip()
            handle.write(xml_safe(text).encode())
        handle.write(b"\n  </testsuite>\n</testsuites>\n")
