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

// Trim and mmap thresholds. A request's working set stays below it and
// mapped (glibc otherwise hands a worker's freed memory back after each large
// request and the next one page-faults it in again: that doubled a
// 5000-node filter's handler time, bench/extender_http_bench), while a list
// page (~7 MB at 2000 pods) is mapped on its own and unmapped when freed.
// With 256 / 16 MiB instead, the extender held 148-165 MiB after a
// 50 000-pod restart instead of 102 (bench/restart.sh).
inline constexpr int kServerMallocThresholdBytes = 4 << 20;

// glibc gives each thread that meets a locked arena an arena of its own, up
// to 8 per core, and memory freed in any but the main arena returns to the
// kernel only from the top of its heap. Each list of a restart runs on two
// threads (an informer and its page reader, kube/client/client.h), so a
// restart left a dozen arenas, each holding its high-water mark. Measured
// with bench/restart.sh's cluster (5000 nodes, 55 000 pods, 5000 Jobs), 6
// kill -9 restarts per side, alternating: the reconciler held 205 MiB with
// unbounded arenas, 150 with the thresholds above, 113 with 2 arenas as
// well (ready in 1.59 s against 1.68); the extender 209 -> 175 MiB. Two:
// kube-scheduler sends one filter or prioritize at a time, so the request
// handlers rarely contend for malloc with more than the watch threads.
inline constexpr int kServerMallocArenas = 2;

// Applies both settings to this process (mallopt).
void ConfigureServerMalloc();

}  // namespace muster::base
