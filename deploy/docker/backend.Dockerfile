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
# The operator command, run in the backend's pod with its environment and identity
# (docs/operations.md); it reads through the backend's packages and fleet register's
# stamp rule.
COPY fleet/ fleet/
COPY hcpsched/ hcpsched/
RUN go build -trimpath -o /out/backend ./backend
RUN go build -trimpath -o /out/hcpsched ./hcpsched

# distroless static carries CA certificates and tzdata, which the Azure SDK and the
# Cluster Service client need, and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=builder /out/backend /backend
# On the image's PATH, so that `kubectl exec ... -- hcpsched capacity` finds it.
COPY --from=builder /out/hcpsched /usr/local/bin/hcpsched
# 65532 is distroless' nonroot; numeric so that runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/backend"]
