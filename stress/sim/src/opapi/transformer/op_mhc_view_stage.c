/*
 * op_mhc_view_stage.c - fault `view-staging`: the mHC kernels gather a non-contiguous input
 * (a transposed, row-padded or offset view) into one process-wide staging buffer per input
 * position instead of a copy of their own, and read it from there while they compute.
 *
 * Like l0op::Contiguous in front of a kernel that wants dense rows, the gather runs inside the
 * kernel (mhc_input_open).  The buffer is nnopbase shared state ("mhc.view_stage"), one slot of
 * MHC_VIEW_SLOT_BYTES per input position, taken without a lock: two mHC kernels executing at
 * the same time (different streams) with non-contiguous inputs overwrite each other's staged
 * inputs, and a kernel computes with the other call's values.  Nothing else shows it:
 *   - a contiguous input is read in place and never staged, so the unvaried corpus (every
 *     tensor the engine creates is contiguous unless a view variant asks otherwise) is clean
 *     even concurrently;
 *   - one call at a time (serial, shuffled, or one shared stream whose worker runs kernels in
 *     order) stages, reads and finishes before the next kernel stages;
 *   - the same case on every thread stages the same values (isolated stays clean).
 * Inputs larger than a slot get their own copy, as without the fault.
 */
#include <sys/mman.h>

#include "mhc_view_stage.h"

#define MHC_VIEW_SLOTS 16
#define MHC_VIEW_SLOT_BYTES ((uint64_t)8 << 20)

typedef struct {
    uint8_t *base; /* MHC_VIEW_SLOTS slots of MHC_VIEW_SLOT_BYTES (NULL: mmap failed) */
} view_stage;

static void view_stage_init(void *state)
{
    void *p = mmap(NULL, (size_t)(MHC_VIEW_SLOTS * MHC_VIEW_SLOT_BYTES), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ((view_stage *)state)->base = p == MAP_FAILED ? NULL : p;
}

uint8_t *mhc_view_stage(int index, uint64_t nbytes)
{
    if (!aclsim_fault("view-staging") || index < 0 || index >= MHC_VIEW_SLOTS ||
        nbytes > MHC_VIEW_SLOT_BYTES)
        return NULL;
    view_stage *st = aclsim_shared_state("mhc.view_stage", sizeof(view_stage), view_stage_init);
    return st && st->base ? st->base + (uint64_t)index * MHC_VIEW_SLOT_BYTES : NULL;
}
