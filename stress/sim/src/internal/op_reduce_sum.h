/*
 * op_reduce_sum.h - what the files of aclnnReduceSum share (hidden symbols of libopapi):
 *   op_reduce_sum.c        phase 1 (checks, the reduced-dim mask), the kernel, phase 2
 *   op_reduce_sum_plan.c   the `thread-plan` fault: the mask kept in a thread-local ring
 */
#ifndef OP_REDUCE_SUM_H
#define OP_REDUCE_SUM_H

#include "op_elem.h"

#define RS_HIDDEN __attribute__((visibility("hidden")))

typedef struct {
    int32_t dtype;
    int32_t reduce[OP_MAX_DIMS]; /* 1: summed over */
    int32_t plan_slot; /* thread-plan: the slot of phase 1's thread-local ring; -1: attrs */
} rs_attrs;

/* thread-plan: keep a's mask in the calling thread's plan ring, set a->plan_slot, and publish
 * an executor whose launch reads the mask back from the *launching* thread's ring. */
RS_HIDDEN aclnnStatus rs_plan_publish(const char *op, aclsim_kernel_fn kernel, int launch,
                                      aclsim_tensor_desc *in, aclsim_tensor_desc *out, rs_attrs *a,
                                      uint64_t *workspaceSize, aclOpExecutor **executor);

#endif /* OP_REDUCE_SUM_H */
