# Production image: compiled service, production dependencies only.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The workspaces' manifests (the client and the examples): npm ci reads every workspace of the lockfile.
COPY clients/typescript/package.json ./clients/typescript/
COPY examples/login-with-school/package.json ./examples/login-with-school/
COPY examples/meals-today/package.json ./examples/meals-today/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json codegen.yml ./
COPY schema ./schema
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY schema ./schema
# The pages' stylesheet and script (web/assets) and the login button kit (web/kit, served under /docs/kit).
COPY web ./web
USER node
EXPOSE 8080
# Liveness over plain HTTP from inside the container (loopback may reach /livez in production too,
# src/http/tls.ts). The image has no curl: Node's fetch asks. Readiness (/readyz: database and
# Redis) is for load balancers and docker-compose.yml, which waits on it.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "bin/campus.js", "serve"]
