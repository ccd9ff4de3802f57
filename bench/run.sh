#!/usr/bin/env bash
# bench/run.sh [quick|full|compression] [benchrun flags...] — edge against HAProxy, nginx and Caddy.
# quick (the default, `make bench`) takes under 10 minutes; full (`make bench-full`) adds more cells,
# rounds, fixed-rate runs, syscalls/request and the RSS table. Results: bench/results/latest.{md,svg}.
# compression measures only the response-compression section (CPU per KiB by coding and level, about
# two minutes, no peers needed) and replaces that section of latest.md; quick and full include it.
# EDGE_BIN=/path/to/edge uses that binary instead of building ./cmd/edge from this work tree.
set -euo pipefail
mode=${1:-quick}
[ $# -gt 0 ] && shift
case "$mode" in quick|full|compression) ;; *) echo "usage: bench/run.sh [quick|full|compression] [benchrun flags]" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
export PATH=/usr/local/go/bin:/usr/sbin:/sbin:$PATH

if [ "$mode" = compression ]; then
  mkdir -p "$here/.bin"
  (cd "$repo" && go build -o "$here/.bin/benchrun" ./bench/cmd/benchrun)
  exec "$here/.bin/benchrun" -compression-only -repo "$repo" -out "$here/results" "$@"
fi

# Peers and tools, installed from apt when missing (command:package).
want="haproxy:haproxy nginx:nginx caddy:caddy h2load:nghttp2-client wrk:wrk taskset:util-linux getconf:libc-bin"
[ "$mode" = full ] && want="$want perf:linux-perf valgrind:valgrind"
missing=()
for pair in $want; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench: installing missing packages from apt: ${missing[*]}" >&2
  if [ "$(id -u)" != 0 ]; then echo "bench: need root to install them (or install them yourself)" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  # Debian's nginx and caddy packages start a system service on install; the bench uses its own
  # instances on other ports, so stop those to keep the CPUs quiet.
  for svc in nginx caddy haproxy; do
    if command -v systemctl >/dev/null 2>&1; then systemctl stop "$svc" 2>/dev/null || true; fi
    if command -v service >/dev/null 2>&1; then service "$svc" stop >/dev/null 2>&1 || true; fi
  done
fi

bin="$here/.bin"
mkdir -p "$bin"
cd "$repo"
echo "bench: building edge and the bench clients" >&2
if [ -n "${EDGE_BIN:-}" ]; then
  edge="$EDGE_BIN"
  source="binary given as EDGE_BIN=$EDGE_BIN"
elif go build -o "$bin/edge.new" ./cmd/edge 2>"$bin/build.log"; then
  mv "$bin/edge.new" "$bin/edge"
  edge="$bin/edge"
  source="built from the work tree at $(git rev-parse --short=12 HEAD) plus uncommitted changes, $(date -u +%H:%M) UTC"
  echo "$source" >"$bin/edge.source"
else
  echo "bench: the work tree does not build (see $bin/build.log); building edge from the committed HEAD instead" >&2
  tmp=$(mktemp -d)
  git archive HEAD | tar -x -C "$tmp"
  if (cd "$tmp" && go build -o "$bin/edge.new" ./cmd/edge 2>>"$bin/build.log"); then
    mv "$bin/edge.new" "$bin/edge"
    source="built from the committed HEAD $(git rev-parse --short=12 HEAD) (the work tree did not build)"
    echo "$source" >"$bin/edge.source"
  elif [ -x "$bin/edge" ]; then
    echo "bench: HEAD does not build either (see $bin/build.log); using the previous build in $bin/edge" >&2
    source="previous build, neither the work tree nor HEAD built now: $(cat "$bin/edge.source" 2>/dev/null || echo unknown origin)"
  else
    echo "bench: neither the work tree nor HEAD builds (see $bin/build.log)" >&2
    rm -rf "$tmp"
    exit 1
  fi
  rm -rf "$tmp"
  edge="$bin/edge"
fi
go build -o "$bin/h3load" ./bench/cmd/h3load
go build -o "$bin/hsload" ./bench/cmd/hsload
go build -o "$bin/olload" ./bench/cmd/olload
go build -o "$bin/benchrun" ./bench/cmd/benchrun
cd "$here"
exec "$bin/benchrun" -mode "$mode" -repo "$repo" -out "$here/results" \
  -edge "$edge" -edge-source "$source" -h3load "$bin/h3load" -hsload "$bin/hsload" -olload "$bin/olload" "$@"
