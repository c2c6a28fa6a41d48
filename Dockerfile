# One image for every process type; the command picks api, worker or migrate.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
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
