/*
 * op_add.c - aclnnAdd: out = self + alpha * other.
 *
 * Supported (simulator subset of the A2/A3 dtype list): FLOAT, FLOAT16, BF16, INT32.
 * Promotion like torch among these: same -> same; INT32 + floatX -> floatX; FLOAT16 + BF16 ->
 * FLOAT; FLOAT16/BF16 + FLOAT -> FLOAT.  The promoted type must cast to out's dtype (no float ->
 * INT32), alpha must cast to the promoted type (no non-integral alpha for INT32).  Numpy
 * broadcasting up to 8 dims; out's view shape must equal the broadcast shape.
 *
 * Arithmetic: floating types in float32 (r = a + alpha * b, two roundings, no FMA), the result
 * rounded to the promoted type, then converted to out's dtype (round to nearest even); INT32 in
 * 64-bit arithmetic wrapped to 32 bits.  Deterministic: every element is computed independently.
 *
 * Fault `add-race` (ACLSIM_FAULTS, read in phase 1): the kernel computes its results into one
 * staging buffer (process-wide shared state "add.stage", shared by every add kernel of the
 * process whichever library runs it, like a fixed
 * device scratch area) and then copies them to `out`, 1M elements at a time.  Two add kernels
 * executing at the same time (on different streams) compute into the same bytes, and each
 * copies out whatever is there: the other's results.  One thread, or one stream (whose worker
 * runs kernels one after the other), never overlaps two kernels: serial replay is unaffected.
 */
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>

#include "aclsim_dtype.h"
#include "aclnn_add.h"
#include "aclsim_nnop.h"

#define OP "aclnnAdd"
#define ADD_MAX_DIMS 8

typedef struct {
    int32_t promoted;
    float alpha_f;
    int64_t alpha_i;
    int32_t staged; /* add-race: compute through the shared staging buffer */
} add_attrs;

/* add-race: the shared staging buffer (elements of out's dtype, at most 4 bytes each). */
#define ADD_STAGE_ELEMS ((int64_t)1 << 20)
typedef struct {
    uint8_t *stage;
} add_shared;

