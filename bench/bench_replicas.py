"""Phoenix scale-out: the same upload against 1 and then 2 server replicas on one PostgreSQL.

Starts two Phoenix servers on the PostgreSQL database given by ``--database-url`` (one after
the other, so only the first runs the migrations) and a small round-robin TCP proxy in this
process: one URL in front of the replicas, as a load balancer would be in production (each new
connection goes to the next replica; HTTP keep-alive then pins it). Through that URL, with the
proxy holding first one replica and then both, it measures:

(1) ``stateval run``'s code path (``run_suite`` with a ``PhoenixTarget``, see bench_run.py) on a
    generated suite of N cases x F fields, in ``evaluations`` mode;
(2) a bare concurrent loop of experiment-evaluation POSTs (the server's ceiling).

and prints the evaluations per second of each with 1 and 2 replicas. Run it through
``bench/postgres.sh bench_replicas.py`` (which provides the database).

Usage:
    bench/postgres.sh bench_replicas.py [--cases 200] [--fields 20]
    python bench/bench_replicas.py --database-url postgresql://postgres@127.0.0.1:5432/phoenix
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import socket
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_run import Workload, _run_ids, bench_eval_ceiling, bench_stateval
from phoenix_server import phoenix_server


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def round_robin(backends: list[str]) -> AsyncIterator[str]:
    """A TCP proxy on a free port sending each new connection to the next backend URL."""
    targets = itertools.cycle([url.rsplit(":", 1) for url in backends])

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, port = next(targets)
        try:
            up_reader, up_writer = await asyncio.open_connection(host.split("//")[-1], int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    port = _free_port()
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()


async def measure(backends: list[str], w: Workload, args: argparse.Namespace, root: Path) -> None:
    async with round_robin(backends) as url:
        ours = await bench_stateval(url, w, args.concurrency, root)
        assert ours.experiment_id, ours.error
        if ours.stored != w.evaluations:
            print(f"!! stored {ours.stored} of {w.evaluations} evaluations ({ours.error})")
        await asyncio.sleep(args.settle)
        run_ids = await _run_ids(url, ours.experiment_id)
        bare = await bench_eval_ceiling(url, run_ids, args.bare, args.post_concurrency)
        await asyncio.sleep(args.settle)
    n = w.evaluations
    print(
        f"   {len(backends)} replica(s): stateval run {ours.seconds:6.2f} s "
        f"({n / ours.seconds:6.1f} evals/s)   bare evaluation POSTs {args.bare / bare:6.1f}/s"
    )


async def run(replicas: list[str], args: argparse.Namespace) -> None:
    w = Workload("per-field", args.cases, args.fields)
    print(
        f"{w.cases} cases x {w.per_case} evaluations = {w.evaluations}; bare loop "
        f"{args.bare} POSTs at {args.post_concurrency} in flight; replicas {replicas}"
    )
    with tempfile.TemporaryDirectory(prefix="stateval-bench-replicas-") as tmp:
        root = Path(tmp)
        warm_up = Workload("warm-up", 20, 3)
        async with round_robin(replicas) as url:  # both replicas serve a little first
            await bench_stateval(url, warm_up, args.concurrency, root)
            await bench_stateval(url, warm_up, args.concurrency, root)
        start = time.perf_counter()
        for _ in range(args.repeat):
            await measure(replicas[:1], w, args, root)
            await measure(replicas, w, args, root)
        print(f"   ({time.perf_counter() - start:.0f} s in all)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="postgresql://... (both replicas)")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--fields", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=32, help="mutator calls at once")
    parser.add_argument("--bare", type=int, default=1600, help="evaluation POSTs in the bare loop")
    parser.add_argument("--post-concurrency", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=1, help="alternate 1 and 2 this many times")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds between phases")
    args = parser.parse_args()
    with (
        phoenix_server(database_url=args.database_url) as first,
        phoenix_server(database_url=args.database_url) as second,
    ):
        asyncio.run(run([first, second], args))


if __name__ == "__main__":
    main()
