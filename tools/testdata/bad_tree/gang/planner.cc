#include "queue/fair_share.h"  // a sibling: forbidden
