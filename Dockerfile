# brain-stack image: both services (bun src/main.ts) plus the compiled CLIs.
# Multi-stage: dependencies and binaries are built in the first stage; the runtime stage
# runs as a non-root user with production dependencies only.
FROM oven/bun:1.4 AS build
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build

FROM oven/bun:1.4 AS deps
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --production

FROM oven/bun:1.4-slim AS runtime
# uid/gid 1000 (the usual first user on a Linux host), so the host vault that compose
# bind-mounts (VAULT_PATH) stays writable on both sides; --non-unique because the base
# image's own user may hold 1000 already.
RUN groupadd --non-unique --gid 1000 brain && useradd --non-unique --uid 1000 --gid 1000 --create-home --home-dir /home/brain brain \
 && mkdir -p /vault /data && chown brain:brain /vault /data
WORKDIR /app
COPY --from=deps --chown=brain:brain /app/node_modules ./node_modules
COPY --chown=brain:brain package.json tsconfig.json bunfig.toml ./
COPY --chown=brain:brain src ./src
COPY --from=build /app/dist/router-cli /app/dist/service-cli /usr/local/bin/
USER brain
ENV VAULT_PATH=/vault DATA_DIR=/data ROUTER_HOST=0.0.0.0 SERVICE_HOST=0.0.0.0
EXPOSE 8103 8104 8200
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=5 \
  CMD bun -e "const p=process.env.HEALTH_PORT||process.env.PORT_BRAIN_API||8103;fetch('http://127.0.0.1:'+p+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["bun", "src/main.ts"]
