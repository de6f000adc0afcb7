#!/usr/bin/env bash
# Run the benches against a Phoenix server backed by PostgreSQL.
#
# Starts a throw-away PostgreSQL cluster (Debian's `postgresql` package; its own temp directory,
# a free localhost port, trust authentication), makes sure the Phoenix server's environment can
# talk to it (asyncpg, i.e. arize-phoenix[pg]), runs each bench with --database-url (each bench
# starts and stops its own Phoenix on that database), then stops the cluster by its pg_ctl and
# removes it.
#
# Usage:
#   bench/postgres.sh                          # bench_upload.py and bench_run.py, full sizes
#   bench/postgres.sh bench_run.py --quick     # one bench, with its own arguments
#   bench/postgres.sh replicas                 # 2 Phoenix replicas on the one database:
#                                              # throughput with 1 and with 2 (bench_replicas.py)
#
# Environment:
#   STATEVAL_PHOENIX_BIN  the phoenix executable (default /work/venvs/phx/bin/phoenix)
#   PYTHON                the interpreter with stateval installed (default: python3 on PATH)
#   PG_INSTALL=1          apt-get install postgresql when it is missing (needs root)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
export STATEVAL_PHOENIX_BIN="${STATEVAL_PHOENIX_BIN:-/work/venvs/phx/bin/phoenix}"
python="${PYTHON:-$(command -v python3)}"
phoenix_python="$(dirname "$STATEVAL_PHOENIX_BIN")/python"

pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
if [[ -z "$pg_bin" || ! -x "$pg_bin/initdb" ]]; then
  if [[ "${PG_INSTALL:-0}" == 1 && "$(id -u)" == 0 ]]; then
    apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
    pg_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  else
    echo "PostgreSQL not found: apt-get install postgresql (or run with PG_INSTALL=1 as root)" >&2
    exit 2
  fi
fi

if ! "$phoenix_python" -c "import asyncpg" 2>/dev/null; then
  version="$("$phoenix_python" -c "import importlib.metadata as m; print(m.version('arize-phoenix'))")"
  echo "installing arize-phoenix[pg]==$version (asyncpg) into $(dirname "$(dirname "$phoenix_python")")" >&2
  if "$phoenix_python" -m pip --version >/dev/null 2>&1; then
    "$phoenix_python" -m pip install -q --disable-pip-version-check "arize-phoenix[pg]==$version"
  else  # an environment made by uv has no pip
    uv pip install -q -p "$phoenix_python" "arize-phoenix[pg]==$version"
  fi
fi

# initdb and postgres refuse to run as root: run them as the `postgres` user then.
as_pg=()
if [[ "$(id -u)" == 0 ]]; then as_pg=(runuser -u postgres --); fi

work="$(mktemp -d /tmp/stateval-bench-pg.XXXXXX)"
chmod 755 "$work"
data="$work/data"
mkdir "$data"
[[ "$(id -u)" == 0 ]] && chown postgres:postgres "$data"
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

cleanup() {
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"${as_pg[@]}" "$pg_bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >"$work/initdb.log"
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$data" -l "$data/server.log" -w \
  -o "-p $port -c listen_addresses=127.0.0.1 -k $data" start >/dev/null
"${as_pg[@]}" "$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qc "CREATE DATABASE phoenix"
pg_pid="$(head -n 1 "$data/postmaster.pid")"
echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') at 127.0.0.1:$port (pid $pg_pid, data $data)" >&2

database_url="postgresql://postgres@127.0.0.1:$port/phoenix"
benches=("$@")
if [[ ${#benches[@]} -eq 0 ]]; then
  "$python" "$here/bench_upload.py" --database-url "$database_url"
  "$python" "$here/bench_run.py" --database-url "$database_url"
elif [[ "${benches[0]}" == replicas ]]; then
  "$python" "$here/bench_replicas.py" --database-url "$database_url" "${benches[@]:1}"
else
  script="${benches[0]}"
  [[ -f "$script" ]] || script="$here/$script"
  "$python" "$script" --database-url "$database_url" "${benches[@]:1}"
fi
