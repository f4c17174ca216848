/*
 * Test fixture (written for aclnn-stress, not a vendor file): the four Add operators the way
 * CANN's public aclnn_add.h lays them out, with its documented traps:
 *  - the non-const `out` of aclnnAdd is tagged [in] in the doc comment (role must be output);
 *  - aclnnInplaceAdd takes `const aclTensor *selfRef` (role must be inout).
 */
#ifndef FIXTURE_ACLNN_ADD_H_
#define FIXTURE_ACLNN_ADD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Phase one of aclnnAdd: out = self + alpha * other.
 * @param [in] self: first addend, ND tensor.
 * @param [in] other: second addend, broadcastable to self.
 * @param [in] alpha: scalar multiplying other.
 * @param [in] out: the sum (documented "in" although it is written).
 * @param [out] workspaceSize: bytes of workspace needed.
 * @param [out] executor: the op executor.
 * @return aclnnStatus
 */
ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other,
                                               const aclScalar* alpha, aclTensor* out,
                                               uint64_t* workspaceSize, aclOpExecutor** executor);

/**
 * @brief Phase two of aclnnAdd.
 * @param [in] workspace: device workspace.
 * @param [in] stream: the stream.
 */
ACLNN_API aclnnStatus aclnnAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                               aclrtStream stream);

/** @param [in] other: a scalar addend here. */
ACLNN_API aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor* self, const aclScalar* other,
                                                const aclScalar* alpha, aclTensor* out,
                                                uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnAdds(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                aclrtStream stream);

// In-place: selfRef is read and written; declared const all the same.
ACLNN_API aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor* selfRef,
                                                      const aclTensor* other,
                                                      const aclScalar* alpha,
                                                      uint64_t* workspaceSize,
                                                      aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceAdd(void* workspace, uint64_t workspaceSize,
                                      aclOpExecutor* executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // FIXTURE_ACLNN_ADD_H_
