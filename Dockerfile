# syntax=docker/dockerfile:1
#
# The kubectl-ksm image: `kubectl ksm run`, the in-cluster Flux adapter (deploy/), and every
# other subcommand.
#
#   docker build -t ghcr.io/k0rdent/kubectl-ksm:0.1.0 .
#
# The builder is Rust on Alpine, whose native target is musl: the binary links statically by
# default and runs on a distroless base with no libc. `ring` compiles C, hence gcc and musl-dev.
# Building on the native target (no --target) keeps the file the same on amd64 and arm64.
FROM rust:1-alpine AS builder
# Unpinned on purpose: the packages follow the Alpine release the rust image is built on.
# hadolint ignore=DL3018
RUN apk add --no-cache gcc musl-dev
WORKDIR /build
# Only what the binary is built from: the manifest (its [[bench]] entries need benches/ to
# exist), the sources and the CRDs they embed with include_str!.
COPY Cargo.toml Cargo.lock README.md ./
COPY benches benches
COPY src src
COPY crds crds
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/build/target \
    cargo build --release --locked --bin kubectl-ksm \
    && cp target/release/kubectl-ksm /kubectl-ksm \
    && readelf -d /kubectl-ksm > /tmp/dynamic \
    && if grep -q NEEDED /tmp/dynamic; then echo "kubectl-ksm is not static" >&2; exit 1; fi

FROM gcr.io/distroless/static:nonroot
LABEL org.opencontainers.image.title="kubectl-ksm" \
      org.opencontainers.image.description="k0rdent Service Management: kubectl plugin and in-cluster Flux adapter" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=builder /kubectl-ksm /kubectl-ksm
USER 65532:65532
ENTRYPOINT ["/kubectl-ksm"]
