/*
 * op_binary.h - the elementwise binary core shared by aclnnAdd/Adds/InplaceAdd/InplaceAdds and
 * aclnnMul/Muls-style entry points (libopapi, internal).
 *
 * One phase 1 (op_binary_prepare) validates and builds the executor for
 *   out = self (+ alpha *) other      other a tensor (numpy broadcasting) or a scalar
 * over the 12 math dtypes with torch's promotion; the kernel computes every element
 * independently (deterministic) and stages the result through the nnopbase scratch pool.
 */
#ifndef ACLSIM_OP_BINARY_H
#define ACLSIM_OP_BINARY_H

#include "aclsim_nnop.h"

typedef enum { OP_BIN_ADD = 0, OP_BIN_MUL = 1 } op_bin_kind;

/* What one entry point passes: the API name (for messages and the executor), the parameter
 * names as its header spells them, and which of other/other_scalar and alpha are used.  out is
 * the output tensor (selfRef itself for the in-place forms, flagged by inplace). */
typedef struct {
    const char *op;         /* "aclnnAdd", "aclnnInplaceMul", ... */
    const char *self_name;  /* "self" or "selfRef" */
    op_bin_kind kind;
    int inplace;
    const aclTensor *self;
    const aclTensor *other;          /* NULL when other_scalar is used */
    const aclScalar *other_scalar;   /* the Adds/Muls forms */
    const aclScalar *alpha;          /* NULL for Mul */
    const aclTensor *out;
} op_bin_call;

/* Phase 1: NULL checks (161001), validation (161002), executor.  Consumes nothing of the
 * caller's; returns the aclnn status. */
aclnnStatus op_binary_prepare(const op_bin_call *c, uint64_t *workspaceSize,
                              aclOpExecutor **executor);

#endif /* ACLSIM_OP_BINARY_H */
