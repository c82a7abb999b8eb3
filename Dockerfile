# brain-stack image: both services (bun scripts/start.ts → src/main.ts), the compiled CLIs, and
# what the orchestrator's jobs run: the Claude Code CLI, git, gh and python3 (runners).
# Multi-stage: dependencies, binaries and the agent CLI are fetched in the first stages; the
# runtime stage runs as a non-root user with production dependencies only.
# NODE_EXTRA_CA_CERTS (a build argument, so it never reaches the image): an extra trust store
# for the stages that download, e.g. a host's mounted read-only at build time (scripts/ci).
FROM oven/bun:1.4 AS build
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json bun.lock ./
COPY patches ./patches
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build

FROM oven/bun:1.4 AS deps
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json bun.lock ./
COPY patches ./patches
RUN bun install --frozen-lockfile --production

# Claude Code, pinned (the version the tests run: package.json's devDependency). Its platform
# package holds one self-contained `claude` executable (no node needed); only that file
# reaches the runtime stage.
FROM oven/bun:1.4 AS claude
ARG NODE_EXTRA_CA_CERTS
ARG CLAUDE_CODE_VERSION=2.1.332
WORKDIR /opt/claude
RUN case "$(uname -m)" in aarch64|arm64) arch=arm64 ;; *) arch=x64 ;; esac \
 && echo '{"name":"claude-cli","private":true}' > package.json \
 && bun add --exact "@anthropic-ai/claude-code-linux-${arch}@${CLAUDE_CODE_VERSION}" \
 && mv "node_modules/@anthropic-ai/claude-code-linux-${arch}/claude" /opt/claude/claude \
 && rm -rf node_modules \
 && /opt/claude/claude --version

FROM oven/bun:1.4-slim AS runtime
# git and gh for the jobs' clones, pushes and pull requests (openssh-client for ssh:// and
# user@host:path repositories), python3 for agent-mode runners, ca-certificates for HTTPS.
# Package lists, apt's caches, docs, man pages and translations are dropped in the same layer.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git gh python3 openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log /usr/share/doc/* /usr/share/man/* /usr/share/locale/*
# uid/gid 1000 (the usual first user on a Linux host), so the host vault that compose
# bind-mounts (VAULT_PATH) stays writable on both sides; the base image's own user at 1000
# (`bun`) makes way, so names and ids agree. The agent's home (~/.claude, ~/.service, the
# repos root) and /app/package (agent mode) belong to it.
RUN old=$(getent passwd 1000 | cut -d: -f1); if [ -n "$old" ]; then userdel --remove "$old" 2>/dev/null; fi; \
    oldgroup=$(getent group 1000 | cut -d: -f1); if [ -n "$oldgroup" ]; then groupdel "$oldgroup"; fi; \
    groupadd --gid 1000 brain && useradd --uid 1000 --gid 1000 --create-home --home-dir /home/brain --shell /bin/sh brain \
 && mkdir -p /vault /data /app/package /home/brain/.claude /home/brain/.service /home/brain/service-repos \
 && chown -R brain:brain /vault /data /app/package /home/brain
COPY --from=claude /opt/claude/claude /usr/local/bin/claude
WORKDIR /app
COPY --from=deps --chown=brain:brain /app/node_modules ./node_modules
COPY --chown=brain:brain package.json tsconfig.json bunfig.toml ./
COPY --chown=brain:brain src ./src
COPY --chown=brain:brain scripts/start.ts ./scripts/start.ts
COPY --chown=brain:brain cli/router/install/env-file.ts ./cli/router/install/env-file.ts
COPY --from=build /app/dist/router-cli /app/dist/service-cli /usr/local/bin/
USER brain
ENV HOME=/home/brain VAULT_PATH=/vault DATA_DIR=/data ROUTER_HOST=0.0.0.0 SERVICE_HOST=0.0.0.0 \
    SERVICE_PACKAGE_DIR=/app/package DISABLE_AUTOUPDATER=1
EXPOSE 8103 8104 8200
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=5 \
  CMD bun -e "const p=process.env.HEALTH_PORT||process.env.PORT_BRAIN_API||8103;fetch('http://127.0.0.1:'+p+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# scripts/start.ts generates a router token into ~/.router/.env on first start when none is
# configured (as `bun run start` does on a laptop), then runs src/main.ts. Bun's head limit is
# raised past the service's own 16 KiB (as in `bun run start`), so an over-long request line or
# header block is answered in the JSON error shape.
ENTRYPOINT ["bun", "--max-http-header-size=65536", "scripts/start.ts"]
