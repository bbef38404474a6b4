# syntax=docker/dockerfile:1
# Build from the repository root: docker build -f deploy/docker/backend.Dockerfile .
FROM golang:1.26 AS builder
WORKDIR /src
# The image needs the product module only; go.work would pull in ./tools as well.
ENV GOWORK=off CGO_ENABLED=0
COPY go.mod go.sum ./
RUN go mod download
COPY backend/ backend/
COPY internal/ internal/
RUN go build -trimpath -o /out/backend ./backend

# distroless static carries CA certificates and tzdata, which the Azure SDK and the
# Cluster Service client need, and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=builder /out/backend /backend
# 65532 is distroless' nonroot; numeric so that runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/backend"]
