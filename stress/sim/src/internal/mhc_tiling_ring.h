/*
 * mhc_tiling_ring.h - the two-slot tiling cache of the `tiling-ring` fault
 * (op_mhc_tiling_ring.c has the mechanism and why only three interleaved calls trip it).
 */
#ifndef MHC_TILING_RING_H
#define MHC_TILING_RING_H

#include <stdint.h>

#include "mhc_common.h"

#define MHC_RING_SLOTS 2

/* Phase 1: the slot now holding t's partition (a hit, or the evicted least recently used
 * slot), or -1 when the cache cannot be allocated. */
MHC_HIDDEN int mhc_ring_put(const mhc_tiling *t);
/* Phase 2: copy slot's partition into the launch: args[0] tokens per block, args[1] blocks. */
MHC_HIDDEN void mhc_ring_launch_args(int slot, int64_t *args);

#endif
