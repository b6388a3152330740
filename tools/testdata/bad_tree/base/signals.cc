#include "model/status.h"  // base includes no muster module
