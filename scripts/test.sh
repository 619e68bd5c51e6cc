#!/usr/bin/env bash
# The project's test command, on a fresh Debian machine: installs what the
# tests need, checks formatting and vet, then runs every test under the race
# detector against real redis-server processes and an embedded Toxiproxy.
set -euo pipefail
cd "$(dirname "$0")/.."
# On a fresh machine compiling costs about a third of the run: vet's build,
# the race build of every package, and the static release builds (the
# image's, for this machine, and the arm64 drill's; one on a Pi) are each a
# whole build of their own, and `go test -p 1` below would compile one
# package at a time. They go into Go's build cache here, with both cores,
# while Debian's packages download; the steps below find them built. A build
# that fails here fails again below, where it is reported.
warm() {
	local archs=("$(go env GOARCH)") dist
	[ "${archs[0]}" = arm64 ] || archs+=(arm64)
	dist=$(mktemp -d)
	go vet ./... && go build ./... &&
		go test -race -count=1 -run '^$' -exec true ./... &&
		DIST="$dist" bash scripts/release.sh "${archs[@]}"
	rm -rf "$dist"
}
warm >/dev/null 2>&1 &
warming=$!
# Says how long the whole command took, setup and images included, pass or
# fail (it must stay under 30 minutes on a fresh 2-core machine), and stops
# the builds above if setup fails.
finish() {
	if [ -n "$warming" ]; then
		pkill -P "$warming" 2>/dev/null || true
		kill "$warming" 2>/dev/null || true
	fi
	echo "test: took $((SECONDS / 60)) min $((SECONDS % 60)) s" >&2
}
trap finish EXIT

bash scripts/setup.sh
wait "$warming" || true
warming=""
echo "test: built in $((SECONDS / 60)) min $((SECONDS % 60)) s" >&2

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "gofmt: these files need formatting:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
# The Docker environments' tests need Docker and the images; where docker
# is installed they must run (a missing engine fails them instead of
# skipping them), and the images are built here, without a registry.
if command -v docker >/dev/null 2>&1; then
	export GAMEDAY_REQUIRE_DOCKER=1
	bash scripts/build-images.sh
else
	echo "test: docker is not installed: the Docker environments' tests are skipped" >&2
fi
# The report test saves its headless-browser screenshots here, so a CI run
# keeps them with its other results.
export GAMEDAY_ARTIFACTS="${GAMEDAY_ARTIFACTS:-$PWD/runs/ci-artifacts}"
mkdir -p "$GAMEDAY_ARTIFACTS"
# One package at a time (-p 1): the drills measure latency and breaker
# timing, and a 2-core machine running several drills and a browser at once
# would measure itself, not the checkout.
go test -race -count=1 -p 1 -timeout 30m ./...
# The generator's transport, the checkout's and the stand-in's connections
# make raw system calls where the race detector is off (internal/rawsock):
# their tests, once more without it.
go test -count=1 ./internal/rawsock/ ./gameday/load/
