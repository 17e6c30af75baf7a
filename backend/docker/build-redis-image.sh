#!/usr/bin/env bash
# Builds a Redis image from this machine's redis-server with `docker import`,
# for machines where no registry can be reached: the binary, the shared
# libraries ldd lists and the loader, nothing else.
#
#   backend/docker/build-redis-image.sh [IMAGE]     (default lockchaos/redis:7-local)
set -euo pipefail

IMAGE="${1:-lockchaos/redis:7-local}"
if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
  echo "build-redis-image: no Docker engine answers (is the daemon running?)" >&2
  exit 1
fi
BIN="${LOCKCHAOS_REDIS_SERVER:-$(command -v redis-server || true)}"
if [ -z "$BIN" ]; then
  echo "build-redis-image: redis-server not found; install it (apt-get install redis-server) to build the image from it" >&2
  exit 1
fi
REAL="$(readlink -f "$BIN")"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
ROOT="$TMP/rootfs"
mkdir -p "$ROOT/usr/local/bin" "$ROOT/tmp" "$ROOT/data"
chmod 1777 "$ROOT/tmp"
cp -L "$REAL" "$ROOT/usr/local/bin/redis-server"
# Every library the binary links, and the dynamic loader, at the same paths.
for lib in $(ldd "$REAL" | awk '/=>/ && $3 ~ /^\// {print $3} /^[[:space:]]*\/.*ld-linux/ {print $1}'); do
  mkdir -p "$ROOT$(dirname "$lib")"
  cp -L "$lib" "$ROOT$lib"
done
VERSION="$("$BIN" --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p')"
tar -C "$ROOT" -c . | docker import \
  --change 'ENTRYPOINT ["/usr/local/bin/redis-server"]' \
  --change 'CMD ["--protected-mode", "no"]' \
  --change 'WORKDIR /data' \
  --change "LABEL org.lockchaos.redis-version=$VERSION" \
  - "$IMAGE" >/dev/null
echo "built $IMAGE from $REAL (redis $VERSION)"
