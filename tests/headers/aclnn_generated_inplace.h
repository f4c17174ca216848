/* Test fixture written for aclnn-stress, in the layout the operator-package generator emits
 * (visibility attribute on its own line, one parameter per line, "required"/"dynamic" notes
 * instead of @param tags). Trap the rule cannot see: an in-place foreach that writes its const
 * list x1 (no "Ref"), and a check that writes its const tensor foundFlag. The reader reports
 * them as inputs; a declaration must override their roles ([op] roles). */
#ifndef FIXTURE_GENERATED_INPLACE_H_
#define FIXTURE_GENERATED_INPLACE_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnForeachScaleListInplaceGetWorkspaceSize
 * parameters :
 * x1 : dynamic
 * x2 : dynamic
 */
__attribute__((visibility("default")))
aclnnStatus aclnnForeachScaleListInplaceGetWorkspaceSize(
    const aclTensorList *x1,
    const aclTensorList *x2,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default")))
aclnnStatus aclnnForeachScaleListInplace(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    const aclrtStream stream);

__attribute__((visibility("default")))
aclnnStatus aclnnCheckFiniteGetWorkspaceSize(
    const aclTensorList *values,
    const aclTensor *foundFlag,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default")))
aclnnStatus aclnnCheckFinite(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
