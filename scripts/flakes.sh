#!/usr/bin/env bash
# The flake hunt: the test command's tests, many times over, to find the
# ones that fail only sometimes. Every package but the timing drills runs
# ten times under the race detector (-count=10), the drills (package
# ./gameday and ./examples, whose tests drive load and measure latency and
# breaker timing, and take most of the test command's time) three times;
# the packages whose raw system calls the race detector turns off
# (internal/rawsock, gameday/load) ten times more without it, as
# scripts/test.sh runs them once. One package at a time (-p 1), as in the
# test command: the drills would measure each other.
#
#   bash scripts/flakes.sh                # all of it: hours; leave the machine idle
#   bash scripts/flakes.sh ./gameday/fleet ./internal/ports   # these packages only
#
# FLAKES_COUNT and FLAKES_DRILL_COUNT change the counts (10 and 3);
# FLAKES_RUN, a go test -run pattern, hunts in those tests only. Every
# go test has a -timeout (FLAKES_TIMEOUT, FLAKES_DRILL_TIMEOUT: 90m and
# 120m per package). The output is kept in runs/flakes-DATE/ (go-test.log);
# the summary at the end, also in summary.txt, names every test that
# failed and how many of its runs, and the command exits 1 if any did.
set -euo pipefail
cd "$(dirname "$0")/.."

count=${FLAKES_COUNT:-10}
drill_count=${FLAKES_DRILL_COUNT:-3}
timeout=${FLAKES_TIMEOUT:-90m}
drill_timeout=${FLAKES_DRILL_TIMEOUT:-120m}
module=$(go list -m)
# The timing drills, by import path.
drills=("$module/gameday" "$module/examples")
# Run once more without the race detector, as scripts/test.sh does.
norace=("$module/internal/rawsock" "$module/gameday/load")

out="runs/flakes-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
log="$out/go-test.log"
: >"$log"
echo "flakes: output in $out" >&2
started=$SECONDS
trap 'echo "flakes: took $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s" >&2' EXIT

# As scripts/test.sh: what the tests need, and the Docker images where
# docker is installed (the Docker tests then must run).
bash scripts/setup.sh
if command -v docker >/dev/null 2>&1; then
	export GAMEDAY_REQUIRE_DOCKER=1
	bash scripts/build-images.sh
else
	echo "flakes: docker is not installed: the Docker environments' tests are skipped" >&2
fi
export GAMEDAY_ARTIFACTS="${GAMEDAY_ARTIFACTS:-$PWD/$out/artifacts}"
mkdir -p "$GAMEDAY_ARTIFACTS"

member() { # member WORD LIST...: whether WORD is one of LIST
	local w=$1
	shift
	for x in "$@"; do [ "$x" = "$w" ] && return 0; done
	return 1
}

mapfile -t pkgs < <(go list "${@:-./...}")
plain=() drilled=() bare=()
for p in "${pkgs[@]}"; do
	if member "$p" "${drills[@]}"; then
		drilled+=("$p")
	else
		plain+=("$p")
	fi
	if member "$p" "${norace[@]}"; then
		bare+=("$p")
	fi
done

# counts records, for the summary, how many times each package's tests
# ran: "PACKAGE RUNS" lines.
counts="$out/counts"
: >"$counts"
status=0
run() { # run RUNS TIMEOUT [-race] PACKAGES...
	local runs=$1 limit=$2
	shift 2
	local flags=(-count="$runs" -p 1 -timeout "$limit")
	if [ "${1:-}" = -race ]; then
		flags=(-race "${flags[@]}")
		shift
	fi
	if [ -n "${FLAKES_RUN:-}" ]; then
		flags+=(-run "$FLAKES_RUN")
	fi
	[ $# -gt 0 ] || return 0
	for p in "$@"; do echo "$p $runs" >>"$counts"; done
	echo "flakes: go test ${flags[*]}: $# package(s)" >&2
	if ! go test "${flags[@]}" "$@" 2>&1 | tee -a "$log"; then
		status=1
	fi
}
run "$count" "$timeout" -race "${plain[@]+"${plain[@]}"}"
run "$count" "$timeout" "${bare[@]+"${bare[@]}"}"
run "$drill_count" "$drill_timeout" -race "${drilled[@]+"${drilled[@]}"}"

# The summary: every failed test (subtests apart), how many of its runs,
# and each package that failed without a failed test to name (a build
# failure, a timeout, a crash). go test prints a package's failures
# before the line with its result and name.
awk -v counts="$counts" '
BEGIN {
	while ((getline line < counts) > 0) {
		split(line, f, " ")
		runs[f[1]] += f[2]
	}
}
/^[[:space:]]*--- FAIL: / {
	name = $0
	sub(/^[[:space:]]*--- FAIL: /, "", name)
	sub(/ \([0-9.]+s\)$/, "", name)
	pending[++n] = name
	next
}
/^panic: test timed out/ { timedout = 1; next }
timedout && /^\t\t[^ \t]+ \(/ {
	pending[++n] = $1 " (timed out)"
	next
}
/^ok[ \t]/ || /^FAIL\t/ {
	pkg = $2
	if ($1 == "FAIL" && n == 0) {
		why = "see the log"
		if ($3 ~ /^\[/) {
			why = $0
			sub(/^[^[]*/, "", why)
		}
		pending[++n] = "(the package failed: " why ")"
	}
	for (i = 1; i <= n; i++) {
		failed[pkg "\t" pending[i]]++
		pkgOf[pkg "\t" pending[i]] = pkg
	}
	n = 0
	timedout = 0
}
END {
	total = 0
	for (k in failed) total++
	if (total == 0) {
		print "flakes: no test failed"
		exit
	}
	print "flakes: " total " test(s) failed (runs that failed, of the runs, package, test):"
	for (k in failed) {
		r = runs[pkgOf[k]]
		printf "  %d of %s\t%s\n", failed[k], (r ? r : "?"), k | "sort -t\"\t\" -k2"
	}
	close("sort -t\"\t\" -k2")
}' "$log" | tee "$out/summary.txt"
if [ "$status" -ne 0 ] && grep -q '^flakes: no test failed' "$out/summary.txt"; then
	echo "flakes: go test failed, though no failed test was found in $log: read it" | tee -a "$out/summary.txt"
fi
exit "$status"
