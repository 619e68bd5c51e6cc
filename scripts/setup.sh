#!/usr/bin/env bash
# Installs what gameday's tests and local drills need on a Debian machine,
# from Debian's packages, each when it is not already there: redis-server;
# chromium and the DejaVu fonts, for the report test, which opens
# report.html in headless chromium and takes a screenshot of it; and
# qemu-user-static, with which the tests run the arm64 (Raspberry Pi) build
# under emulation on an amd64 machine.
# Safe to run again: it installs nothing that is already there.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ "$(uname -m)" != aarch64 ]; then
	command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
fi

if ((${#need[@]})); then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	echo "setup: installing ${need[*]} from Debian's packages" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

command -v go >/dev/null 2>&1 || { echo "setup: Go 1.26 or newer is needed on PATH" >&2; exit 2; }
echo "setup: $(redis-server --version | cut -d' ' -f1-3), $(chromium --version 2>/dev/null | cut -d' ' -f1-2), $(go version | cut -d' ' -f3)" >&2
