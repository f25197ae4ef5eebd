# Builds backtestd with its web page. Used by docker-compose.yml.
FROM node:20-bookworm AS web
WORKDIR /src/web
COPY web/ ./
RUN if [ -f package.json ]; then npm ci && npm run build; fi

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=web /src/web/dist ./web/dist
RUN CGO_ENABLED=0 go build -o /out/backtestd ./cmd/backtestd

FROM debian:bookworm-slim
COPY --from=build /out/backtestd /usr/local/bin/backtestd
COPY examples /srv/strategies
ENV LISTEN_ADDR=:8080 STRATEGY_DIRS=/srv/strategies
EXPOSE 8080
ENTRYPOINT ["backtestd"]
CMD ["serve"]
