#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 0
#define COST_FN cost_loop_off
#define COST_LAPS_FN cost_laps_off
#include "cost_impl.h"
