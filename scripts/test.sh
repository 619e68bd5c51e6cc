#!/usr/bin/env bash
# The project's test command, on a fresh Debian machine: installs what the
# tests need, checks formatting and vet, then runs every test under the race
# detector against real redis-server processes and an embedded Toxiproxy.
set -euo pipefail
cd "$(dirname "$0")/.."
# On a fresh machine compiling costs about a third of the run. Three whole
# builds are needed: one static build (CGO_ENABLED=0, -trimpath) that serves
# vet, the release binary the gameday image is made of, every binary a test
# starts (testenv.GoBuild) and the tests run without the race detector; the
# race build of every package and its tests; and the arm64 release, which a
# test runs under emulation (one on a Pi). Only what the solo lane needs is
# built here, with both cores, while Debian's packages download: the static
# packages and the race build of the solo lane's tests (with it, the race
# build of nearly every package). The rest (every other test binary, vet's
# analysis, the arm64 release, the images) is built at the idle scheduling
# class beside the solo lane, below. A build that fails here fails again
# below, where it is reported.
warm() {
	CGO_ENABLED=0 go build -trimpath ./... &&
		go test -race -count=1 -run '^$' -exec true ./gameday ./gameday/load ./gameday/report
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
# The report test saves its headless-browser screenshots here, so a CI run
# keeps them with its other results.
export GAMEDAY_ARTIFACTS="${GAMEDAY_ARTIFACTS:-$PWD/runs/ci-artifacts}"
mkdir -p "$GAMEDAY_ARTIFACTS"
# The Docker environments' tests need Docker and the images; where docker
# is installed they must run (a missing engine fails them instead of
# skipping them), and the images are built below, without a registry.
docker=false
if command -v docker >/dev/null 2>&1; then
	docker=true
	export GAMEDAY_REQUIRE_DOCKER=1
else
	echo "test: docker is not installed: the Docker environments' tests are skipped" >&2
fi

# The tests run under the race detector in lanes. Most drills spend their
# time waiting on the sale's clock: a drill uses about a third of one core
# (the catalogue drills: 34 s of CPU in 100 s), so three of them, on two
# cores, measure the checkout and not each other. First, the tests that
# need the machine to themselves run in the solo lane: the flash-sale
# figures held against the model, the pods drills (one pod's shoppers
# held to their own baseline while another pod has a sale: a third drill
# on the machine moves the p95 they compare), the sharded drill compared
# with one process, the load generator's pacing, the report test's
# browser, the arm64 build under emulation, and the generator's transport
# without the race detector. The solo lane uses a fifth of the machine;
# beside it, at the idle scheduling class (at_idle: they run only on CPU
# the solo lane leaves, and cannot take it from it), go the work that
# judges counts and not timings: lane images (the Docker images), lane d
# (gameday explore's searches of the examples' planted bugs, judged on the
# books only) and lane idle (the arm64 release, every other test binary,
# vet's analysis, then the packages in idle_pkgs, whose tests measure no
# time). Then lanes a, b and c run side by side, each one package (and
# one test) at a time, with what is left of the idle lanes beside them.
# Last, when every other lane has ended, the Docker tests (lane docker,
# one at a time: one of them removes what a killed runner left) run with
# nothing beside them. The containers share the engine's one CPU weight
# against each process outside them, and restarting a killed
# container (the daemon, containerd, runc, the reach checks) takes CPU at
# the very moment the drill measures its refusals: beside two other
# drills on a fresh machine a Compose drill starved its own checkout (CPU
# pressure 43 %: an unfaulted breaker opened, a latency promise missed by
# half); beside explore's searches alone, at the idle class, the refusals
# of a payment-killed drill missed their 300 ms p99 (397 ms) as the
# payment container came back; and two busy loops beside it, at either
# class, stalled the checkout's answers 100 to 160 ms at that moment,
# where with nothing beside it they stayed under 55 ms. A test of ./gameday
# not named below runs in lane a: name a new test that needs the machine
# to itself in solo_tests, a new Docker test in docker_tests; a new
# package runs in lane b unless it is named in idle_pkgs. Lanes a, b and c
# are balanced by what their tests take (docs/testing.md).
mod=$(go list -m)
solo_tests='TestFlashSaleFiguresWithinPrediction|TestShardedDrillMatchesOneProcess|TestPodDrillsPass|TestBrokenPodsFail|TestPodMoveUnderAFault|TestDescribedPodsAreDrilledPodByPod'
arm64_test='TestArm64ReleaseDrillsUnderEmulation'
solo_pkgs=(./gameday/load ./gameday/report)
docker_tests='TestContainers.*|TestCleanupRemovesKilledRunnersContainers|TestCompose.*|TestPaymentOutageFireDrill|TestSwarmWorkers'
lane_b_tests='TestFaultThatCannotBeLiftedStopsTheDrill|TestMoneyBugFailsEvenWhenAFaultCannotBeRemoved|TestStoreDay'
lane_c_pkgs=(./examples)
lane_c_tests='TestCacheDrillsNoticeTheFallbacksOff'

lane_d_tests='TestExplorePlantedBugs'
idle_pkgs=(./deploy/kubernetes ./docs ./gameday/books ./gameday/explore ./gameday/flash
	./gameday/judge ./gameday/predict ./gameday/redisserver ./internal/checkoutdefaults
	./internal/checkoutflags ./internal/durable ./internal/fileerr ./internal/health
	./internal/inputfile ./internal/mdblocks ./internal/noredirect ./internal/owner ./internal/ports
	./internal/redact ./internal/routetable ./internal/stats ./internal/strictyaml
	./gameday/runrecord ./matrix ./scenarios)
mapfile -t lane_b_pkgs < <(go list ./... | grep -v -x -F \
	-e "$mod/gameday" -e "$mod/examples" -e "$mod/gameday/load" -e "$mod/gameday/report" \
	$(printf -- "-e $mod/%s " "${idle_pkgs[@]#./}"))
# A name above that is no longer a test would quietly move nothing.
listed=$(go test -race -list '.*' ./gameday)
for name in ${solo_tests//|/ } $arm64_test ${docker_tests//|/ } ${lane_b_tests//|/ } ${lane_c_tests//|/ }; do
	grep -qxE "$name" <<<"$listed" || {
		echo "test: $name, named in scripts/test.sh, is not a test of ./gameday" >&2
		exit 1
	}
done
race() { go test -race -count=1 -p 1 -timeout 30m "$@"; }
# at_idle puts the lane's shell, and everything it starts from then on, in
# the idle scheduling class (SCHED_IDLE; where chrt cannot, nice 19).
at_idle() { chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null; }
lane_solo() {
	local rc=0
	race -run "^($solo_tests)\$" ./gameday || rc=1
	race "${solo_pkgs[@]}" || rc=1
	# Last, when lane idle has built the arm64 release (else it builds it).
	race -run "^($arm64_test)\$" ./gameday || rc=1
	# The generator's transport, the checkout's and the stand-in's
	# connections make raw system calls where the race detector is off
	# (internal/rawsock): their tests, once more without it.
	CGO_ENABLED=0 go test -trimpath -count=1 ./internal/rawsock/ ./gameday/load/ || rc=1
	return "$rc"
}
lane_images() {
	at_idle
	bash scripts/build-images.sh
}
lane_idle() {
	local rc=0 dist
	at_idle
	if [ "$(go env GOARCH)" != arm64 ]; then
		dist=$(mktemp -d)
		DIST="$dist" bash scripts/release.sh arm64 || rc=1
		rm -rf "$dist"
	fi
	CGO_ENABLED=0 go test -trimpath -count=1 -run '^$' -exec true ./internal/rawsock/ ./gameday/load/ >/dev/null || rc=1
	go test -race -count=1 -run '^$' -exec true ./... >/dev/null || rc=1
	CGO_ENABLED=0 go vet -trimpath ./... || rc=1
	race "${idle_pkgs[@]}" || rc=1
	return "$rc"
}
lane_a() { race -skip "^($solo_tests|$arm64_test|$docker_tests|$lane_b_tests|$lane_c_tests)\$" ./gameday; }
lane_docker() { race -run "^($docker_tests)\$" ./gameday; }
lane_b() {
	local rc=0
	race "${lane_b_pkgs[@]}" || rc=1
	race -run "^($lane_b_tests)\$" ./gameday || rc=1
	return "$rc"
}
lane_c() {
	local rc=0
	race -skip "^($lane_d_tests)\$" "${lane_c_pkgs[@]}" || rc=1
	race -run "^($lane_c_tests)\$" ./gameday || rc=1
	return "$rc"
}
lane_d() {
	at_idle
	grep -qxE "$lane_d_tests" < <(go test -race -list '.*' ./examples) || {
		echo "test: $lane_d_tests, named in scripts/test.sh, is not a test of ./examples"
		return 1
	}
	race -run "^($lane_d_tests)\$" ./examples
}

# lane runs one lane with its output in a file of its own (kept with the
# other artifacts: tail it to watch), then prints it whole, with how long
# the lane took and when it ended; its exit status is the lane's.
lane() {
	local name=$1 start=$SECONDS rc=0 log="$GAMEDAY_ARTIFACTS/lane-$1.log"
	echo "test: lane $name running, its output in $log" >&2
	"lane_$name" >"$log" 2>&1 || rc=$?
	{
		echo "--- lane $name"
		cat "$log"
		echo "test: lane $name took $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s (exit $rc), ended at $((SECONDS / 60)) min $((SECONDS % 60)) s"
	} >&2
	return "$rc"
}
failed=0
if $docker; then
	lane images &
	images=$!
fi
lane d &
d=$!
lane idle &
idle=$!
lane solo || failed=1
lane a &
a=$!
lane b &
b=$!
lane c &
c=$!
for job in "$a" "$b" "$c" "$d" "$idle"; do
	wait "$job" || failed=1
done
if $docker; then
	wait "$images" || failed=1
fi
lane docker || failed=1
exit "$failed"
