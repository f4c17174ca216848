/*
 * op_add.c - aclnnAdd, aclnnAdds, aclnnInplaceAdd, aclnnInplaceAdds (the real ops-math
 * signatures; header aclnn_add.h):
 *   out = self + alpha * other        (other a tensor, numpy-broadcast, or a scalar)
 *   selfRef += alpha * other          (the in-place forms: the broadcast shape must be selfRef's)
 * over FLOAT, FLOAT16, BF16, DOUBLE, INT32, INT64, INT16, INT8, UINT8, BOOL, COMPLEX64,
 * COMPLEX128.  Validation, promotion, numerics and the `add-race` fault: op_binary.c; the entry
 * points are made from its template (OP_BINARY_ENTRY, op_binary.h).
 */
#include "aclnn_add.h"
#include "op_binary.h"

OP_BINARY_ENTRY(aclnnAdd, "self", OP_BIN_ADD, 0,
                (const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                 aclTensor *out),
                self, other, NULL, alpha, out)

OP_BINARY_ENTRY(aclnnAdds, "self", OP_BIN_ADD, 0,
                (const aclTensor *self, const aclScalar *other, const aclScalar *alpha,
                 aclTensor *out),
                self, NULL, other, alpha, out)

OP_BINARY_ENTRY(aclnnInplaceAdd, "selfRef", OP_BIN_ADD, 1,
                (const aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha),
                selfRef, other, NULL, alpha, selfRef)

OP_BINARY_ENTRY(aclnnInplaceAdds, "selfRef", OP_BIN_ADD, 1,
                (const aclTensor *selfRef, const aclScalar *other, const aclScalar *alpha),
                selfRef, NULL, other, alpha, selfRef)
