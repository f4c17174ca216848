/*
 * acl/acl_mdl.h - model (aclmdl*) API.  The simulator implements none of it; the header exists
 * because acl/acl.h includes it, as in CANN.
 */
#ifndef ACLSIM_ACL_ACL_MDL_H_
#define ACLSIM_ACL_ACL_MDL_H_

#include "acl_base.h"

#endif /* ACLSIM_ACL_ACL_MDL_H_ */
