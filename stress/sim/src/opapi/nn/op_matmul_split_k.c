/*
 * op_matmul_split_k.c - where aclnnMatmul keeps the running sums of a K past MM_SPLIT_K, and the
 * fault `split-k`.
 *
 * A cube unit multiplies one slice of K at a time (what its L1 holds); past MM_SPLIT_K the
 * kernel walks K in slices of MM_SPLIT_K and carries each output element's running sum from one
 * slice to the next in an accumulation buffer (op_matmul.c, mm_kernel): zeroed before the first
 * slice, read, added to and written back by every slice, copied to out after the last.  The sums
 * are the same float32 k-order sums as the one-pass path, so the split changes no bit.
 *
 * Fault `split-k` (ACLSIM_FAULTS): the buffer is nnopbase shared state ("matmul.split_k"), one
 * per process, taken without a lock, instead of the call's own.  Two kernels past the threshold
 * executing at the same time (different streams) zero and add into each other's running sums,
 * even two calls of the same case (each adds its slices on top of the other's).  Nothing else
 * shows it:
 *   - a K up to MM_SPLIT_K never takes the path: the shipped corpus (K <= 32) and cases drawn
 *     from its [dims] (K <= 128) stay clean, even concurrently; the edge-size variants (K at
 *     4096, 32768 and one past them) and the large case (K in the hundreds of thousands) take it;
 *   - one kernel at a time (serial, shuffled, one shared stream whose worker runs kernels in
 *     order) zeroes, accumulates and copies out before the next starts.
 * An output larger than the shared buffer gets a buffer of its own, as without the fault.
 */
#include <stdlib.h>

#include "aclsim_nnop.h"
#include "mm_split_k.h"

#define MM_SPLIT_K_FLOATS ((int64_t)1 << 20) /* the shared buffer: 4 MiB of running sums */

typedef struct {
    float *sums; /* MM_SPLIT_K_FLOATS floats (NULL: out of host memory) */
} split_k_state;

static void split_k_init(void *state)
{
    ((split_k_state *)state)->sums = malloc((size_t)MM_SPLIT_K_FLOATS * sizeof(float));
}

float *mm_split_k_buffer(int64_t floats, int *owned)
{
    if (aclsim_fault("split-k") && floats <= MM_SPLIT_K_FLOATS) {
        split_k_state *st =
            aclsim_shared_state("matmul.split_k", sizeof(split_k_state), split_k_init);
        if (st && st->sums) {
            *owned = 0;
            return st->sums;
        }
    }
    *owned = 1;
    return malloc((size_t)(floats > 0 ? floats : 1) * sizeof(float));
}

void mm_split_k_release(float *buf, int owned)
{
    if (owned)
        free(buf);
}
