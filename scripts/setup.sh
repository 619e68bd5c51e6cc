#!/usr/bin/env bash
# Installs what gameday's tests and local drills need on a Debian machine,
# from Debian's packages, each when it is not already there: redis-server;
# PostgreSQL and MariaDB (the books adapters' tests read and write them, and
# the pyshop example keeps its orders in PostgreSQL); Prometheus (the test
# of PromQL promises and halt conditions) — the tests start servers of their
# own on loopback, the packages' services are not needed; Debian's Python
# with psycopg2 and redis-py, which the pyshop example is written with;
# chromium and the DejaVu fonts, for the report test, which opens
# report.html in headless chromium and takes a screenshot of it; and
# qemu-user-static, with which the tests run the arm64 (Raspberry Pi) build
# under emulation on an amd64 machine.
# Safe to run again: it installs nothing that is already there.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || need+=(postgresql)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
/usr/bin/python3 -c 'import psycopg2' >/dev/null 2>&1 || need+=(python3-psycopg2)
/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || need+=(python3-redis)
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
echo "setup: $(redis-server --version | cut -d' ' -f1-3), $(ls -d /usr/lib/postgresql/*/bin | head -1), $(mariadbd --version 2>/dev/null | cut -d' ' -f2-4), $(prometheus --version 2>&1 | head -1 | cut -d' ' -f1-3), $(/usr/bin/python3 --version), $(chromium --version 2>/dev/null | cut -d' ' -f1-2), $(go version | cut -d' ' -f3)" >&2
