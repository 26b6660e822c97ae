#ifndef RXRAY_BENCH_COST_H
#define RXRAY_BENCH_COST_H
#include <stdint.h>
struct rxp_probe;
uint64_t cost_loop_off(struct rxp_probe *p, uint64_t *lines, unsigned burst, unsigned bursts);
uint64_t cost_loop_counters(struct rxp_probe *p, uint64_t *lines, unsigned burst, unsigned bursts);
uint64_t cost_loop_full(struct rxp_probe *p, uint64_t *lines, unsigned burst, unsigned bursts);
uint64_t cost_laps_off(struct rxp_probe *p, unsigned laps);
uint64_t cost_laps_counters(struct rxp_probe *p, unsigned laps);
uint64_t cost_laps_full(struct rxp_probe *p, unsigned laps);
#endif
