#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 2
#define COST_FN cost_loop_full
#define COST_LAPS_FN cost_laps_full
#include "cost_impl.h"