static void stage_init(void *state)
{
    void *p = mmap(NULL, (size_t)ADD_STAGE_ELEMS * 4, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ((add_shared *)state)->stage = p == MAP_FAILED ? NULL : p;
}

static int dtype_supported(int32_t dt)
{
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_INT32;
}

static int is_floating(int32_t dt)
{
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_DOUBLE;
}

static int32_t promote(int32_t a, int32_t b)
{
    if (a == b)
        return a;
    if (a == ACL_INT32)
        return b;
    if (b == ACL_INT32)
        return a;
    return ACL_FLOAT; /* two different floating types */
}

/* ---- kernel ---------------------------------------------------------------------------------- */

static inline float load_float(const uint8_t *base, int64_t i, int32_t dt)
{
    switch (dt) {
    case ACL_FLOAT: {
        float v;
        memcpy(&v, base + i * 4, 4);
        return v;
    }
    case ACL_FLOAT16: {
        uint16_t h;
        memcpy(&h, base + i * 2, 2);
        return aclsim_f16_to_f32(h);
    }
    case ACL_BF16: {
        uint16_t h;
        memcpy(&h, base + i * 2, 2);
        return aclsim_bf16_to_f32(h);
    }
    default: { /* ACL_INT32 */
        int32_t v;
        memcpy(&v, base + i * 4, 4);
        return (float)v;
    }
    }
}

static inline int32_t load_int32(const uint8_t *base, int64_t i)
{
    int32_t v;
    memcpy(&v, base + i * 4, 4);
    return v;
}

/* Round a float32 value to dtype dt and back (identity for FLOAT). */
static inline float round_to(float v, int32_t dt)
{
    if (dt == ACL_FLOAT16)
        return aclsim_f16_to_f32(aclsim_f32_to_f16(v));
    if (dt == ACL_BF16)
        return aclsim_bf16_to_f32(aclsim_f32_to_bf16(v));
    return v;
}

static inline void store_float(uint8_t *base, int64_t i, int32_t dt, float v)
{
    if (dt == ACL_FLOAT) {
        memcpy(base + i * 4, &v, 4);
    } else {
        uint16_t h = dt == ACL_FLOAT16 ? aclsim_f32_to_f16(v) : aclsim_f32_to_bf16(v);
        memcpy(base + i * 2, &h, 2);
    }
}

/* Strides (elements) of t broadcast to the out shape: 0 along stretched or missing dims. */
static void broadcast_strides(const aclsim_tensor_desc *t, int nd, int64_t *st)
{
    for (int i = 0; i < nd; i++) {
        int it = i - (nd - t->ndim);
        st[i] = (it >= 0 && t->dims[it] != 1) ? t->strides[it] : 0;
    }
}

/* Position in the out shape with the matching element offsets of self, other and out. */
typedef struct {
    int64_t idx[ADD_MAX_DIMS];
    int64_t ix, iy, io;
} odometer;

static inline void odo_next(odometer *c, int nd, const int64_t *dims, const int64_t *sx,
                            const int64_t *sy, const int64_t *so)
{
    for (int d = nd - 1; d >= 0; d--) {
        c->ix += sx[d];
        c->iy += sy[d];
        c->io += so[d];
        if (++c->idx[d] < dims[d])
            break;
        c->ix -= sx[d] * dims[d];
        c->iy -= sy[d] * dims[d];
        c->io -= so[d] * dims[d];
        c->idx[d] = 0;
    }
}

/* One element: out[io] (dst at index io, dtype od) = self[ix] + alpha * other[iy].  int_path
 * (promoted == INT32) is hoisted by the caller: stores through dst may alias *a. */
static inline void add_one(const add_attrs *a, int int_path, const aclsim_tensor_desc *x,
                           const aclsim_tensor_desc *y, const uint8_t *bx, const uint8_t *by,
                           int64_t ix, int64_t iy, int32_t od, uint8_t *dst, int64_t io)
{
    if (int_path) {
        /* two's-complement wrap: compute modulo 2^64, keep the low 32 bits */
        uint64_t r = (uint64_t)(int64_t)load_int32(bx, ix) +
                     (uint64_t)a->alpha_i * (uint64_t)(int64_t)load_int32(by, iy);
        int32_t r32 = (int32_t)(uint32_t)r;
        if (od == ACL_INT32)
            memcpy(dst + io * 4, &r32, 4);
        else
            store_float(dst, io, od, (float)r32);
    } else {
        float r = load_float(bx, ix, x->dtype) + a->alpha_f * load_float(by, iy, y->dtype);
        store_float(dst, io, od, round_to(r, a->promoted));
    }
}

static int add_kernel(aclsim_kernel_ctx *k)
{
    const add_attrs *a = k->attrs;
    const aclsim_tensor_desc *x = &k->inputs[0], *y = &k->inputs[1], *o = &k->outputs[0];
    int nd = o->ndim;
    int64_t sx[ADD_MAX_DIMS], sy[ADD_MAX_DIMS];
    broadcast_strides(x, nd, sx);
    broadcast_strides(y, nd, sy);
    const int64_t *so = o->strides, *dims = o->dims;
    const uint8_t *bx = (const uint8_t *)x->data + x->offset * aclsim_dtype_size(x->dtype);
    const uint8_t *by = (const uint8_t *)y->data + y->offset * aclsim_dtype_size(y->dtype);
    const int es = aclsim_dtype_size(o->dtype);
    uint8_t *bo = (uint8_t *)o->data + o->offset * es;
    int64_t total = aclsim_numel(o);
    odometer c = {{0}, 0, 0, 0};
    const int int_path = a->promoted == ACL_INT32;

    uint8_t *stage = NULL;
    if (a->staged) {
        add_shared *sh = aclsim_shared_state("add.stage", sizeof(add_shared), stage_init);
        stage = sh ? sh->stage : NULL;
    }
    if (!stage) {
        for (int64_t n = 0; n < total; n++) {
            add_one(a, int_path, x, y, bx, by, c.ix, c.iy, o->dtype, bo, c.io);
            odo_next(&c, nd, dims, sx, sy, so);
        }
        return 0;
    }
    /* add-race: compute a chunk into the shared staging buffer, then copy it out */
    odometer out = c;
    for (int64_t base = 0; base < total; base += ADD_STAGE_ELEMS) {
        int64_t n_chunk = total - base < ADD_STAGE_ELEMS ? total - base : ADD_STAGE_ELEMS;
        for (int64_t j = 0; j < n_chunk; j++) {
            add_one(a, int_path, x, y, bx, by, c.ix, c.iy, o->dtype, stage, j);
            odo_next(&c, nd, dims, sx, sy, so);
        }
        for (int64_t j = 0; j < n_chunk; j++) {
            memcpy(bo + out.io * es, stage + j * es, (size_t)es);
            odo_next(&out, nd, dims, sx, sy, so);
        }
    }
    return 0;
}

/* ---- phase 1 --------------------------------------------------------------------------------- */

ACLSIM_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                                const aclScalar *alpha, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const void *ptrs[] = {self, other, alpha, out, workspaceSize, executor};
    const char *names[] = {"self", "other", "alpha", "out", "workspaceSize", "executor"};
    for (int i = 0; i < 6; i++)
        if (!ptrs[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, OP "GetWorkspaceSize: %s is NULL",
                                    names[i]);

    const char *api = OP "GetWorkspaceSize";
    aclsim_tensor_desc ds, dot, dout;
    aclsim_scalar_value av;
    int rc;
    if ((rc = aclsim_tensor_get(api, "self", self, &ds)) || (rc = aclsim_tensor_get(api, "other", other, &dot)) ||
        (rc = aclsim_scalar_get(api, "alpha", alpha, &av)) || (rc = aclsim_tensor_get(api, "out", out, &dout)))
        return rc;

    const aclsim_tensor_desc *all[] = {&ds, &dot, &dout};
    for (int i = 0; i < 3; i++) {
        const char *nm = i == 0 ? "self" : i == 1 ? "other" : "out";
        if (!dtype_supported(all[i]->dtype))
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    "%s: %s dtype %s is not supported (the simulator's aclnnAdd "
                                    "supports FLOAT, FLOAT16, BF16, INT32)",
                                    api, nm, aclsim_dtype_name(all[i]->dtype));
        if (all[i]->ndim > ADD_MAX_DIMS)
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s has %d dims (at most %d)", api,
                                    nm, (int)all[i]->ndim, ADD_MAX_DIMS);
    }
    int32_t promoted = promote(ds.dtype, dot.dtype);
    if (is_floating(promoted) && !is_floating(dout.dtype))
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: the promoted type %s (self %s, other %s) cannot be cast to out "
                                "dtype %s",
                                api, aclsim_dtype_name(promoted), aclsim_dtype_name(ds.dtype),
                                aclsim_dtype_name(dot.dtype), aclsim_dtype_name(dout.dtype));
    add_attrs attrs = {.promoted = promoted, .staged = aclsim_fault("add-race")};
    if (promoted == ACL_INT32) {
        if (av.is_float && (!isfinite(av.f) || av.f != trunc(av.f) || fabs(av.f) >= 9.2233720368547758e18))
            return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                    "%s: alpha %g (%s) cannot be cast to the promoted type INT32 "
                                    "(it is not an integer)",
                                    api, av.f, aclsim_dtype_name(av.dtype));
        attrs.alpha_i = av.is_float ? (int64_t)av.f : av.i;
    } else {
        attrs.alpha_f = av.is_float ? (float)av.f
                        : av.dtype == ACL_UINT64 ? (float)av.u
                                                 : (float)av.i;
    }

    int64_t bshape[ACLSIM_MAX_DIMS];
    int bnd;
    char b1[256], b2[256];
    if (aclsim_broadcast_shape(ds.dims, ds.ndim, dot.dims, dot.ndim, bshape, &bnd) != 0)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: self shape %s and other shape %s cannot be broadcast", api,
                                aclsim_shape_str(ds.dims, ds.ndim, b1, sizeof b1),
                                aclsim_shape_str(dot.dims, dot.ndim, b2, sizeof b2));
    int same = bnd == dout.ndim;
    for (int i = 0; same && i < bnd; i++)
        same = bshape[i] == dout.dims[i];
    if (!same)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: out shape %s must equal the broadcast shape %s of self and "
                                "other",
                                api, aclsim_shape_str(dout.dims, dout.ndim, b1, sizeof b1),
                                aclsim_shape_str(bshape, bnd, b2, sizeof b2));

    int empty = aclsim_numel(&ds) == 0 || aclsim_numel(&dot) == 0;
    aclsim_executor *ex = aclsim_executor_create(OP, empty ? NULL : add_kernel, 0);
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    if ((rc = aclsim_executor_add_input(ex, "self", &ds)) ||
        (rc = aclsim_executor_add_input(ex, "other", &dot)) ||
        (rc = aclsim_executor_add_output(ex, "out", &dout)) ||
        (rc = aclsim_executor_set_attrs(ex, &attrs, sizeof attrs))) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

/* ---- phase 2 --------------------------------------------------------------------------------- */

ACLSIM_API aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
