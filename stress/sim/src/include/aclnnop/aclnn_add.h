/*
 * aclnn_add.h - aclnnAdd, aclnnAdds, aclnnInplaceAdd, aclnnInplaceAdds (ops-math operator API) as the aclnn-stress CANN simulator implements it.
 * Written for the simulator from the documented signatures; installed as <root>/include/aclnnop/.
 * Compile with -I<root>/include -I<root>/include/aclnnop.
 */
#ifndef OP_API_INC_ADD_H_
#define OP_API_INC_ADD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First stage of aclnnAdd: out = self + alpha * other, with broadcasting and type
 * promotion over FLOAT, FLOAT16, BF16, DOUBLE, INT32, INT64, INT16, INT8, UINT8, BOOL,
 * COMPLEX64 and COMPLEX128.
 * @param [in] self: first operand.
 * @param [in] other: second operand; broadcasts with self.
 * @param [in] alpha: scale of other; must cast to the promoted type.
 * @param [in] out: result tensor with the broadcast shape (written by the operator, although
 * the parameter list, like CANN's, tags it [in]).
 * @param [out] workspaceSize: the device workspace the second stage needs.
 * @param [out] executor: the operator executor for the second stage.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                               const aclScalar *alpha, aclTensor *out,
                                               uint64_t *workspaceSize, aclOpExecutor **executor);

/**
 * @brief Second stage of aclnnAdd: runs the executor built by aclnnAddGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);

/**
 * @brief First stage of aclnnAdds: out = self + alpha * other for a scalar other.
 * @param [in] self: tensor operand.
 * @param [in] other: scalar operand.
 * @param [in] alpha: scale of other.
 * @param [in] out: result tensor with self's shape (written by the operator).
 * @param [out] workspaceSize: the device workspace the second stage needs.
 * @param [out] executor: the operator executor for the second stage.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                                const aclScalar *alpha, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);

/**
 * @brief Second stage of aclnnAdds: runs the executor built by aclnnAddsGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);

/**
 * @brief First stage of aclnnInplaceAdd: selfRef = selfRef + alpha * other.
 * @param [in] selfRef: the tensor updated in place (declared const, as in CANN, though the
 * operator writes it); the broadcast shape of selfRef and other must be selfRef's.
 * @param [in] other: second operand.
 * @param [in] alpha: scale of other.
 * @param [out] workspaceSize: the device workspace the second stage needs.
 * @param [out] executor: the operator executor for the second stage.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef,
                                                      const aclTensor *other,
                                                      const aclScalar *alpha,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);

/**
 * @brief Second stage of aclnnInplaceAdd: runs the executor built by aclnnInplaceAddGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);

/**
 * @brief First stage of aclnnInplaceAdds: selfRef = selfRef + alpha * other for a scalar other.
 * @param [in] selfRef: the tensor updated in place.
 * @param [in] other: scalar operand.
 * @param [in] alpha: scale of other.
 * @param [out] workspaceSize: the device workspace the second stage needs.
 * @param [out] executor: the operator executor for the second stage.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef,
                                                       const aclScalar *other,
                                                       const aclScalar *alpha,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);

/**
 * @brief Second stage of aclnnInplaceAdds: runs the executor built by aclnnInplaceAddsGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_ADD_H_ */
