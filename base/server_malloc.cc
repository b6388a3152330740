#include "base/server_malloc.h"

#include <malloc.h>

namespace muster::base {

void ConfigureServerMalloc() {
  mallopt(M_TRIM_THRESHOLD, kServerMallocThresholdBytes);
  mallopt(M_MMAP_THRESHOLD, kServerMallocThresholdBytes);
  mallopt(M_ARENA_MAX, kServerMallocArenas);
}

}  // namespace muster::base
