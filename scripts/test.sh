#!/usr/bin/env bash
# The project's test command, on a fresh Debian machine: installs what the
# tests need, checks formatting and vet, then runs every test under the race
# detector against real redis-server processes and an embedded Toxiproxy.
set -euo pipefail
cd "$(dirname "$0")/.."
# On a fresh machine compiling costs about a third of the run. Three whole
# builds are needed: the race build of every package and its tests; one
# static build (CGO_ENABLED=0, -trimpath) that serves vet, the release
# binary the gameday image is made of, every binary a test starts
# (testenv.GoBuild) and the tests run without the race detector; and the
# arm64 release, which a test runs under emulation (one on a Pi). They go
# into Go's build cache here, with both cores, while Debian's packages
# download; the steps below find them built. A build that fails here fails
# again below, where it is reported.
warm() {
	local archs=("$(go env GOARCH)") dist
	[ "${archs[0]}" = arm64 ] || archs+=(arm64)
	dist=$(mktemp -d)
	CGO_ENABLED=0 go vet -trimpath ./... &&
		go test -race -count=1 -run '^$' -exec true ./... &&
		DIST="$dist" bash scripts/release.sh "${archs[@]}"
	rm -rf "$dist"
}
warm >/dev/null 2>&1 &
warming=$!
# Says how long the whole command took, setup and images included, pass or
# fail (it must stay at or under 25 minutes on a fresh 2-core machine), and
# stops the builds above and the lanes below if it ends early.
finish() {
	local job
	for job in $(jobs -p); do
		pkill -P "$job" 2>/dev/null || true
		kill "$job" 2>/dev/null || true
	done
	echo "test: took $((SECONDS / 60)) min $((SECONDS % 60)) s" >&2
}
trap finish EXIT

bash scripts/setup.sh
# Debian's packages and the builds share the machine; each is timed, so a
# slow fresh run says which of them was slow.
echo "test: packages ready in $((SECONDS / 60)) min $((SECONDS % 60)) s" >&2
wait "$warming" || true
echo "test: built in $((SECONDS / 60)) min $((SECONDS % 60)) s" >&2

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "gofmt: these files need formatting:" >&2
	echo "$unformatted" >&2
	exit 1
fi
CGO_ENABLED=0 go vet -trimpath ./...
# The Docker environments' tests need Docker and the images; where docker
# is installed they must run (a missing engine fails them instead of
# skipping them), and the images are built here, without a registry.
if command -v docker >/dev/null 2>&1; then
	export GAMEDAY_REQUIRE_DOCKER=1
	bash scripts/build-images.sh
	echo "test: images ready in $((SECONDS / 60)) min $((SECONDS % 60)) s" >&2
else
	echo "test: docker is not installed: the Docker environments' tests are skipped" >&2
fi
# The report test saves its headless-browser screenshots here, so a CI run
# keeps them with its other results.
export GAMEDAY_ARTIFACTS="${GAMEDAY_ARTIFACTS:-$PWD/runs/ci-artifacts}"
mkdir -p "$GAMEDAY_ARTIFACTS"

