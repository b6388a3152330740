// How muster's long-running servers (the extender, the reconciler) set up
// glibc's malloc: what they free after a burst of large allocations - a
// restart's list pages, a 5000-node request - either goes back to the
// kernel or stays in a bounded set of arenas, instead of staying mapped in
// one arena per thread that once allocated.
//
// Thread-safety: call ConfigureServerMalloc() once, first thing, before any
// thread starts (arenas already created stay). A build whose malloc is not
// glibc's (the sanitizers') ignores the settings.
#pragma once

namespace muster::base {

// Trim and mmap thresholds. Without fixed ones glibc hands a worker's freed
// memory back to the kernel after each large request, and the next request
// page-faults it all in again: that doubled a 5000-node filter's handler
// time (bench/extender_http_bench). 4 MiB, not more: a 5000-node request's
// working set stays below it, so it stays mapped (handler p50/p99 the same as
// with 256 / 16 MiB, 3 alternating runs), while a list page (~7 MB at 2000
// pods) is mapped on its own and unmapped when freed; with 256 / 16 MiB the
// extender held 148-165 MiB after a 50 000-pod restart instead of 102
// (bench/restart.sh).
inline constexpr int kServerMallocThresholdBytes = 4 << 20;

// glibc gives each thread that meets a locked arena an arena of its own, up
// to 8 per core, and memory freed in any but the main arena returns to the
// kernel only from the top of its heap. Each list of a restart runs on two
// threads (an informer and its page reader, kube/client/client.h), so a
// restart left a dozen arenas, each holding its high-water mark. Measured
// with bench/restart.sh's cluster (5000 nodes, 55 000 pods, 5000 Jobs), 6
// kill -9 restarts per side, alternating, RSS 3 s after ready: the
// reconciler held 205-208 MiB with unbounded arenas, 150 with the thresholds
// above, 108-113 with 2 arenas as well; the extender 207-209 -> 175 MiB.
// Ready times did not move beyond the noise (reconciler medians 1.55-2.34 s
// either way). Two: kube-scheduler sends one filter or prioritize at a time,
// so the request handlers rarely contend for malloc with more than the watch
// threads (measured on 2 cores only).
inline constexpr int kServerMallocArenas = 2;

// Applies both settings to this process (mallopt).
void ConfigureServerMalloc();

}  // namespace muster::base
