/*
 * rt_faults.c - opt-in fault injection switches (ACLSIM_FAULTS).
 *
 * ACLSIM_FAULTS is a comma-separated list of names from k_faults, read at aclInit.  Each fault
 * is a real mechanism implemented where it belongs (e.g. an operator file checks
 * aclsim_fault("name") in phase 1 and then uses a shared static buffer); this file only keeps
 * the switches.  To add a fault: add a row to k_faults and document it in docs/simulator.md.
 */
#include <ctype.h>
#include <string.h>

#include "rt_private.h"

typedef struct {
    const char *name;
    const char *description;
} fault_info;

/* The known faults.  Keep the {NULL, NULL} sentinel last.  At most 64 entries.  Each is a real
 * mechanism in the file named in its description (docs/simulator.md, "Faults", has the details:
 * conditions, how each protocol phase sees it, why serial replay cannot trigger it). */
static const fault_info k_faults[] = {
    {"tiling-race",
     "aclnnMhcPreSinkhornBackward: phase 1 publishes its partition (blocks, tokens per block) in "
     "process-wide static state that phase 2 copies into the launch; another shape's phase 1 in "
     "between changes how the kernel splits and reduces its tokens (op_mhc_pre_sinkhorn_"
     "backward.c)"},
    {"tiling-ring",
     "aclnnMhcPreSinkhornBackward: phase 1 leaves its partition in a two-slot tiling cache keyed "
     "by shape and keeps only the slot's index; a miss evicts the least recently used slot even "
     "if a call between phase 1 and launch still needs it, so three calls of distinct shapes "
     "(A, B and C's phase 1 before A's launch) launch A with C's partition; no ordering of two "
     "calls can (op_mhc_tiling_ring.c)"},
    {"shared-scratch",
     "aclnnMhcPreSinkhornBackward: the kernel reduces gradPhi/gradBias/gradAlpha through one "
     "device-wide scratch buffer (zero, accumulate, copy out); kernels executing at the same time "
     "corrupt each other (op_mhc_pre_sinkhorn_backward.c)"},
    {"stale-tail",
     "aclnnMhcPreSinkhornBackward: the final gradBias/gradAlpha reduction stages per-block "
     "partials in the executing core's buffer (one per stream worker thread) and sums all 24 "
     "slots although the launch wrote only its own block count: the tail holds the previous "
     "kernel's partials (op_mhc_pre_sinkhorn_backward.c)"},
    {"empty-skip",
     "aclnnMhcPreSinkhornBackward: empty inputs (B*S = 0) succeed without writing gradPhi, "
     "gradAlpha, gradBias (CANN 9.2.0; op_mhc_pre_sinkhorn_backward.c)"},
    {"grad-drift",
     "aclnnMhcPreSinkhornBackward: for M*K >= 2^21 the per-block running sums of gradPhi, gradBias "
     "and gradAlpha are kept in bf16 (rounded after every token): ~1e-2 relative error, "
     "deterministic (op_mhc_pre_sinkhorn_backward.c)"},
    {"add-race",
     "aclnnAdd: the kernel computes into one static staging buffer before copying to out; "
     "concurrently executing add kernels overwrite each other's staged results (op_add.c)"},
    {"crash",
     "aclnnMhcPreSinkhornBackward: phase 1 publishes a heap tiling object in a static pointer and "
     "frees the previous one, which a queued kernel may still use: a use-after-free that faults "
     "(the object's page is made inaccessible) when a phase 1 overlaps another call's "
     "phase 1 -> kernel window (op_mhc_pre_sinkhorn_backward.c)"},
    {"hang",
     "aclnnMhcPreSinkhornBackward: phase 1 takes the tiling-cache lock then the reduction lock; "
     "the kernel holds the reduction lock across its reduction and then takes the tiling-cache "
     "lock: a lock-order deadlock when a phase 1 overlaps a kernel (op_mhc_pre_sinkhorn_"
     "backward.c)"},
    {"scratch-pool",
     "aclnnAdd/Mul/Matmul/Softmax/RmsNorm/LayerNorm/ReduceSum/Cat (every operator but mHC's and "
     "SoftmaxBackward): "
     "kernels stage their output through nnopbase's scratch pool, cached by output dtype and "
     "element count, whose lookup does not check that a block is free; two kernels with such "
     "equal outputs executing at once (different streams) scatter each other's results "
     "(nb_scratch_pool.c)"},
    {"softmax-grad-tail",
     "aclnnSoftmaxBackward: the dot product sum(gradOutput*output) of each slice is reduced eight "
     "lanes at a time and drops the lanes left over when the slice length is not a multiple of "
     "8 (a vectorised loop without its scalar tail): out is off by output*(the dropped terms), "
     "deterministically (op_softmax_backward.c)"},
    {"weight-cache",
     "aclnnMatmul: the kernel keeps mat2 converted to its rounded float32 layout in a process-wide "
     "cache keyed by mat2's device address, dtype and shape (a pre-processed weight cache keyed "
     "by pointer); a hit never reads mat2, so once the address is freed and handed to another "
     "tensor of that shape the kernel multiplies by the old weights; calls at fresh addresses "
     "always miss (op_matmul.c)"},
    {"view-staging",
     "aclnnMhcPreSinkhorn/aclnnMhcPreSinkhornBackward: the kernel gathers a non-contiguous input "
     "(a transposed, row-padded or offset view) into one process-wide staging slot per input "
     "position, taken without a lock; two such kernels executing at once (different streams) "
     "compute with each other's inputs; contiguous inputs are read in place, never staged "
     "(op_mhc_view_stage.c)"},
    {"dirty-accumulator",
     "aclnnLayerNorm: each row's running sums (of the row, then of its squared deviations) are "
     "accumulated in the workspace, two floats per row, and the kernel skips zeroing them first: "
     "the mean and rstd start from whatever the workspace held, so the result changes with the "
     "caller's prior contents; invisible while the workspace is zero or holds the same bytes "
     "every call (op_layer_norm.c)"},
    {"gamma-cache",
     "aclnnRmsNorm: the kernel keeps gamma converted to float32 in a process-wide cache keyed by "
     "the device allocation holding it (the runtime's allocation, so an aclrtFree'd and "
     "re-allocated address misses), gamma's offset in it, dtype and length; a hit never reads "
     "gamma, so when a caching allocator keeps the block and hands it to another call's gamma "
     "of that length, the kernel scales by the old gamma; fresh aclrtMalloc addresses always "
     "miss (op_rms_norm.c)"},
    {"executor-reuse",
     "aclnnMul: the kernel keeps other's device address from the executor's first launch in the "
     "executor's argument block and reads it on every later launch, ignoring the address "
     "aclSetInputTensorAddr rebound; only a repeatable executor launched again after rebinding "
     "reads the stale buffer, a single-use executor launches once (op_binary.c)"},
    {"plan-cache",
     "aclnnSoftmax: phase 1 writes its plan (reduction dim, out dtype) into a process-wide cache "
     "keyed by self's shape alone and the executor keeps the slot's index; the kernel reads the "
     "plan back at launch, so a call of the same shape but another dtype or dim whose phase 1 "
     "runs between this call's phase 1 and launch makes it reduce along that dim and round to "
     "that dtype; serially each phase 1 refreshes its slot (op_softmax.c)"},
    {"split-k",
     "aclnnMatmul: past K = 2048 the kernel walks K in slices of 2048 and carries the output's "
     "running sums from slice to slice in an accumulation buffer that is one per process, taken "
     "without a lock; two such kernels executing at once (different streams) zero and add into "
     "each other's sums, even two calls of one case; a K up to 2048 never takes the path "
     "(op_matmul_split_k.c)"},
    {"thread-plan",
     "aclnnReduceSum: phase 1 keeps its plan (the reduced dims) in a ring in the calling "
     "thread's own storage and the executor keeps the slot's index; the launch reads the slot "
     "of the launching thread's ring, so phase 2 on another thread than phase 1 (a "
     "producer/consumer pipeline) sums over a plan that thread never wrote "
     "(op_reduce_sum_plan.c)"},
    {"side-stream",
     "aclnnCat: the kernel hands the copy of the last member to the operator's internal stream, "
     "which synchronizing the launch stream waits for but no event recorded on it after the "
     "launch does, so a consumer ordered by such an event on another stream reads out before "
     "that member's elements are there (op_cat_side.c)"},
    {NULL, NULL},
};

