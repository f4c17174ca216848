/*
 * nb_private.h - declarations shared by the nb_*.c files of libnnopbase only (hidden symbols).
 */
#ifndef ACLSIM_NB_PRIVATE_H
#define ACLSIM_NB_PRIVATE_H

#include "aclsim_nnop.h"

#include <pthread.h>

#define NB_HIDDEN __attribute__((visibility("hidden")))

typedef struct {
    aclsim_obj obj;
    pthread_mutex_t mu; /* guards d.data (aclSetInput/OutputTensorAddr) */
    aclsim_tensor_desc d;
    uint64_t nview, nstorage;
    int64_t *view, *strides, *storage; /* full copies, any count (one block at view) */
} nb_tensor;

#define TENSOR_KIND ACLSIM_KIND_BIT(ACLSIM_KIND_TENSOR)
#define SCALAR_KIND ACLSIM_KIND_BIT(ACLSIM_KIND_SCALAR)

/* Update a live tensor's device address (aclSetInput/OutputTensorAddr).  0 or -1 (not live). */
NB_HIDDEN int nb_tensor_set_data(const aclTensor *t, void *addr);

#endif /* ACLSIM_NB_PRIVATE_H */
