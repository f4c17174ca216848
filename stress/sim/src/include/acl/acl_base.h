/*
 * acl/acl_base.h - AscendCL base types.  Current CANN keeps the runtime part in acl_base_rt.h and
 * includes it from here (8.1 had everything in this file); code may include either.
 */
#ifndef ACLSIM_ACL_ACL_BASE_H_
#define ACLSIM_ACL_ACL_BASE_H_

#include "acl_base_rt.h"
#include "error_codes/rt_error_codes.h"

#endif /* ACLSIM_ACL_ACL_BASE_H_ */
