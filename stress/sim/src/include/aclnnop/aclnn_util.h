/*
 * aclnnop/aclnn_util.h - ACLNN_API, the export attribute of operator entry points.
 */
#ifndef ACLSIM_ACLNN_UTIL_H_
#define ACLSIM_ACLNN_UTIL_H_

#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif

#endif /* ACLSIM_ACLNN_UTIL_H_ */
