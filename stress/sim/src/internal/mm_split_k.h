/*
 * mm_split_k.h - the K-split accumulation buffer of aclnnMatmul (op_matmul_split_k.c has the
 * mechanism, and the `split-k` fault's condition: two such kernels executing at once).
 */
#ifndef MM_SPLIT_K_H
#define MM_SPLIT_K_H

#include <stdint.h>

#define MM_HIDDEN __attribute__((visibility("hidden")))

/* K past this is walked in slices of this depth (what one pass of the cube unit's L1 holds),
 * the output's running sums carried from slice to slice in the accumulation buffer. */
#define MM_SPLIT_K 2048

/* The accumulation buffer for `floats` running sums: the call's own (malloc'd: *owned = 1,
 * release it with mm_split_k_release), or with the `split-k` fault the process-wide one when
 * it is large enough (*owned = 0).  NULL when out of host memory. */
MM_HIDDEN float *mm_split_k_buffer(int64_t floats, int *owned);
MM_HIDDEN void mm_split_k_release(float *buf, int owned);

#endif
