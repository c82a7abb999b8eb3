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
chmod 755 "$work"
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
  pod import --quiet --change "LABEL brain-stack-ci.base=$base_label" --change 'CMD ["/usr/local/bin/bun"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$work/base.tar" "${BASE_TAGS[0]}" >/dev/null || { say "FAIL: podman import"; failed=$((failed + 1)); finish; }
  rm -f "$work/base.tar"
  for tag in "${BASE_TAGS[@]}"; do podman tag "${BASE_TAGS[0]}" "$tag" "docker.io/$tag"; done
  say "base images ${BASE_TAGS[*]} made in $(( $(now) - t0 )) s"
fi

# 2. Build the real Dockerfile, unchanged.
t0=$(now)
say "building $IMAGE"
# --jobs 2: the stages that download (build, deps, claude) run side by side.
if pod build --pull=never --network=host --format docker --jobs 2 \
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

# 3. Run it. Host networking: the services bind loopback (the host's), on 8103/8104/8200 unless
#    another process holds one of those (then free ports, said so).
t_smoke=$(now)
free_port() { bun -e 'const s=Bun.listen({hostname:"127.0.0.1",port:0,socket:{data(){}}});console.log(s.port);s.stop(true)'; }
busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
router_port=8103; mcp_port=8104; service_port=8200
if busy 8103 || busy 8104 || busy 8200; then
  router_port=$(free_port); mcp_port=$(free_port); service_port=$(free_port)
  say "8103/8104/8200 are in use on this machine: the container listens on $router_port/$mcp_port/$service_port instead"
fi

# The fixture Anthropic API on the host: the agent's first answer runs Bash to write the file,
# the second ends the turn.
cat > "$work/turns.json" <<'JSON'
[
  { "content": [
      { "type": "text", "text": "I'll add the file." },
      { "type": "tool_use", "name": "Bash", "input": { "command": "printf '# Contributing\\n\\nOpen a pull request.\\n' > CONTRIBUTING.md", "description": "write CONTRIBUTING.md" } } ],
    "usage": { "input_tokens": 100, "output_tokens": 20 } },
  { "content": [ { "type": "text", "text": "Added CONTRIBUTING.md." } ],
    "usage": { "input_tokens": 200, "output_tokens": 10 } }
]
JSON
bun test/fixtures/anthropic-api.ts --port 0 --script "$work/turns.json" >"$work/api.out" 2>"$work/api.err" &
fixture_pid=$!
for _ in $(seq 1 300); do grep -q '^http' "$work/api.out" 2>/dev/null && break; sleep 0.1; done
api_url=$(grep -m1 '^http' "$work/api.out")
[ -n "$api_url" ] || { cat "$work/api.err"; say "FAIL: the fixture Anthropic API did not start"; failed=$((failed + 1)); finish; }

# The job's repository: a local bare repo with one commit on main, mounted at the same path and
# owned by the image's user (uid 1000), which pushes the job's branch to it.
repo="$work/repos/widgets.git"
git init -q --bare -b main "$repo"
git clone -q "$repo" "$work/seed" 2>/dev/null
printf '# widgets\n' > "$work/seed/README.md"
git -C "$work/seed" add README.md
git -C "$work/seed" -c user.name=ci -c user.email=ci@example.invalid commit -q -m "first"
git -C "$work/seed" push -q origin HEAD:main
chown -R 1000:1000 "$work/repos"
# A fixture `gh` (it records its argv and prints a pull request URL) first on the PATH.
mkdir -p "$work/bin" "$work/record"
install -m 0755 test/fixtures/fake-gh "$work/bin/gh"
chown 1000:1000 "$work/record"

key=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
container="brain-ci-$$"
if ! pod run -d --name "$container" --network=host \
    -e ROUTER_HOST=127.0.0.1 -e SERVICE_HOST=127.0.0.1 \
    -e PORT_BRAIN_API="$router_port" -e PORT_BRAIN_MCP="$mcp_port" -e SERVICE_PORT="$service_port" \
    -e SERVICE_API_KEYS="$key" -e TICK_INTERVAL_SECONDS=0 -e SERVICE_OTEL_ENABLED=false -e SERVICE_ALLOW_LOCAL_REPOS=1 \
    -e MODEL_BASE_URL="$api_url" -e MODEL_AUTH_TOKEN=sk-ant-fixture-key -e CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    -e PATH=/opt/fixture-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    -e FAKE_GH_RECORD=/ci-record/gh.jsonl \
    -v "$work/bin:/opt/fixture-bin:ro" -v "$work/record:/ci-record" -v "$work/repos:$work/repos" \
    "$IMAGE" >/dev/null 2>"$work/run.err"; then
  cat "$work/run.err"; say "FAIL: podman run"; failed=$((failed + 1)); container=""; finish
