/*
 * nb_private.h - declarations shared by the nb_*.c files of libnnopbase only (hidden symbols).
 */
#ifndef ACLSIM_NB_PRIVATE_H
#define ACLSIM_NB_PRIVATE_H

#include "aclsim_nnop.h"

#define NB_HIDDEN __attribute__((visibility("hidden")))

/* Update a live tensor's device address (aclSetInput/OutputTensorAddr).  0 or -1 (not live). */
NB_HIDDEN int nb_tensor_set_data(const aclTensor *t, void *addr);

#endif /* ACLSIM_NB_PRIVATE_H */
