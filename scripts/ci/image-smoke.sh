#!/usr/bin/env bash
# CI: builds the real Dockerfile with Debian's podman and smoke-tests the image.
#   scripts/ci/image-smoke.sh            (as root; .ci/run calls it)
# No Docker engine and no registry here, so:
#   - the base images the Dockerfile's FROM lines name (oven/bun:1.4, oven/bun:1.4-slim) are
#     made locally: `debootstrap --variant=minbase bookworm` from the mirror apt uses (cached
#     under $BRAIN_CI_CACHE), plus this machine's bun binary and the user `bun` (uid 1000) the
#     official image has, imported with `podman import` and tagged with those exact names;
#   - podman runs with runc, cgroupfs, no default ulimits (a containers.conf this script
#     writes, via CONTAINERS_CONF) and host networking;
#   - build steps that download see the host's trust store as a read-only mount, never a copy:
#     at /run/host-certs (the runtime stage installs ca-certificates, which writes
#     /etc/ssl/certs), named by the build argument NODE_EXTRA_CA_CERTS (`--env` would bake it
#     into the image).
# Then it runs the image: /health on 8103 and 8200, `claude/git/gh --version` inside, and one
# `code` job end to end through the real Claude Code CLI against the fixture Anthropic API on
# the host. Every check prints `ok` or `FAIL`; the last line is
#   image checks: N passed, N failed
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
CACHE=${BRAIN_CI_CACHE:-/var/cache/brain-stack-ci}
IMAGE=${BRAIN_CI_IMAGE:-localhost/brain-stack:ci}
BASE_TAGS=(oven/bun:1.4 oven/bun:1.4-slim)
say() { echo "[image] $*"; }
passed=0
failed=0
check() { # check NAME COMMAND…: one smoke check, counted
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then
    passed=$((passed + 1)); say "ok: $name${out:+ — $(echo "$out" | head -n1)}"
  else
    failed=$((failed + 1)); say "FAIL: $name"; echo "$out" | tail -n 20 | sed 's/^/[image]   /'
  fi
}
finish() {
  echo "image checks: $passed passed, $failed failed"
  exit $(( failed > 0 ? 1 : 0 ))
}
now() { date +%s; }

work=$(mktemp -d /tmp/brain-image-ci.XXXXXX)
cleanup() {
  [ -n "${fixture_pid:-}" ] && kill "$fixture_pid" 2>/dev/null
  [ -n "${container:-}" ] && podman rm -f -t 0 "$container" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# Podman's settings for this machine: written here, not into /etc/containers.
cat > "$work/containers.conf" <<'CONF'
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
CONF
export CONTAINERS_CONF="$work/containers.conf"
pod() { podman --runtime runc "$@"; }

for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null 2>&1 || { say "FAIL: $tool is not installed"; failed=$((failed + 1)); finish; }
done

# 1. The base images: a minbase bookworm (cached) with bun and the user `bun`.
bun_bin=$(readlink -f "$(command -v bun)")
bun_version=$(bun --version)
base_label="bookworm-minbase+bun-${bun_version}"
if [ "$(podman image inspect --format '{{ index .Labels "brain-stack-ci.base" }}' "${BASE_TAGS[0]}" 2>/dev/null)" = "$base_label" ] \
  && podman image exists "${BASE_TAGS[1]}"; then
  say "base images ${BASE_TAGS[*]} present ($base_label)"
else
  t0=$(now)
  mkdir -p "$CACHE"
  rootfs_tar="$CACHE/bookworm-minbase.tar"
  if [ ! -s "$rootfs_tar" ]; then
    mirror=$(grep -hoE '^URIs:\s*\S+' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n1 | awk '{print $2}')
    [ -n "$mirror" ] || mirror=$(grep -hoE '^deb\s+\S+' /etc/apt/sources.list 2>/dev/null | grep -v security | head -n1 | awk '{print $2}')
    mirror=${mirror:-http://deb.debian.org/debian}
    say "debootstrap --variant=minbase bookworm from $mirror (cached in $CACHE)"
    root="$work/rootfs"
    if ! debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
      tail -n 20 "$work/debootstrap.log"; say "FAIL: debootstrap"; failed=$((failed + 1)); finish
    fi
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
    rm -rf "$root"
  fi
  # The official image: bun (and bunx) in /usr/local/bin, the user bun (1000:1000).
  root="$work/base"
  mkdir -p "$root" && tar -C "$root" -xf "$rootfs_tar"
  install -m 0755 "$bun_bin" "$root/usr/local/bin/bun"
  ln -sf bun "$root/usr/local/bin/bunx"
  chroot "$root" /bin/sh -c 'groupadd --gid 1000 bun && useradd --uid 1000 --gid 1000 --create-home --home-dir /home/bun --shell /bin/sh bun' \
    || { say "FAIL: creating the user bun in the base"; failed=$((failed + 1)); finish; }
  tar -C "$root" -cf "$work/base.tar" . && rm -rf "$root"
  pod import --change "LABEL brain-stack-ci.base=$base_label" --change 'CMD ["/usr/local/bin/bun"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$work/base.tar" "${BASE_TAGS[0]}" >/dev/null || { say "FAIL: podman import"; failed=$((failed + 1)); finish; }
  rm -f "$work/base.tar"
  for tag in "${BASE_TAGS[@]}"; do podman tag "${BASE_TAGS[0]}" "$tag" "docker.io/$tag"; done
  say "base images ${BASE_TAGS[*]} made in $(( $(now) - t0 )) s"
fi

# 2. Build the real Dockerfile, unchanged.
t0=$(now)
say "building $IMAGE"
if pod build --pull=never --network=host --format docker \
    -v /etc/ssl/certs:/run/host-certs:ro --build-arg NODE_EXTRA_CA_CERTS=/run/host-certs/ca-certificates.crt \
    -t "$IMAGE" -f Dockerfile . >"$work/build.log" 2>&1; then
  build_s=$(( $(now) - t0 ))
  size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
  passed=$((passed + 1))
  say "ok: image built in ${build_s} s; size $(( size / 1000000 )) MB ($size bytes)"
else
  tail -n 40 "$work/build.log"
  say "FAIL: podman build ($(( $(now) - t0 )) s)"; failed=$((failed + 1)); finish
fi
finish
