# syntax=docker/dockerfile:1
# One image recipe for every service: docker build --build-arg SERVICE=ledger .
# Stages: prune the workspace to the service (turbo prune), install and build
# it, drop dev dependencies, and copy the result into a slim runtime image.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS base
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH TURBO_TELEMETRY_DISABLED=1
RUN npm install -g --silent pnpm@10.34.9

FROM base AS pruner
ARG SERVICE
WORKDIR /repo
COPY . .
RUN pnpm dlx turbo@2.11.11 prune @gateway/${SERVICE} --docker

FROM base AS builder
ARG SERVICE
WORKDIR /repo
# Dependencies first (cached while only sources change).
COPY --from=pruner /repo/out/json/ .
RUN pnpm install --frozen-lockfile
COPY --from=pruner /repo/out/full/ .
RUN pnpm exec turbo run build --filter=@gateway/${SERVICE} \
 && pnpm install --prod --frozen-lockfile --offline

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ARG SERVICE
ENV NODE_ENV=production SERVICE=${SERVICE}
WORKDIR /app
COPY --from=builder --chown=node:node /repo .
USER node
# --no-memory-reducer: V8's memory reducer wakes an idle process every 8 s (docs/decisions/0200).
CMD ["sh", "-c", "exec node --no-memory-reducer apps/$SERVICE/dist/main.js"]
