"""``slots.file`` is bounded: no device or endless file, a size cap with a clear line, text
files that are not slot lists refused, and loading linear in the number of slots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stateval.errors import SuiteProblemsError
from stateval.suite import load_suite

MAX_DOCUMENT_BYTES = 32 * 1024 * 1024  # docs/reliability.md

BASE = (
    'mutator: {type: python, callable: "builtins:print"}\n'
    "cases: {inline: [{id: a, input: {prompt: x}, expected_post_state: {}}]}\n"
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # problems name files relative to here


def _problems(tmp_path: Path, slots: str) -> list[str]:
    path = tmp_path / "suite.yaml"
    path.write_text(BASE + f"slots: {{file: {slots}}}\n")
    with pytest.raises(SuiteProblemsError) as info:
        load_suite(path, load_mutator=False)
    return info.value.problems


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_before_it_is_read(tmp_path: Path) -> None:
    (problem,) = _problems(tmp_path, "/dev/zero")
    assert problem == "suite.yaml:3: slots.file: cannot read /dev/zero: not a regular file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "slots.txt")
    (problem,) = _problems(tmp_path, "slots.txt")
    assert problem == "suite.yaml:3: slots.file: cannot read slots.txt: not a regular file"


def test_a_plain_text_slot_list_over_the_cap_is_refused(tmp_path: Path) -> None:
    line = b"a.slot\n"
    with (tmp_path / "slots.txt").open("wb") as handle:
        handle.truncate(MAX_DOCUMENT_BYTES + 1)  # sparse: no 32 MiB written
        handle.write(line)
    (problem,) = _problems(tmp_path, "slots.txt")
    mib = MAX_DOCUMENT_BYTES // (1024 * 1024)
    assert problem == f"suite.yaml:3: slots.file: cannot read slots.txt: larger than {mib} MiB"


def test_a_text_file_that_is_not_a_slot_list_is_refused_naming_its_line(tmp_path: Path) -> None:
    (tmp_path / "passwd").write_text(
        "# users\nroot:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\n"
    )
    (problem,) = _problems(tmp_path, "passwd")
    assert problem == (
        "passwd:2: slots: 'root:x:0:0:root:/root:/bin/bash' is not a slot path "
        "(dot-separated names of letters, digits, '_' and '-', such as hotel.book_people)"
    )


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="no /etc/passwd")
def test_etc_passwd_is_not_a_slot_list(tmp_path: Path) -> None:
    (problem,) = _problems(tmp_path, "/etc/passwd")
    assert "is not a slot path" in problem


def test_binary_slot_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "slots.txt").write_bytes(b"\xff\xfe\x00a")
    (problem,) = _problems(tmp_path, "slots.txt")
    assert problem == "suite.yaml:3: slots.file: cannot read slots.txt: not UTF-8 text"


def test_many_slots_load_and_duplicates_are_named(tmp_path: Path) -> None:
    # 200,000 slots: seconds once, not minutes (loading is linear; bench/bench_slots.py times it)
    names = [f"s{i}.v" for i in range(200_000)]
    (tmp_path / "slots.txt").write_text("\n".join(names) + "\n")
    path = tmp_path / "suite.yaml"
    path.write_text(BASE + "slots: {file: slots.txt}\n")
    suite = load_suite(path, load_mutator=False)
    assert suite.slots is not None
    assert len(suite.slots) == 200_000
    (tmp_path / "slots.txt").write_text("\n".join([*names[:1000], "s7.v", "s9.v", "s7.v"]))
    (problem,) = _problems(tmp_path, "slots.txt")
    assert problem.endswith("slots: duplicate slots: ['s7.v', 's9.v']")
