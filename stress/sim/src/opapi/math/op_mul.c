/*
 * op_mul.c - aclnnMul and aclnnInplaceMul (the real ops-math signatures; header aclnn_mul.h):
 *   out = self * other       selfRef *= other
 * with numpy broadcasting over the 12 math dtypes (BOOL: logical and).  Validation,
 * promotion and numerics: op_binary.c; the entry points are made from its template
 * (OP_BINARY_ENTRY, op_binary.h).
 */
#include "aclnn_mul.h"
#include "op_binary.h"

OP_BINARY_ENTRY(aclnnMul, "self", OP_BIN_MUL, 0,
                (const aclTensor *self, const aclTensor *other, aclTensor *out),
                self, other, NULL, NULL, out)

OP_BINARY_ENTRY(aclnnInplaceMul, "selfRef", OP_BIN_MUL, 1,
                (const aclTensor *selfRef, const aclTensor *other),
                selfRef, other, NULL, NULL, selfRef)
