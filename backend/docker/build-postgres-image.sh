#!/usr/bin/env bash
# Builds a PostgreSQL 15 image from this machine's PostgreSQL with
# `docker import`, for machines where no registry can be reached: the
# server binaries and modules (pgrowlocks among them), the shared files,
# the time zones, the shared libraries ldd lists and the loader, /bin/sh
# for the build step, and a passwd with a non-root postgres user (the
# server refuses to run as root).
#
# The cluster is made once, here, inside a container of the bare image
# (initdb, as service/postgres's template: role lockchaos, database
# lockchaos, trust authentication, 1 MB WAL segments) and committed into
# the image, so a node's start is a server start, not an initdb.
#
# The entrypoint is postgres itself with the settings of service/postgres's
# process nodes (node.go serverArgs), listening on all addresses on 5432;
# arguments after the image (-c name=value ...) come after them and win.
#
#   backend/docker/build-postgres-image.sh [IMAGE]   (default lockchaos/postgres:15-local)
set -euo pipefail

IMAGE="${1:-lockchaos/postgres:15-local}"
PGVER=15
if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
  echo "build-postgres-image: no Docker engine answers (is the daemon running?)" >&2
  exit 1
fi
BIN="/usr/lib/postgresql/$PGVER/bin"
LIB="/usr/lib/postgresql/$PGVER/lib"
SHARE="/usr/share/postgresql/$PGVER"
for f in "$BIN/postgres" "$BIN/initdb" "$LIB/pgrowlocks.so" "$SHARE/extension/pgrowlocks.control"; do
  if [ ! -e "$f" ]; then
    echo "build-postgres-image: $f not found; install PostgreSQL $PGVER (apt-get install postgresql-$PGVER)" >&2
    exit 1
  fi
done
TMP="$(mktemp -d)"
BASE="lockchaos/postgres-base:build-$$"
CTR=""
cleanup() {
  [ -n "$CTR" ] && docker rm -f "$CTR" >/dev/null 2>&1
  docker rmi "$BASE" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
ROOT="$TMP/rootfs"
mkdir -p "$ROOT/usr/lib/postgresql/$PGVER" "$ROOT/usr/share/postgresql" "$ROOT/usr/share" "$ROOT/etc" \
  "$ROOT/bin" "$ROOT/tmp" "$ROOT/var/lib/postgresql"
chmod 1777 "$ROOT/tmp"
cp -a "$BIN" "$ROOT/usr/lib/postgresql/$PGVER/bin"
# The modules, without JIT (llvmjit pulls in LLVM, ~100 MB; without it
# the server simply does not compile queries).
mkdir -p "$ROOT$LIB"
find "$LIB" -maxdepth 1 -type f ! -name 'llvmjit*' -exec cp -a {} "$ROOT$LIB/" \;
cp -a "$SHARE" "$ROOT/usr/share/postgresql/$PGVER"
# Debian's PostgreSQL reads the system's time zones (log_timezone=UTC).
cp -a /usr/share/zoneinfo "$ROOT/usr/share/zoneinfo"
cp -L /bin/sh "$ROOT/bin/sh"
# Every library the binaries and modules link, and the loader, at the same paths.
libs() {
  for f in "$BIN"/* "$ROOT$LIB"/*.so /bin/sh; do
    ldd "$f" 2>/dev/null || true
  done | awk '/=>/ && $3 ~ /^\// {print $3} /^[[:space:]]*\/.*ld-linux/ {print $1}' | sort -u
}
for lib in $(libs); do
  mkdir -p "$ROOT$(dirname "$lib")"
  cp -L "$lib" "$ROOT$lib"
done
printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:PostgreSQL:/var/lib/postgresql:/bin/sh\n' >"$ROOT/etc/passwd"
printf 'root:x:0:\npostgres:x:999:\n' >"$ROOT/etc/group"
chown 999:999 "$ROOT/var/lib/postgresql"
tar -C "$ROOT" -c . | docker import - "$BASE" >/dev/null

# The cluster, as service/postgres's template makes it, then every
# address trusted (the harness reaches the server through Docker's port
# mapping, from the bridge's gateway, not from 127.0.0.1).
DATA=/var/lib/postgresql/data
CTR="$(docker create --user postgres -e LC_ALL=C "$BASE" /bin/sh -c "
set -e
out=\$($BIN/initdb -D $DATA -U lockchaos --auth=trust --no-sync --no-instructions -E UTF8 --locale=C --wal-segsize=1 2>&1) ||
  { echo \"\$out\"; exit 1; }
out=\$(printf '%s\n' 'ALTER DATABASE postgres RENAME TO lockchaos;' \"UPDATE pg_database SET datistemplate = false WHERE datname = 'template0';\" 'DROP DATABASE template0;' |
  $BIN/postgres --single -D $DATA -c fsync=off template1 2>&1) || { echo \"\$out\"; exit 1; }
printf 'host all all all trust\nhost replication all all trust\n' >>$DATA/pg_hba.conf
")"
docker start -a "$CTR"

# The settings of service/postgres/node.go serverArgs, for a server alone
# in its container: every address, port 5432, its socket in /tmp.
SETTINGS=(
  listen_addresses=* port=5432 unix_socket_directories=/tmp
  fsync=off full_page_writes=off shared_buffers=16MB max_connections=200
  dynamic_shared_memory_type=mmap autovacuum=off wal_retrieve_retry_interval=50ms
  logging_collector=off log_destination=stderr
  'log_line_prefix=%m [%p] ' log_timezone=UTC
  log_connections=off log_disconnections=on log_lock_waits=on
)
ENTRY="\"$BIN/postgres\", \"-D\", \"$DATA\""
for s in "${SETTINGS[@]}"; do
  ENTRY="$ENTRY, \"-c\", \"$s\""
done
OLD="$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
VERSION="$("$BIN/postgres" --version | sed -n "s/.*(PostgreSQL) \([0-9.]*\).*/\1/p")"
docker commit \
  --change "ENTRYPOINT [$ENTRY]" \
  --change 'CMD []' \
  --change 'USER postgres' \
  --change 'ENV LC_ALL=C' \
  --change 'WORKDIR /var/lib/postgresql' \
  --change 'EXPOSE 5432' \
  --change "LABEL org.lockchaos.postgres-version=$VERSION" \
  "$CTR" "$IMAGE" >/dev/null
# The image this one replaces (and its base) would stay behind untagged.
if [ -n "$OLD" ] && [ "$OLD" != "$(docker image inspect -f '{{.Id}}' "$IMAGE")" ]; then
  docker rmi "$OLD" >/dev/null 2>&1 || true
fi
echo "built $IMAGE from $BIN (PostgreSQL $VERSION)"
