/*
 * nb_list.c - aclTensorList and aclScalarList.
 *
 * As in CANN (nnopbase acl_op_api.cpp), a list holds the member handles it was given and
 * destroying the list destroys its members: a script that destroys a member and then the list
 * (or the list and then a member) destroys something twice.  Real CANN then has undefined
 * behaviour; the simulator detects it and returns 161002 with a message naming the list rule.
 * Members may be NULL (they are skipped on destroy); they are not checked at creation.
 */
#include <stdlib.h>
#include <string.h>

#include "nb_private.h"

typedef struct {
    aclsim_obj obj;
    uint64_t n;
    const void **items; /* member handles, NULL when n == 0 */
} nb_list;

static void free_list(aclsim_obj *o)
{
    free(((nb_list *)o)->items);
    free(o);
}

static void *create_list(const char *api, aclsim_kind kind, const void *const *value, uint64_t n)
{
    if (!value && n > 0) {
        aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: value is NULL but size is %llu", api,
                         (unsigned long long)n);
        return NULL;
    }
    nb_list *l = calloc(1, sizeof *l);
    const void **items = n && n < ((uint64_t)1 << 32) ? malloc(n * sizeof *items) : NULL;
    if (!l || (n && !items)) {
        free(l);
        free(items);
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
        return NULL;
    }
    if (n)
        memcpy(items, value, n * sizeof *items);
    l->n = n;
    l->items = items;
    aclsim_obj_init(&l->obj, kind, free_list);
    void *h = aclsim_obj_register(&l->obj);
    if (!h) {
        aclsim_obj_release(&l->obj);
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
    }
    return h;
}

static aclnnStatus destroy_list(const char *api, const char *what, const void *h, aclsim_kind kind,
                                aclnnStatus (*destroy_member)(const void *))
{
    if (!h)
        return ACLNN_SUCCESS;
    aclsim_obj *o = aclsim_obj_unregister(h, ACLSIM_KIND_BIT(kind));
    if (!o)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %p is not a live %s (destroyed "
                                "already?)", api, h, what);
    nb_list *l = (nb_list *)o;
    aclnnStatus rc = ACLNN_SUCCESS;
    for (uint64_t i = 0; i < l->n; i++) {
        if (l->items[i] && destroy_member(l->items[i]) != ACLNN_SUCCESS && rc == ACLNN_SUCCESS)
            rc = aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                  "%s: member %llu (%p) was destroyed already: destroying a list "
                                  "destroys its members, do not destroy them yourself (real CANN: "
                                  "double free)", api, (unsigned long long)i, l->items[i]);
    }
    aclsim_obj_release(o);
    return rc;
}

static aclnnStatus destroy_tensor(const void *h)
{
    return aclDestroyTensor((const aclTensor *)h);
}

static aclnnStatus destroy_scalar(const void *h)
{
    return aclDestroyScalar((const aclScalar *)h);
}

ACLSIM_API aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
    return create_list("aclCreateTensorList", ACLSIM_KIND_TENSOR_LIST,
                       (const void *const *)value, size);
}

ACLSIM_API aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size)
{
    return create_list("aclCreateScalarList", ACLSIM_KIND_SCALAR_LIST,
                       (const void *const *)value, size);
}

ACLSIM_API aclnnStatus aclDestroyTensorList(const aclTensorList *array)
{
    return destroy_list("aclDestroyTensorList", "aclTensorList", array, ACLSIM_KIND_TENSOR_LIST,
                        destroy_tensor);
}

ACLSIM_API aclnnStatus aclDestroyScalarList(const aclScalarList *array)
{
    return destroy_list("aclDestroyScalarList", "aclScalarList", array, ACLSIM_KIND_SCALAR_LIST,
                        destroy_scalar);
}

/* The member handles (copied, caller frees); 0, 161001 (NULL) or 161002 (not live). */
static int list_items(const char *api, const char *arg, const void *h, aclsim_kind kind,
                      const char *what, const void ***items, uint64_t *n)
{
    if (!h)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, arg);
    nb_list *l = (nb_list *)aclsim_obj_acquire(h, ACLSIM_KIND_BIT(kind));
    if (!l)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: %s (%p) is not a live %s (destroyed already?)", api, arg, h,
                                what);
    *n = l->n;
    *items = NULL;
    if (l->n && !(*items = malloc(l->n * sizeof **items))) {
        aclsim_obj_release(&l->obj);
        return aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
    }
    if (l->n)
        memcpy(*items, l->items, l->n * sizeof **items);
    aclsim_obj_release(&l->obj);
    return 0;
}

int aclsim_tensor_list_get(const char *api, const char *arg, const aclTensorList *list,
                           aclsim_tensor_desc **descs, uint64_t *n)
{
    const void **items;
    int rc = list_items(api, arg, list, ACLSIM_KIND_TENSOR_LIST, "aclTensorList", &items, n);
    if (rc)
        return rc;
    *descs = *n ? calloc(*n, sizeof **descs) : NULL;
    if (*n && !*descs)
        rc = aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
    char name[96];
    for (uint64_t i = 0; !rc && i < *n; i++) {
        aclsim_format(name, sizeof name, "%s[%llu]", arg, (unsigned long long)i);
        rc = aclsim_tensor_get(api, name, (const aclTensor *)items[i], &(*descs)[i]);
    }
    free(items);
    if (rc) {
        free(*descs);
        *descs = NULL;
    }
    return rc;
}

int aclsim_scalar_list_get(const char *api, const char *arg, const aclScalarList *list,
                           aclsim_scalar_value **values, uint64_t *n)
{
    const void **items;
    int rc = list_items(api, arg, list, ACLSIM_KIND_SCALAR_LIST, "aclScalarList", &items, n);
    if (rc)
        return rc;
    *values = *n ? calloc(*n, sizeof **values) : NULL;
    if (*n && !*values)
        rc = aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
    char name[96];
    for (uint64_t i = 0; !rc && i < *n; i++) {
        aclsim_format(name, sizeof name, "%s[%llu]", arg, (unsigned long long)i);
        rc = aclsim_scalar_get(api, name, (const aclScalar *)items[i], &(*values)[i]);
    }
    free(items);
    if (rc) {
        free(*values);
        *values = NULL;
    }
    return rc;
}

static aclnnStatus list_size(const char *api, const char *what, const void *h, aclsim_kind kind,
                             uint64_t *size)
{
    if (!h || !size)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api,
                                h ? "size" : what);
    const void **items;
    int rc = list_items(api, what, h, kind, what, &items, size);
    if (!rc)
        free(items);
    return rc;
}

ACLSIM_API aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size)
{
    return list_size("aclGetTensorListSize", "tensorList", tensorList, ACLSIM_KIND_TENSOR_LIST,
                     size);
}

ACLSIM_API aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size)
{
    return list_size("aclGetScalarListSize", "scalarList", scalarList, ACLSIM_KIND_SCALAR_LIST,
                     size);
}
