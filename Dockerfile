# Switchboard container image. Node 24 runs the TypeScript sources directly (type stripping), so the
# gateway has no compile step: the build stage only installs the production dependencies, the console
# stage builds the admin console (ui/ → ui/dist, with the dev dependencies Vite and React), and the
# runtime stage copies both next to src/. The pinned `node` devDependency is not needed: the base image
# is Node 24.
#
#   docker build -t switchboard:0.1.0 .
#   docker run --read-only --tmpfs /tmp -v switchboard-data:/var/lib/switchboard -p 4000:4000 switchboard:0.1.0
#
# Writable paths (everything else can be read-only): /tmp (upload spool, see docs/operations.md) and
# /var/lib/switchboard (the embedded default's SQLite file and generated master key; unused with
# PostgreSQL and a configured master key).

ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; none has an install script (package.json allows one, for the dev-only
# `node` package), so scripts stay off.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS console
WORKDIR /app
COPY package.json package-lock.json ./
# All dependencies (Vite, React and the chart library are dev dependencies: they end up bundled in
# ui/dist, not installed in the image); scripts off, so `prepare` does not run before ui/ is copied.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY ui ./ui
RUN npx vite build --config ui/vite.config.ts

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="switchboard" \
      org.opencontainers.image.description="An OpenAI-compatible AI gateway" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
# tini (Debian's package) runs as PID 1: it forwards SIGTERM and SIGINT to the gateway and reaps
# orphaned children, which a bare `node` as PID 1 does not do. The gateway handles SIGTERM from its
# first instruction too (docs/operations.md, The container image). npm, corepack and yarn are not used
# at run time (the command is `node`), so they leave the image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini=0.19.* \
 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg \
 && mkdir -p /var/lib/switchboard && chown 1000:1000 /var/lib/switchboard && chmod 0700 /var/lib/switchboard
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    GATEWAY_DATA_DIR=/var/lib/switchboard
COPY --from=build --chown=0:0 /app/node_modules ./node_modules
COPY --chown=0:0 package.json ./
COPY --chown=0:0 bin ./bin
COPY --chown=0:0 src ./src
COPY --from=console --chown=0:0 /app/ui/dist ./ui/dist
# The image's `node` user, by number so that Kubernetes' runAsNonRoot can verify it. The application
# files stay owned by root: the process cannot change its own code.
USER 1000:1000
VOLUME ["/var/lib/switchboard"]
EXPOSE 4000
STOPSIGNAL SIGTERM
# Liveness only (no dependency I/O); the image has no curl, so Node's fetch does the request. It asks
# 127.0.0.1: keep HOST at 0.0.0.0 (or a loopback address) for it to reach the gateway.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/health/liveliness').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# What `npm start` runs (node src/main.ts serve), under tini and without npm in between, so SIGTERM
# reaches the gateway at once, also while it is still starting (migrations, a database that is slow).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "src/main.ts"]
CMD ["serve"]
