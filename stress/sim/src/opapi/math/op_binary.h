/*
 * op_binary.h - the elementwise binary core shared by aclnnAdd/Adds/InplaceAdd/InplaceAdds and
 * aclnnMul/InplaceMul entry points (libopapi, internal), and the template that makes them.
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

/* The template every Add / Mul entry point is made from: aclnn<Name>GetWorkspaceSize with the
 * parameter list `params` (parenthesised, as the CANN header declares it, less workspaceSize and
 * executor) fills one op_bin_call and runs op_binary_prepare; aclnn<Name> runs the executor.
 * self_name, kind, inplace and the five call fields are op_bin_call's. */
#define OP_BIN_UNPAREN(...) __VA_ARGS__
#define OP_BINARY_ENTRY(name, self_name, kind, inplace, params, self, other, other_scalar,       \
                        alpha, out)                                                             \
    ACLSIM_API aclnnStatus name##GetWorkspaceSize(OP_BIN_UNPAREN params, uint64_t *workspaceSize, \
                                                  aclOpExecutor **executor)                     \
    {                                                                                           \
        op_bin_call c = {#name, self_name, kind, inplace, self, other, other_scalar, alpha, out}; \
        return op_binary_prepare(&c, workspaceSize, executor);                                  \
    }                                                                                           \
    ACLSIM_API aclnnStatus name(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, \
                                aclrtStream stream)                                             \
    {                                                                                           \
        return aclsim_executor_run(#name, workspace, workspaceSize, executor, stream);          \
    }

#endif /* ACLSIM_OP_BINARY_H */