#define N_FAULTS ((int)(sizeof k_faults / sizeof k_faults[0]) - 1)

static atomic_ullong g_enabled; /* bit i: k_faults[i] enabled */
static char g_known[1024];       /* "a,b,c", built on first use */
static atomic_int g_known_ready;

static int fault_index(const char *name, size_t len)
{
    for (int i = 0; i < N_FAULTS; i++)
        if (strlen(k_faults[i].name) == len && strncmp(k_faults[i].name, name, len) == 0)
            return i;
    return -1;
}

ACLSIM_API const char *aclsimKnownFaults(void)
{
    if (!atomic_load(&g_known_ready)) {
        /* Idempotent: concurrent first calls write the same bytes. */
        char buf[sizeof g_known];
        size_t used = 0;
        buf[0] = '\0';
        for (int i = 0; i < N_FAULTS; i++) {
            size_t n = strlen(k_faults[i].name);
            if (used + n + 2 > sizeof buf)
                break;
            if (used)
                buf[used++] = ',';
            memcpy(buf + used, k_faults[i].name, n + 1);
            used += n;
        }
        memcpy(g_known, buf, sizeof g_known);
        atomic_store(&g_known_ready, 1);
    }
    return g_known;
}

ACLSIM_API const char *aclsimFaultDescription(const char *name)
{
    int i = name ? fault_index(name, strlen(name)) : -1;
    return i >= 0 ? k_faults[i].description : NULL;
}

int rt_faults_configure(const char *spec, char *err, size_t cap)
{
    unsigned long long mask = 0;
    const char *p = spec ? spec : "";
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != ',')
            p++;
        const char *end = p;
        while (end > start && isspace((unsigned char)end[-1]))
            end--;
        int i = fault_index(start, (size_t)(end - start));
        if (i < 0) {
            const char *known = aclsimKnownFaults();
            aclsim_format(err, cap, "unknown fault '%.*s' in ACLSIM_FAULTS; known faults: %s",
                          (int)(end - start), start, *known ? known : "(none)");
            return -1;
        }
        mask |= 1ull << i;
    }
    atomic_store(&g_enabled, mask);
    return 0;
}

void rt_faults_clear(void)
{
    atomic_store(&g_enabled, 0);
}

int aclsim_fault(const char *name)
{
    unsigned long long enabled = atomic_load(&g_enabled);
    if (!enabled || !name) /* the common case: no faults, no name lookup on the call path */
        return 0;
    int i = fault_index(name, strlen(name));
    return i >= 0 && ((enabled >> i) & 1u);
}
