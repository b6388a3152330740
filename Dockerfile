# The muster image: one binary, `muster extender` and `muster reconciler` are
# its subcommands (manifests/deploy/ runs both as sidecars of the `volcano`
# kube-scheduler). Our build hosts have no Docker engine, so this recipe is
# not built in CI; on a machine with Docker or another OCI builder:
#   docker build -t registry.example.com/muster:v0.1.0 .
# and name that image in manifests/kustomization.yaml (images:, name: muster).
#
# Same Debian release and packages as the build hosts (tools/install-deps.sh),
# so the image runs the code the tests ran.

FROM debian:bookworm AS build
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      cmake ninja-build g++ make pkg-config \
      libcpp-httplib-dev rapidjson-dev prometheus-cpp-dev libspdlog-dev libyaml-cpp-dev \
      libssl-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Release, no tests, benchmarks, fuzzers or e2e: only the binary ships.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DMUSTER_BUILD_TESTS=OFF -DMUSTER_BUILD_E2E=OFF -DMUSTER_BUILD_BENCH=OFF \
 && cmake --build /build --target muster \
 && strip /build/cmd/muster \
 && /build/cmd/muster version

FROM debian:bookworm-slim
# The shared libraries `ldd muster` names (cpp-httplib, prometheus-cpp,
# spdlog + fmt, yaml-cpp, OpenSSL, brotli, zlib) and CA certificates for the
# in-cluster API client.
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      libcpp-httplib0.11 libprometheus-cpp-core1.0 libspdlog1.10 libfmt9 libyaml-cpp0.7 \
      libssl3 libbrotli1 zlib1g ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/cmd/muster /usr/local/bin/muster
# Non-root, numeric so that runAsNonRoot can verify it (manifests/deploy/).
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/muster"]
CMD ["--help"]
