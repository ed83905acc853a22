# syntax=docker/dockerfile:1
# Node 22 LTS: the suite runs on it in CI (.ci/run), besides Node 20.
# Legacy-to-v1 compatibility gateway. Build: docker build -t legacy-gateway .
# Run:   docker run -p 8080:8080 -e V1_BASE_URL=… -e ENCRYPTION_KEY=… -e JWT_SECRET=… -e DATABASE_URL=… legacy-gateway

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATABASE_URL=/data/gateway.db MAPPINGS_DIR=/app/mappings
# glibc's mmap threshold fixed at 128 KiB (its default rises as large blocks are freed): the replica's columns grow by
# doubling, and with the rising threshold every freed column is left as a hole in malloc's heap — about 160 bytes of
# RSS a render held (docs/operations.md, "Memory of the replica")
ENV MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY mappings ./mappings
# what the migration report's proof runs the snippets it hands out with (node is the image's own): python3, and sh with
# curl and jq (docs/migration.md, "Proof"); a language missing here is reported as not compared, not as a failure
RUN apt-get update && apt-get install -y --no-install-recommends python3 curl jq ca-certificates && rm -rf /var/lib/apt/lists/*
# the operator CLI inside the image: docker exec <container> legacy-gateway users list
RUN ln -s /app/dist/src/cli/main.js /usr/local/bin/legacy-gateway && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# liveness only (/healthz): a v1 outage must not mark every container unhealthy; /readyz is for load balancers
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# V8's young generation capped at 3 × 8 MB (the default 3 × 16 MB lets a streamed limit=-1 of 100 000 renders peak
# ~20 MB higher; README "Benchmarks"); the same flags as `npm start` (test/ops/deployment.test.ts)
CMD ["node", "--max-semi-space-size=8", "dist/src/main.js"]
