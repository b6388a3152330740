# A thin front door: no CMake knowledge needed. `make test` and `make demo`
# are the two commands the README opens with.
.PHONY: test demo demo-down e2e e2e-chaos bench bench-throughput bench-gang bench-topology bench-sharing bench-sharing-latency bench-reconciler bench-peers bench-scale soak deps build unit sanitize tsan fuzz format tidy clean

JOBS ?= $(shell nproc)

test: deps                 ## install missing packages (as root), build, run every test tier
	./tools/run-tests.sh

demo: deps                 ## a local cluster with GPU nodes running example jobs (left running)
	./tools/demo.sh

demo-down:                 ## stop the cluster `make demo` left running
	./tools/demo.sh down

bench: deps                ## microbenchmarks (medians of 5), then pods/s, gang wait and GPU topology vs the stock scheduler, the reconciler vs kcm's Job controller
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS)
	./tools/run-bench.sh build-bench
	./bench/scheduling_throughput.sh --muster build-bench/cmd/muster
	./bench/gang_wait.sh --muster build-bench/cmd/muster
	./bench/gpu_topology.sh --muster build-bench/cmd/muster
	./bench/gpu_sharing.sh --bin build-bench/bench/gpu_sharing_quality
	./bench/reconciler.sh --muster build-bench/cmd/muster

bench-throughput: deps     ## only the end-to-end pods/s comparison (1000 kwok nodes)
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS) --target muster
	./bench/scheduling_throughput.sh --muster build-bench/cmd/muster

bench-gang: deps           ## only the gang wait (admission -> minMember bound) vs the stock scheduler (1000 kwok nodes)
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS) --target muster
	./bench/gang_wait.sh --muster build-bench/cmd/muster

bench-topology: deps       ## only GPU topology (best link class, one rack, stranded GPUs) vs stock and first-fit (100 + 1000 kwok nodes)
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS) --target muster
	./bench/gpu_topology.sh --muster build-bench/cmd/muster

bench-sharing: deps        ## only GPU sharing placement (whole, fraction and vGPU pods on 100 x 8 GPUs) vs first-fit, in process
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS) --target gpu_sharing_quality
	./bench/gpu_sharing.sh --bin build-bench/bench/gpu_sharing_quality

bench-sharing-latency: deps ## only the extender verbs (filter, prioritize, bind; whole and shared GPUs) now vs 265a81c, before GPU sharing: alternating rounds, about 15 min
	JOBS=$(JOBS) ./bench/extender_ab.sh --base 265a81c

bench-reconciler: deps     ## only the reconciler: Volcano Jobs -> pods (1000 x 1, 10 x 100) vs kcm's batch/v1 Job controller (16 kwok nodes)
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS) --target muster
	./bench/reconciler.sh --muster build-bench/cmd/muster

bench-peers: deps          ## stock vs Kubernetes 1.37's own gang scheduling vs Kueue v0.17 vs muster: deadlock, burst, preemption, throughput, gang wait, fair share, rack packing, admission; one table per workload (~100 min; BENCH_PEERS_ARGS="--only burst")
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS) --target muster
	./bench/peers.sh --muster build-bench/cmd/muster $(BENCH_PEERS_ARGS)

bench-scale: deps          ## 1000 and 5000 kwok nodes: pods/s, writes and CPU per pod vs stock (3000/10 000 pods), gang wait, extender/reconciler restart and RSS with 50 000 pods / 5000 Jobs (~1.5 h; BENCH_SCALE_ARGS="--only throughput")
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS) --target muster
	./bench/scale.sh --muster build-bench/cmd/muster $(BENCH_SCALE_ARGS)

deps:
	./tools/install-deps.sh

build: deps
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build -j$(JOBS)

# K8S=v1.34.4 runs the e2e tier on that Kubernetes version (default v1.37.2).
unit sanitize tsan fuzz e2e: deps
	TIERS=$@ $(if $(K8S),MUSTER_K8S_VERSION=$(K8S)) ./tools/run-tests.sh

soak: deps                 ## 30 min of seeded random churn on 100 kwok nodes: muster's RSS, fds, caches and invariants (not CI; SOAK_ARGS="--minutes 3" for a smoke)
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF
	cmake --build build-bench -j$(JOBS) --target muster
	./bench/soak.sh --muster build-bench/cmd/muster $(SOAK_ARGS)

e2e-chaos: deps            ## chaos: failover of the volcano trio (2 replicas, 5 kill -9 of the leader, rolling restart), then chaos.sh all (apiserver/etcd restart, watch cuts, slow apiserver, extender SIGSTOP) during gang bursts (~6.5 min; CI runs chaos 2 and 6 only)
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build -j$(JOBS) --target muster
	./e2e/scenarios/failover.sh --muster build/cmd/muster
	./e2e/scenarios/chaos.sh all --muster build/cmd/muster

format:
	find model kube gang queue topology extender reconciler cmd bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

tidy: build
	find model kube gang queue topology extender reconciler cmd -name '*.cc' ! -name '*_fuzz.cc' | xargs clang-tidy -p build --quiet

clean:
	rm -rf build build-asan build-tsan build-fuzz build-bench build-*.configure.log
