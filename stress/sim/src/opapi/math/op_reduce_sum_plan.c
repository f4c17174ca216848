/*
 * op_reduce_sum_plan.c - the `thread-plan` fault of aclnnReduceSum: phase 1 keeps its plan in
 * thread-local storage and phase 2 reads it back from the thread that launches.
 *
 * Mechanism.  Phase 1 writes the plan (the reduced-dim mask) into the next slot of a ring of
 * RS_PLAN_SLOTS plans in the calling thread's own storage (a per-thread tiling arena: phase 1
 * allocates nothing and takes no lock) and the executor keeps only the slot's index.  The
 * launch hook, which runs in phase 2 on the launching thread, copies the slot of *that*
 * thread's ring into the launch, and the kernel sums over the dims it names.  As long as phase
 * 2 runs on the thread that ran phase 1 — serial replay, every phase's plain, repeat and event
 * calls, the interleaved pairs and PCT schedules (at most three phase 1s pending on one thread,
 * far fewer than the ring's slots), the baseline — the slot holds the call's own plan.  A
 * launch on another thread (a producer/consumer pipeline: phase 1 on the producer, phase 2 on
 * a launcher thread) reads the launcher's ring: a slot that thread never wrote (all zero: no
 * dim reduced, so out receives self's first elements) or another call's plan.
 */
#include "op_reduce_sum.h"

#define RS_PLAN_SLOTS 16

typedef struct {
    uint32_t next;
    int64_t masks[RS_PLAN_SLOTS]; /* bit i: dim i is reduced */
} rs_plan_ring;

static rs_plan_ring *ring(void)
{
    return aclsim_thread_state("reduce_sum.plan_ring", sizeof(rs_plan_ring));
}

static void plan_launch_hook(const void *attrs, int64_t *args)
{
    const rs_attrs *a = attrs;
    rs_plan_ring *r = ring(); /* the launching thread's ring */
    args[0] = r ? r->masks[a->plan_slot % RS_PLAN_SLOTS] : 0;
}

aclnnStatus rs_plan_publish(const char *op, aclsim_kernel_fn kernel, int launch,
                            aclsim_tensor_desc *in, aclsim_tensor_desc *out, rs_attrs *a,
                            uint64_t *workspaceSize, aclOpExecutor **executor)
{
    rs_plan_ring *r = ring();
    if (!r)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    int64_t mask = 0;
    for (int i = 0; i < OP_MAX_DIMS; i++)
        mask |= (int64_t)(a->reduce[i] != 0) << i;
    a->plan_slot = (int32_t)(r->next++ % RS_PLAN_SLOTS);
    r->masks[a->plan_slot] = mask;
    aclsim_executor *ex = aclsim_executor_create(op, launch ? kernel : NULL, 0);
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    int rc;
    if ((rc = aclsim_executor_add_input(ex, "self", in)) ||
        (rc = aclsim_executor_add_output(ex, "out", out)) ||
        (rc = aclsim_executor_set_attrs(ex, a, sizeof *a))) {
        aclsim_executor_discard(ex);
        return rc;
    }
    aclsim_executor_set_launch_hook(ex, plan_launch_hook);
    return aclsim_executor_publish(ex, workspaceSize, executor);
}
