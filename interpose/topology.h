/* interpose/topology.h — which NUMA node a waiter is on: real or virtual. */
#ifndef INTERPOSE_TOPOLOGY_H
#define INTERPOSE_TOPOLOGY_H

#include <stdbool.h>

#define TOPOLOGY_MAX_CPUS 4096
#define TOPOLOGY_MAX_NODES 1024

/*
 * CNAMUTEX_TOPOLOGY:
 *   nodes=N           CPU c is on node c mod N
 *   threads=N         a thread is on node (index of its first contended
 *                     acquisition) mod N, for life
 *   cpus=L0/L1/...    node i holds the CPUs of list Li, e.g. cpus=0-3,8/4-7
 *   (unset)           the machine's own table, from libnuma
 */
void topology_load(void);

int topology_nodes(void);
bool topology_is_per_thread(void);
int topology_node_of_cpu(int cpu);
int topology_node_of_thread_index(unsigned index);

/* Node of the calling thread now (per-thread modes take the index). */
int topology_current_node(unsigned thread_index);

/* The same, for a caller that already knows the CPU it runs on. */
int topology_node_at(unsigned thread_index, int cpu);

/* Parse a spec into a temporary; false with *reason on error. For tests too. */
bool topology_parse(const char *spec, const char **reason);

#endif
