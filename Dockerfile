# One image for every process type; the command picks api, worker or migrate.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# Debian's ffmpeg and espeak-ng are current and fast (espeak-ng ~10 ms a call
# against ~250 ms for the npm WebAssembly build the code falls back to).
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg espeak-ng \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY api ./api
COPY core ./core
COPY db ./db
COPY worker ./worker
COPY scripts ./scripts
USER node
EXPOSE 3000
# node itself is the container's first process, so `docker stop`'s SIGTERM
# reaches it and it drains; npm would not pass the signal on. The command and
# its memory settings are package.json's `api` script, written out (worker:
# `node worker/main.ts`, migrations: `node scripts/migrate.ts`); test/container.test.ts
# holds the two to each other.
ENV MALLOC_MMAP_THRESHOLD_=65536
CMD ["node", "--max-semi-space-size=8", "--max-old-space-size=192", "--no-allocation-site-pretenuring", "api/main.ts"]
