/* SPDX-License-Identifier: MIT */
/*
 * commands.h - every `lockbench` command, declared once.  main.c's table
 * calls them; each command's definition file includes this header, so the
 * compiler checks every definition against the declaration the table uses.
 * A command: int fn(argc, argv) with argv[0] the command name; 0 on success,
 * 1 for a failed run, 2 (through lb_usage_error) for bad input.
 */
#ifndef LB_BENCH_COMMANDS_H
#define LB_BENCH_COMMANDS_H

/* The default comparison behind a bare `lockbench` (micro/micro_main.c). */
int lb_cmd_default(int argc, char **argv);
/* `lockbench bench`: the micro-benchmark (micro/micro_main.c). */
int lb_cmd_bench(int argc, char **argv);
/* `lockbench list [--json]`: the lock registry (list.c). */
int lb_cmd_list(int argc, char **argv);
/* `lockbench ab A B`: paired interleaved A/B of two locks (ab/ab_main.c). */
int lb_cmd_ab(int argc, char **argv);
/* `lockbench aim7` (aim7/aim7_main.c). */
int lb_cmd_aim7(int argc, char **argv);
/* `lockbench compare` (compare/compare_main.c). */
int lb_cmd_compare(int argc, char **argv);
/* `lockbench plot` (plot/plot_main.c). */
int lb_cmd_plot(int argc, char **argv);
/* `lockbench rt` (rt/rt_main.c). */
int lb_cmd_rt(int argc, char **argv);
/* `lockbench slab` (slab/slab_main.c). */
int lb_cmd_slab(int argc, char **argv);

#endif /* LB_BENCH_COMMANDS_H */