# The tests run under the race detector in six lanes. Most drills spend
# their time waiting on the sale's clock: a drill uses about a third of one
# core (the catalogue drills: 34 s of CPU in 100 s), so three of them, on
# two cores, measure the checkout and not each other. A drill whose every
# part is a container (checkout, stand-in, two Redis, Toxiproxy, the
# engine's proxies) uses more: beside two other drills on a fresh machine
# it starved its own checkout (CPU pressure 43 %: an unfaulted breaker
# opened, a latency promise missed by half). So the Docker tests (lane
# docker, one at a time: one of them removes what a killed runner left)
# have only lane d beside them: gameday explore's searches of the
# examples' planted bugs, which judge only the books (counts, not timings:
# a busy machine cannot move them). When the Docker tests end, lanes a, b
# and c run side by side, each one package (and one test) at a time,
# while lane d goes on. First of all, the
# tests that need the machine to themselves run alone: the flash-sale
# figures held against the model, the pods drills (one pod's shoppers
# held to their own baseline while another pod has a sale: a third drill
# on the machine moves the p95 they compare), the arm64 build under
# emulation, the sharded drill compared with one process, the load
# generator's pacing, the model's simulations and the report test's
# browser. A test of ./gameday not named below runs in lane a; name a new
# test that needs the machine to itself in solo_tests, a new Docker test
# in docker_tests. Lanes a, b and c are balanced by what their tests take
# (docs/testing.md): lane b, the packages of unit tests, also runs
# ./checkout and two of ./gameday's drills (lane_b_tests).
mod=$(go list -m)
solo_tests='TestFlashSaleFiguresWithinPrediction|TestArm64ReleaseDrillsUnderEmulation|TestShardedDrillMatchesOneProcess|TestPodDrillsPass|TestBrokenPodsFail|TestPodMoveUnderAFault|TestDescribedPodsAreDrilledPodByPod'
solo_pkgs=(./gameday/load ./gameday/predict ./gameday/report)
docker_tests='TestContainers.*|TestCleanupRemovesKilledRunnersContainers|TestCompose.*|TestPaymentOutageFireDrill|TestSwarmWorkers'
lane_b_tests='TestFaultThatCannotBeLiftedStopsTheDrill|TestMoneyBugFailsEvenWhenAFaultCannotBeRemoved'
lane_c_pkgs=(./examples ./cmd/gameday)
lane_d_tests='TestExplorePlantedBugs'
mapfile -t lane_b_pkgs < <(go list ./... | grep -v -x -F \
	-e "$mod/gameday" -e "$mod/cmd/gameday" -e "$mod/examples" \
	-e "$mod/gameday/load" -e "$mod/gameday/predict" -e "$mod/gameday/report")
# A name above that is no longer a test would quietly move nothing.
listed=$(go test -race -list '.*' ./gameday)
for name in ${solo_tests//|/ } ${docker_tests//|/ } ${lane_b_tests//|/ }; do
	grep -qxE "$name" <<<"$listed" || {
		echo "test: $name, named in scripts/test.sh, is not a test of ./gameday" >&2
		exit 1
	}
done
grep -qxE "$lane_d_tests" < <(go test -race -list '.*' ./examples) || {
	echo "test: $lane_d_tests, named in scripts/test.sh, is not a test of ./examples" >&2
	exit 1
}
race() { go test -race -count=1 -p 1 -timeout 30m "$@"; }
lane_solo() { race -run "^($solo_tests)\$" ./gameday && race "${solo_pkgs[@]}"; }
lane_a() { race -skip "^($solo_tests|$docker_tests|$lane_b_tests)\$" ./gameday; }
lane_docker() { race -run "^($docker_tests)\$" ./gameday; }
lane_b() {
	local rc=0
	race "${lane_b_pkgs[@]}" || rc=1
	race -run "^($lane_b_tests)\$" ./gameday || rc=1
	return "$rc"
}
lane_c() { race -skip "^($lane_d_tests)\$" "${lane_c_pkgs[@]}"; }
lane_d() { race -run "^($lane_d_tests)\$" ./examples; }

# lane runs one lane with its output in a file of its own (kept with the
# other artifacts: tail it to watch), then prints it whole, with how long
# the lane took; its exit status is the lane's.
lane() {
	local name=$1 start=$SECONDS rc=0 log="$GAMEDAY_ARTIFACTS/lane-$1.log"
	echo "test: lane $name running, its output in $log" >&2
	"lane_$name" >"$log" 2>&1 || rc=$?
	{
		echo "--- lane $name"
		cat "$log"
		echo "test: lane $name took $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s (exit $rc)"
	} >&2
	return "$rc"
}
failed=0
lane solo || failed=1
lane d &
d=$!
lane docker || failed=1
lane a &
a=$!
lane b &
b=$!
lane c &
c=$!
wait "$a" || failed=1
wait "$b" || failed=1
wait "$c" || failed=1
wait "$d" || failed=1
# The generator's transport, the checkout's and the stand-in's connections
# make raw system calls where the race detector is off (internal/rawsock):
# their tests, once more without it.
CGO_ENABLED=0 go test -trimpath -count=1 ./internal/rawsock/ ./gameday/load/ || failed=1
exit "$failed"
