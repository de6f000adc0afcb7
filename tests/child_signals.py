"""Signals for the child processes tests start and then stop as a user would."""

from __future__ import annotations

import signal


def sigint_as_at_a_terminal() -> None:
    """``preexec_fn`` for a child a test stops with SIGINT (Ctrl-C).

    A shell starts background jobs (``nohup ... &``, a CI script run that way) with SIGINT
    ignored, and children inherit it: Python then installs no KeyboardInterrupt handler and
    the child never sees the test's Ctrl-C. The default disposition makes it a terminal's.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
