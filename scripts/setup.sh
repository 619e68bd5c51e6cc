#!/usr/bin/env bash
# Installs what gameday's tests and local drills need on a Debian machine:
# redis-server, from Debian's packages, when it is not already on PATH.
# Safe to run again: it installs nothing that is already there.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)

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
echo "setup: $(redis-server --version | cut -d' ' -f1-3), $(go version | cut -d' ' -f3)" >&2
