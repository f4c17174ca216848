/*
 * aclnn/aclnn_base.h - aclnn library initialisation, for the aclnn-stress CANN simulator.
 * Included by every operator header.
 */
#ifndef ACLSIM_ACLNN_ACLNN_BASE_H_
#define ACLSIM_ACLNN_ACLNN_BASE_H_

#include <stdint.h>
#include <stdlib.h>

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif
#endif /* ACLSIM_ACLNN_ACLNN_BASE_H_ */
