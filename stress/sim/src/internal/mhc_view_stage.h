/*
 * mhc_view_stage.h - the staging buffer of the `view-staging` fault (op_mhc_view_stage.c has
 * the mechanism and why only non-contiguous inputs of two kernels in flight trip it).
 */
#ifndef MHC_VIEW_STAGE_H
#define MHC_VIEW_STAGE_H

#include <stdint.h>

#include "mhc_common.h"

/* Where the kernel gathers non-contiguous input `index` (nbytes): the process-wide staging
 * slot of that input when the fault is on and the slot is large enough, else NULL (the caller
 * gathers into its own copy). */
MHC_HIDDEN uint8_t *mhc_view_stage(int index, uint64_t nbytes);

#endif
