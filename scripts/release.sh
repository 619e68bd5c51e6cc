#!/usr/bin/env bash
# Release build: static gameday binaries for linux/amd64 and linux/arm64
# (Raspberry Pi 4 with a 64-bit OS) into dist/.
#
#   scripts/release.sh                # both
#   scripts/release.sh arm64          # one
#   DIST=/tmp/out scripts/release.sh  # somewhere else than dist/
#
# CGO is off, so the binaries are static and run on any Linux of that
# architecture, a Pi's Raspberry Pi OS (64-bit) included.
set -euo pipefail
cd "$(dirname "$0")/.."

archs=("$@")
((${#archs[@]})) || archs=(amd64 arm64)
version=$(git describe --tags --always --dirty 2>/dev/null || echo devel)
dist=${DIST:-dist}
mkdir -p "$dist"
for arch in "${archs[@]}"; do
	case "$arch" in
	amd64 | arm64) ;;
	*) echo "release: unknown architecture $arch (want amd64 or arm64)" >&2; exit 2 ;;
	esac
	out="$dist/gameday-linux-$arch"
	CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath \
		-ldflags "-s -w -X main.releaseVersion=$version" -o "$out.tmp" ./cmd/gameday
	mv "$out.tmp" "$out"
	echo "release: $out ($version)" >&2
done
