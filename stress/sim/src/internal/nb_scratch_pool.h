/*
 * nb_scratch_pool.h - output staging through nnopbase's device scratch pool (libnnopbase).
 *
 * Kernels compute their main output densely (row-major, in the output's dtype) into a scratch
 * block and then scatter it into the output's view, which may be strided or offset.  The
 * blocks come from one process-wide pool shared by every operator, cached by the output's dtype
 * and element count, so that a kernel staging the same type reuses a block instead of
 * allocating (as CANN's memory pools do).
 * A block is handed to one kernel at a time; it is returned by aclsim_stage_commit.
 *
 * Fault `scratch-pool` (ACLSIM_FAULTS): the pool's lookup matches a cached block by its key
 * only and forgets to check that the block is free.  Two kernels whose outputs have the same
 * dtype and element count, executing at the same time (on different streams), then stage into
 * the same block and each scatters out whatever the other wrote last.  Serial replay never has
 * two kernels in a block at once; the same case twice stages identical bytes, so only
 * different calls with such outputs (two operators, or two shapes with one element count)
 * corrupt each other.
 */
#ifndef ACLSIM_NB_SCRATCH_POOL_H
#define ACLSIM_NB_SCRATCH_POOL_H

#include "aclsim_nnop.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclsim_stage aclsim_stage;

/* A dense buffer for every element of `out` (numel * element size bytes, at least 1), or NULL
 * on out-of-memory (then *st is NULL: fail the kernel with ACL_ERROR_RT_INTERNAL_ERROR). */
ACLSIM_INTERNAL uint8_t *aclsim_stage_begin(const aclsim_tensor_desc *out, aclsim_stage **st);
/* Scatter the dense buffer into out's view (out->ndim <= 25) and return the block to the pool. */
ACLSIM_INTERNAL void aclsim_stage_commit(aclsim_stage *st, const aclsim_tensor_desc *out);

/* Return the block without writing out (a kernel that failed after aclsim_stage_begin). */
ACLSIM_INTERNAL void aclsim_stage_abandon(aclsim_stage *st);

#ifdef __cplusplus
}
#endif
#endif /* ACLSIM_NB_SCRATCH_POOL_H */
