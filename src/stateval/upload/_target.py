"""Where a run's results go in Phoenix: the server to report to (``--phoenix-url``, the
environment, or the user's embedded Phoenix), its URL checked."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from stateval.run import PhoenixTarget

if TYPE_CHECKING:
    import httpx

__all__ = ["check_phoenix_url", "resolve_phoenix"]


def resolve_phoenix(
    phoenix_url: str | None,
    no_phoenix: bool,
    recorded_url: str | None,
    announce: Callable[[str], None] = lambda line: None,
) -> PhoenixTarget | None:
    """The Phoenix server to report to, or None for a local-only run.

    In order: ``phoenix_url`` (``--phoenix-url``), the URL a resumed run recorded,
    ``PHOENIX_COLLECTOR_ENDPOINT``, else the user's local Phoenix (one per user, whatever the
    folder; started if need be, and announced). ``PHOENIX_API_KEY`` is sent as a bearer token.
    """
    if no_phoenix:
        return None
    api_key = os.environ.get("PHOENIX_API_KEY") or None
    url = phoenix_url or recorded_url
    if url is None:
        endpoint = os.environ.get("PHOENIX_COLLECTOR_ENDPOINT")
        if endpoint:
            url = endpoint.rstrip("/").removesuffix("/v1/traces")
    if url is not None:
        where = (
            "--phoenix-url"
            if phoenix_url
            else (
                "the resumed run's Phoenix URL"
                if url == recorded_url
                else "PHOENIX_COLLECTOR_ENDPOINT"
            )
        )
        url = check_phoenix_url(url, where)
    if url is None or (url == recorded_url and phoenix_url is None):
        from stateval.server import EmbeddedPhoenix

        embedded = EmbeddedPhoenix()
        if url is None or embedded.status().url == url:
            url = embedded.ensure_running()
            announce(f"Phoenix (embedded): {url}")
    return PhoenixTarget(url.rstrip("/"), api_key)


def check_phoenix_url(url: str, where: str = "--phoenix-url") -> str:
    """``url`` as a Phoenix base URL (no trailing ``/``), or a `UsageError` saying why not.

    It must be ``http://`` or ``https://`` with a host, and carry no credentials: user info
    would be printed, journaled and written to reports (``PHOENIX_API_KEY`` is the way to
    authenticate); the error never repeats it, nor a query string. An ``@`` anywhere is taken
    for credentials: a password holding an unencoded ``/`` moves the ``@`` past the host
    (``http://admin:123/pw@host`` parses as host ``admin``, port 123).
    """
    import httpx

    from stateval.errors import UsageError

    if "@" in url:
        raise UsageError(
            f"{where} carries credentials (an '@' in it); "
            "remove them and set PHOENIX_API_KEY instead"
        )
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise UsageError(f"{where} is not a URL ({_reason(exc)})") from None
    if parsed.userinfo:
        shown = parsed.copy_with(username=None, password=None, query=None, fragment=None)
        raise UsageError(
            f"{where} {str(shown)!r} carries credentials (user:password@); "
            "remove them and set PHOENIX_API_KEY instead"
        )
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(
            f"{where} must be an http:// or https:// URL with a host, "
            f"like http://127.0.0.1:6006 (got {_shown(parsed)!r})"
        )
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise UsageError(f"{where} has port {parsed.port}, outside 1-65535")
    if parsed.query or parsed.fragment:
        raise UsageError(f"{where} must be a base URL without ?query or #fragment")
    return str(parsed).rstrip("/")


def _shown(parsed: httpx.URL) -> str:
    """Scheme, host and port only: a query string or path may hold a token."""
    text = f"{parsed.scheme}://{parsed.host}" if parsed.host else f"{parsed.scheme}:"
    text += f":{parsed.port}" if parsed.port is not None else ""
    return text if len(text) <= 80 else text[:77] + "..."


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text[:100] or type(exc).__name__
