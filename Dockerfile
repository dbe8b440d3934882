# syntax=docker/dockerfile:1
# One image for every role; ROLE picks what a container runs: api (HTTP only), worker (scan
# jobs from Redis only) or all (both in one process, the embedded default without REDIS_URL).

FROM node:24-trixie-slim AS build
WORKDIR /app
COPY . .
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund \
 && npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf packages/*/src packages/*/test apps/*/src apps/*/test scripts bench

FROM node:24-trixie-slim
# git clones remote sources (hardening lives in a service-owned config, see README); tini reaps
# the git helpers a killed clone leaves behind and forwards SIGTERM.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
# Two malloc arenas instead of eight per core: a worker's many threads each grew one of their own,
# and its resident memory climbed scan after scan (docs/operations.md, Memory).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8000 DATA_DIR=/data MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "apps/api/dist/main.js"]
