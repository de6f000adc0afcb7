"""First-run provisioning of the local Phoenix server: uv against pip, each from a clean cache.

Runs stateval's own provisioning (`stateval.server.provision_server_env`) in a subprocess twice,
into fresh temporary environments: with uv (``UV_CACHE_DIR`` an empty folder) and with pip
(``STATEVAL_UV=off``, ``PIP_CACHE_DIR`` an empty folder), and prints both wall times, the load
average around each, and the ratio uv / pip measured in the same process. Downloads
``arize-phoenix`` and its dependencies twice (about 600 MB installed each).

Usage:
    python bench/bench_provision.py [--only uv|pip]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_SCRIPT = (
    "import sys; from pathlib import Path; from stateval.server import provision_server_env; "
    "provision_server_env(Path(sys.argv[1]))"
)


def provision(installer: str, folder: Path) -> float:
    """Seconds to provision into ``folder / env`` with ``installer``, from an empty cache."""
    cache = folder / "cache"
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("STATEVAL_UV", "STATEVAL_PHOENIX_BIN")}
    if installer == "uv":
        env["UV_CACHE_DIR"] = str(cache)
    else:
        env |= {"STATEVAL_UV": "off", "PIP_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", _SCRIPT, str(folder / "env")], env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("uv", "pip"), default=None)
    args = parser.parse_args()
    times: dict[str, float] = {}
    for installer in ("uv", "pip"):
        if args.only not in (None, installer):
            continue
        folder = Path(tempfile.mkdtemp(prefix=f"stateval-bench-provision-{installer}-"))
        try:
            before = os.getloadavg()[0]
            times[installer] = provision(installer, folder)
            after = os.getloadavg()[0]
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        print(
            f"{installer:>3}: {times[installer]:7.1f} s  (load {before:.1f} -> {after:.1f}, "
            f"{os.cpu_count()} cores)",
            flush=True,
        )
    if len(times) == 2:
        print(f"uv / pip: {times['uv'] / times['pip']:.2f}")


if __name__ == "__main__":
    main()
