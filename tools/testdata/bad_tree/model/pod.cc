#include "kube/codec/json.h"  // model depends on nothing
