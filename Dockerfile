# syntax=docker/dockerfile:1
# hostfw: the worker, the standalone API, the operator CLI, the BMC simulator and the Scout agent in one image.
# See docs/deploy.md. Firmware images are not part of the image: mount them (volume or bind mount)
# at the site config's firmware_global.firmware_directory.

# --- builder -----------------------------------------------------------------------------------
# Exact versions: the toolchain the repository is built and tested with; a dated Debian snapshot.
FROM rust:1.95.0-bookworm AS builder
# protoc: the Temporal SDK compiles its protobuf definitions at build time.
RUN apt-get update \
    && apt-get install -y --no-install-recommends protobuf-compiler \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The context has no .git: pass the commit for hostfw_build_info
# (`docker compose build --build-arg HOSTFW_GIT_COMMIT=$(git rev-parse --short=12 HEAD)`).
ARG HOSTFW_GIT_COMMIT=unknown
# The cache mounts keep the crate registry and the build directory between image builds; the
# binaries are copied out in the same step because a cache mount is not part of the layer.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bins \
        -p hostfw-worker -p hostfw-api -p hostfw-starter -p hostfw-bmc-sim -p hostfw-scout \
    && mkdir -p /out \
    && cp target/release/hostfw-worker target/release/hostfw-api target/release/hostfw target/release/bmc-sim \
        target/release/scout /out/

# --- runtime -----------------------------------------------------------------------------------
FROM debian:bookworm-20250317-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# A fixed, unprivileged user. /var/lib/hostfw holds the firmware directory and the Scout scripts
# (docker-compose.yml mounts a volume there; a new named volume takes this ownership).
RUN groupadd --system --gid 10001 hostfw \
    && useradd --system --uid 10001 --gid hostfw --home-dir /var/lib/hostfw --shell /usr/sbin/nologin hostfw \
    && mkdir -p /etc/hostfw /var/lib/hostfw/firmware /var/lib/hostfw/scout-firmware-scripts \
    && chown -R hostfw:hostfw /var/lib/hostfw
COPY --from=builder /out/hostfw-worker /out/hostfw-api /out/hostfw /out/bmc-sim /out/scout /usr/local/bin/
USER hostfw:hostfw
WORKDIR /var/lib/hostfw
# The CLI (`hostfw`) and the worker read this when --config is not given.
ENV HOSTFW_CONFIG=/etc/hostfw/site.toml
# 9464: Prometheus /metrics ([worker] metrics_listen); 8089: firmware artifacts for BMCs
# ([worker] artifact_listen); 9443: the hostfw API ([api] listen, https off loopback). Each must
# listen on 0.0.0.0 in the site config to be reachable.
# Healthcheck without curl: `hostfw-worker --health-check http://127.0.0.1:9464/readyz`.
EXPOSE 9464 8089 9443
ENTRYPOINT ["hostfw-worker"]
CMD ["--config", "/etc/hostfw/site.toml"]
