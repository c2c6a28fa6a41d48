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
CMD ["npm", "run", "api"]
