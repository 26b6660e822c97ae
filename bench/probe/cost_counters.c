#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 1
#define COST_FN cost_loop_counters
#define COST_LAPS_FN cost_laps_counters
#include "cost_impl.h"