fi

healthy() { # healthy PORT: /health answers 200 within 90 s
  local deadline=$(( $(now) + 90 ))
  while [ "$(now)" -lt "$deadline" ]; do
    if out=$(curl -fsS "http://127.0.0.1:$1/health" 2>/dev/null); then echo "$out"; return 0; fi
    [ "$(podman inspect --format '{{.State.Running}}' "$container" 2>/dev/null)" = true ] || break
    sleep 0.5
  done
  podman logs --tail 30 "$container" 2>&1; return 1
}
inside() { podman exec "$container" "$@"; }
# No token was set: the entrypoint generated one into ~/.router/.env (compose: the data volume),
# and the router takes exactly that one.
router_token() {
  local token
  token=$(podman exec "$container" sh -c 'sed -n "s/^KB_ROUTER_TOKEN=//p" "$HOME/.router/.env"') || return 1
  [ -n "$token" ] || { echo "no KB_ROUTER_TOKEN in ~/.router/.env"; return 1; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$router_port/feed")" = 401 ] || { echo "/feed without the token is not 401"; return 1; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $token" "http://127.0.0.1:$router_port/feed")" = 200 ] || { echo "/feed with the generated token is not 200"; return 1; }
  echo "generated on first start; /feed 401 without it, 200 with it"
}
check "router /health on $router_port" healthy "$router_port"
check "orchestrator /health on $service_port" healthy "$service_port"
check "a router token with no settings" router_token
check "runs as the non-root user brain (uid 1000)" sh -c "[ \"\$(podman exec $container id -un):\$(podman exec $container id -u)\" = brain:1000 ] && podman exec $container id"
check "claude --version (pinned $(grep -oP '^ARG CLAUDE_CODE_VERSION=\K\S+' Dockerfile))" sh -c "podman exec $container claude --version | grep -F \"$(grep -oP '^ARG CLAUDE_CODE_VERSION=\K\S+' Dockerfile)\""
check "git --version" inside git --version
check "gh --version (the image's, not the fixture)" inside /usr/bin/gh --version
check "python3 --version" inside python3 --version
check "router-cli and service-cli" sh -c "podman exec $container router-cli version && podman exec $container service-cli version"

# One `code` job end to end: the real CLI in the container runs the scripted Bash tool in the
# job's worktree; auto-PR commits, pushes to the bare repo and records the fixture gh's URL.
code_job() {
  local id job status deadline
  id=$(curl -fsS -X POST "http://127.0.0.1:$service_port/jobs" -H "authorization: Bearer $key" -H 'content-type: application/json' \
    -d "{\"task\":\"add a CONTRIBUTING.md\",\"repo_url\":\"file://$repo\",\"profile\":\"code\"}" | jq -r .id) || return 1
  deadline=$(( $(now) + 240 ))
  while :; do
    job=$(curl -fsS "http://127.0.0.1:$service_port/jobs/$id" -H "authorization: Bearer $key") || return 1
    status=$(jq -r .status <<<"$job")
    case "$status" in queued|running) ;; *) break ;; esac
    [ "$(now)" -lt "$deadline" ] || { echo "job $id still $status after 240 s"; return 1; }
    sleep 1
  done
  jq -c '{status, exit_code, error, output, pr_url, branch}' <<<"$job"
  [ "$status" = succeeded ] || { podman logs --tail 30 "$container" 2>&1; return 1; }
  jq -e '.pr_url | test("^https://github.example/owner/repo/pull/[0-9]+$")' <<<"$job" >/dev/null || { echo "no pull request URL"; return 1; }
  branch=$(jq -r .branch <<<"$job")
  git -c safe.directory="*" -C "$repo" show "$branch:CONTRIBUTING.md" | grep -q "Open a pull request." || { echo "the branch $branch lacks the file the agent wrote"; return 1; }
  grep -q '"pr","create"' "$work/record/gh.jsonl" || { echo "the fixture gh saw no pr create"; return 1; }
}
check "a code job through the real Claude Code CLI: file written, branch pushed, pull request recorded" code_job
say "smoke test took $(( $(now) - t_smoke )) s"
finish
