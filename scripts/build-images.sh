#!/usr/bin/env bash
# Builds the images the Docker environments need, with no registry:
#
#   gameday   from this repository: the static binary on an empty base
#             (Dockerfile), always rebuilt;
#   Redis     from Debian's redis-server package, under the public image's
#             name, unless an image of that name is already here;
#   Toxiproxy from its Go module (the version go.mod names), under this
#             project's own name for it, unless an image of that name is
#             already here.
#
# The names come from .env. On a machine that can pull, `docker pull` the
# Redis image first and this script builds only gameday's and Toxiproxy's.
# --force rebuilds Redis and Toxiproxy even when images of their names exist.
set -euo pipefail
cd "$(dirname "$0")/.."

force=false
[ "${1:-}" = "--force" ] && force=true

# shellcheck disable=SC1091
set -a && . ./.env && set +a

have() { docker image inspect "$1" >/dev/null 2>&1; }
arch=$(go env GOARCH)

# gameday
bash scripts/release.sh "$arch"
docker build -q --build-arg ARCH="$arch" -t "$GAMEDAY_IMAGE" . >/dev/null
echo "images: $GAMEDAY_IMAGE built from this repository" >&2

# Toxiproxy, from the module version this repository builds against.
if $force || ! have "$GAMEDAY_TOXIPROXY_IMAGE"; then
	v=$(go list -m -f '{{.Version}}' github.com/Shopify/toxiproxy/v2)
	ctx=deploy/images/toxiproxy
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# go install pkg@version builds the release as its own module, with the
	# dependencies its go.sum pins, outside ours.
	GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w -X github.com/Shopify/toxiproxy/v2.Version=$v" \
		"github.com/Shopify/toxiproxy/v2/cmd/server@$v" "github.com/Shopify/toxiproxy/v2/cmd/cli@$v"
	cp "$tmp/server" "$ctx/toxiproxy-server"
	cp "$tmp/cli" "$ctx/toxiproxy-cli"
	docker build -q -t "$GAMEDAY_TOXIPROXY_IMAGE" "$ctx" >/dev/null
	echo "images: $GAMEDAY_TOXIPROXY_IMAGE built from github.com/Shopify/toxiproxy/v2@$v" >&2
else
	echo "images: $GAMEDAY_TOXIPROXY_IMAGE is here already" >&2
fi

# Redis, from Debian's package: its binaries and the libraries they link.
if $force || ! have "$GAMEDAY_REDIS_IMAGE"; then
	if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
		bash scripts/setup.sh
	fi
	root=deploy/images/redis/rootfs
	rm -rf "$root" deploy/images/redis/data
	mkdir -p "$root/usr/bin" "$root/etc" "$root/tmp" deploy/images/redis/data
	echo "Redis's working directory: its append-only file goes here." >deploy/images/redis/data/README
	# redis-server is a link to redis-check-rdb: the binary picks its role
	# from its name, so copy it under the server's name.
	cp -L "$(command -v redis-server)" "$root/usr/bin/redis-server"
	cp -L "$(command -v redis-cli)" "$root/usr/bin/redis-cli"
	for bin in "$root/usr/bin/redis-server" "$root/usr/bin/redis-cli"; do
		ldd "$bin" | awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}' | while read -r lib; do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
	printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nredis:x:999:999:redis:/data:/usr/sbin/nologin\n' >"$root/etc/passwd"
	printf 'root:x:0:\nredis:x:999:\n' >"$root/etc/group"
	chmod 1777 "$root/tmp"
	docker build -q -t "$GAMEDAY_REDIS_IMAGE" deploy/images/redis >/dev/null
	echo "images: $GAMEDAY_REDIS_IMAGE built from Debian's $(redis-server --version | cut -d' ' -f1-3)" >&2
else
	echo "images: $GAMEDAY_REDIS_IMAGE is here already" >&2
fi
