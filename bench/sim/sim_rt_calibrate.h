/* SPDX-License-Identifier: MIT */
/*
 * sim_rt_calibrate.h - `lockbench sim --workload rt --calibrate FILE`
 * (sim_rt_calibrate.c): measure the socket path's per-call CPU costs of
 * hackbench's shape on the running kernel into a cost table
 * (sim_rt_costs.h).
 */
#ifndef LB_SIM_RT_CALIBRATE_H
#define LB_SIM_RT_CALIBRATE_H

#include "sim_rt.h"
#include "sim_rt_costs.h"

#include <stddef.h>

/* cfg's groups, fds, loops and datasize set the shape; 0, or an errno
 * value with a one-line message in err. */
int lb_simr_calibrate(const struct lb_simr_config *cfg, struct lb_simr_costs *c, char *err,
		      size_t errlen);

#endif /* LB_SIM_RT_CALIBRATE_H */
