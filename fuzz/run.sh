#!/usr/bin/env bash
# fuzz/run.sh [DURATION] — run every native fuzz target listed in fuzz/targets.txt for DURATION each
# (a Go duration such as 30s or 2m, or Nx for N executions; default 30s), one after another, with
# one fuzzing worker (-parallel 1). Stops at the first failure, prints the path of the failing input
# (PACKAGE/testdata/fuzz/FuzzX/HASH, a regression test from then on) and exits 1.
#
# Environment: FUZZ_TARGETS=file (another target list), FUZZ_ONLY=regexp (run only the lines that
# match), FUZZ_MINIMIZE=10s (-fuzzminimizetime: bounds the minimisation of new and failing inputs,
# Go's default of 60 s can outlast DURATION), GO=go (the go command).
set -u -o pipefail

duration="${1:-30s}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
targets="${FUZZ_TARGETS:-$here/targets.txt}"
only="${FUZZ_ONLY:-}"
go="${GO:-go}"
minimize="${FUZZ_MINIMIZE:-10s}"

if [[ ! -r "$targets" ]]; then
	echo "run.sh: cannot read target list $targets" >&2
	exit 2
fi
if ! [[ "$duration" =~ ^[0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h|x)$ ]]; then
	echo "run.sh: DURATION must be a Go duration (30s, 2m) or an execution count (1000x), got \"$duration\"" >&2
	exit 2
fi

cd "$root" || exit 2
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# deadline_race reports whether the go test output in $1 is Go's deadline race: the only failure
# is "context deadline exceeded" and no failing input was written.
deadline_race() {
	grep -q '^    context deadline exceeded' "$1" && ! grep -q 'Failing input written' "$1" && ! grep -q -- '--- FAIL: .*/' "$1"
}

n=0
races=0
while read -r pkg name extra; do
	[[ -z "${pkg:-}" || "$pkg" == \#* ]] && continue
	if [[ -z "${name:-}" || -n "${extra:-}" || ! "$name" =~ ^Fuzz[A-Za-z0-9_]*$ ]]; then
		echo "run.sh: $targets: malformed line: $pkg ${name:-} ${extra:-}" >&2
		exit 2
	fi
	if [[ -n "$only" ]] && ! [[ "$pkg $name" =~ $only ]]; then
		continue
	fi
	n=$((n + 1))
	printf '== %-24s %-28s %s\n' "$pkg" "$name" "$duration"
	start=$SECONDS
	"$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" -fuzzminimizetime "$minimize" -parallel 1 "$pkg" >"$log" 2>&1
	rc=$?
	# Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a failure: a bare
	# "context deadline exceeded", no failing input (golang/go#75804, fixed in Go 1.27). Run
	# again, twice at most; if it still happens, warn and go on, since no input ever failed.
	tries=0
	while [[ $rc -ne 0 && $tries -lt 2 ]] && deadline_race "$log"; do
		tries=$((tries + 1))
		echo "   Go fuzz coordinator deadline race (golang/go#75804), no failing input; running again"
		"$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" -fuzzminimizetime "$minimize" -parallel 1 "$pkg" >"$log" 2>&1
		rc=$?
	done
	if [[ $rc -ne 0 ]] && deadline_race "$log"; then
		echo "   WARNING: $pkg $name ended in the Go deadline race three times; no input failed"
		races=$((races + 1))
		continue
	fi
	if [[ $rc -ne 0 ]]; then
		cat "$log"
		# The fuzzer writes "Failing input written to testdata/fuzz/FuzzX/HASH" relative to the
		# package directory.
		input="$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | tail -n 1)"
		if [[ -z "$input" ]]; then
			# A committed input (testdata/fuzz/FuzzX/HASH) that fails again.
			seed="$(sed -n 's/^failure while testing seed corpus entry: \(Fuzz[^ ]*\)$/\1/p' "$log" | tail -n 1)"
			if [[ -n "$seed" && -f "$pkg/testdata/fuzz/$seed" ]]; then
				input="testdata/fuzz/$seed"
			fi
		fi
		echo
		echo "FAIL: $pkg $name (exit $rc after $((SECONDS - start))s)"
		if [[ -n "$input" ]]; then
			echo "failing input: ${pkg#./}/$input"
			echo "reproduce:     go test -run '^${name}\$/$(basename "$input")\$' $pkg"
		else
			echo "no failing input was written: a build error, a failure outside the fuzz function, or a"
			echo "worker that stopped making progress (a hang: see fuzz/README.md)"
		fi
		exit 1
	fi
	# The last progress line: elapsed time, executions, corpus size.
	grep -E '^fuzz: elapsed' "$log" | tail -n 1 | sed 's/^/   /'
done <"$targets"

if [[ $n -eq 0 ]]; then
	echo "run.sh: no targets matched" >&2
	exit 2
fi
if [[ $races -gt 0 ]]; then
	echo "ok: $n targets, $duration each ($races ended in Go's fuzz deadline race, see above)"
else
	echo "ok: $n targets, $duration each"
fi
