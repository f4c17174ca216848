/*
 * nb_scalar.c - host-side values: aclScalar and aclIntArray / aclFloatArray / aclBoolArray.
 *
 * All of them copy the user's value at creation, so the host buffer may be freed afterwards.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclsim_dtype.h"
#include "nb_private.h"

typedef struct {
    aclsim_obj obj;
    aclsim_scalar_value v;
} nb_scalar;

typedef struct {
    aclsim_obj obj;
    uint64_t n;
    size_t elem;
    void *values; /* n * elem bytes, NULL when n == 0 */
} nb_array;


static void free_scalar(aclsim_obj *o)
{
    free(o);
}

static void free_array(aclsim_obj *o)
{
    free(((nb_array *)o)->values);
    free(o);
}

/* Integer views of a floating value: truncation toward zero, 0 when not representable. */
static void set_from_double(aclsim_scalar_value *v, double f)
{
    v->is_float = 1;
    v->f = f;
    v->i = (isfinite(f) && f > -9223372036854775808.0 && f < 9223372036854775808.0) ? (int64_t)f : 0;
    v->u = (isfinite(f) && f >= 0 && f < 18446744073709551616.0) ? (uint64_t)f : (uint64_t)v->i;
}

static void set_from_int(aclsim_scalar_value *v, int64_t i)
{
    v->i = i;
    v->u = (uint64_t)i;
    v->f = (double)i;
}

/* float8 e4m3fn (bias 7, no infinities, S.1111.111 is NaN) to double. */
static double f8_e4m3fn(uint8_t b)
{
    int e = (b >> 3) & 0xF, m = b & 7;
    double sign = (b & 0x80) ? -1.0 : 1.0;
    if (e == 0xF && m == 7)
        return NAN;
    return sign * (e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6));
}

/* The types CANN accepts beyond the plain ones (complex, 8/6/4-bit floats): the raw bytes are
 * kept; `f` holds the value where the simulator decodes it (the real part of a complex; fp8
 * e5m2 / e4m3fn / e8m0), else NaN.  0, or -1 for a non-numeric type. */
static int read_other(aclsim_scalar_value *v, const unsigned char *p)
{
    v->is_float = 1;
    switch (v->dtype) {
    case ACL_COMPLEX64: {
        float re;
        memcpy(v->bits, p, 8);
        memcpy(&re, p, 4);
        set_from_double(v, re);
        return 0;
    }
    case ACL_COMPLEX128: {
        double re;
        memcpy(v->bits, p, 8); /* the real part (the imaginary part is not kept) */
        memcpy(&re, p, 8);
        set_from_double(v, re);
        return 0;
    }
    case ACL_COMPLEX32: {
        uint16_t re;
        memcpy(v->bits, p, 4);
        memcpy(&re, p, 2);
        set_from_double(v, aclsim_f16_to_f32(re));
        return 0;
    }
    case ACL_FLOAT8_E5M2: /* the top byte of a float16 */
        v->bits[0] = p[0];
        set_from_double(v, aclsim_f16_to_f32((uint16_t)(p[0] << 8)));
        return 0;
    case ACL_FLOAT8_E4M3FN:
        v->bits[0] = p[0];
        set_from_double(v, f8_e4m3fn(p[0]));
        return 0;
    case ACL_FLOAT8_E8M0: /* a power of two, 0xFF is NaN */
        v->bits[0] = p[0];
        set_from_double(v, p[0] == 0xFF ? NAN : ldexp(1.0, p[0] - 127));
        return 0;
    case ACL_HIFLOAT8:
    case ACL_FLOAT6_E3M2:
    case ACL_FLOAT6_E2M3:
    case ACL_FLOAT4_E2M1:
    case ACL_FLOAT4_E1M2:
        v->bits[0] = p[0];
        set_from_double(v, NAN); /* kept as bits only */
        return 0;
    default:
        return -1;
    }
}

ACLSIM_API aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    const char *api = "aclCreateScalar";
    if (!value) {
        aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: value is NULL", api);
        return NULL;
    }
    aclsim_scalar_value v;
    memset(&v, 0, sizeof v);
    v.dtype = (int32_t)dataType;
    const unsigned char *p = value;
    switch ((int)dataType) {
    case ACL_FLOAT: {
        float f;
        memcpy(&f, p, 4);
        memcpy(v.bits, p, 4);
        set_from_double(&v, f);
        break;
    }
    case ACL_DOUBLE: {
        double f;
        memcpy(&f, p, 8);
        memcpy(v.bits, p, 8);
        set_from_double(&v, f);
        break;
    }
    case ACL_FLOAT16:
    case ACL_BF16: {
        uint16_t h;
        memcpy(&h, p, 2);
        memcpy(v.bits, p, 2);
        set_from_double(&v, dataType == ACL_BF16 ? aclsim_bf16_to_f32(h) : aclsim_f16_to_f32(h));
        break;
    }
    case ACL_INT8: { int8_t x; memcpy(&x, p, 1); memcpy(v.bits, p, 1); set_from_int(&v, x); break; }
    case ACL_INT16: { int16_t x; memcpy(&x, p, 2); memcpy(v.bits, p, 2); set_from_int(&v, x); break; }
    case ACL_INT32: { int32_t x; memcpy(&x, p, 4); memcpy(v.bits, p, 4); set_from_int(&v, x); break; }
    case ACL_INT64: { int64_t x; memcpy(&x, p, 8); memcpy(v.bits, p, 8); set_from_int(&v, x); break; }
    case ACL_UINT8: { uint8_t x; memcpy(&x, p, 1); memcpy(v.bits, p, 1); set_from_int(&v, x); break; }
    case ACL_UINT16: { uint16_t x; memcpy(&x, p, 2); memcpy(v.bits, p, 2); set_from_int(&v, x); break; }
    case ACL_UINT32: { uint32_t x; memcpy(&x, p, 4); memcpy(v.bits, p, 4); set_from_int(&v, x); break; }
    case ACL_UINT64: {
        uint64_t x;
        memcpy(&x, p, 8);
        memcpy(v.bits, p, 8);
        v.u = x;
        v.i = (int64_t)x;
        v.f = (double)x;
        break;
    }
    case ACL_BOOL: {
        v.bits[0] = p[0] ? 1 : 0;
        set_from_int(&v, p[0] ? 1 : 0);
        break;
    }
    default:
        if (read_other(&v, p) != 0) {
            aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                             "%s: dataType %d (%s) is not a numeric type (the simulator refuses "
                             "it; CANN's behaviour for it is not documented)",
                             api, (int)dataType, aclsim_dtype_name((int32_t)dataType));
            return NULL;
        }
    }
    nb_scalar *s = malloc(sizeof *s);
    if (!s) {
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
        return NULL;
    }
    s->v = v;
    aclsim_obj_init(&s->obj, ACLSIM_KIND_SCALAR, free_scalar);
    void *h = aclsim_obj_register(&s->obj);
    if (!h) {
        aclsim_obj_release(&s->obj);
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
    }
    return (aclScalar *)h;
}

static aclnnStatus destroy_handle(const char *api, const char *what, const void *h, aclsim_kind kind)
{
    if (!h)
        return ACLNN_SUCCESS;
    aclsim_obj *o = aclsim_obj_unregister(h, ACLSIM_KIND_BIT(kind));
    if (!o)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %p is not a live %s (destroyed already?)",
                                api, h, what);
    aclsim_obj_release(o);
    return ACLNN_SUCCESS;
}

ACLSIM_API aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
    return destroy_handle("aclDestroyScalar", "aclScalar", scalar, ACLSIM_KIND_SCALAR);
}

int aclsim_scalar_get(const char *api, const char *arg, const aclScalar *scalar,
                      aclsim_scalar_value *out)
{
    if (!scalar)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, arg);
    nb_scalar *s = (nb_scalar *)aclsim_obj_acquire(scalar, SCALAR_KIND);
    if (!s)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: %s (%p) is not a live aclScalar (destroyed already?)", api, arg,
                                (const void *)scalar);
    *out = s->v; /* immutable after creation */
    aclsim_obj_release(&s->obj);
    return 0;
}

/* ---- arrays ---------------------------------------------------------------------------------- */

static void *create_array(const char *api, aclsim_kind kind, const void *value, uint64_t n, size_t elem)
{
    if (!value && n > 0) {
        aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: value is NULL but size is %llu", api,
                         (unsigned long long)n);
        return NULL;
    }
    if (n > ((uint64_t)1 << 40) / elem) {
        aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: size %llu is too large", api,
                         (unsigned long long)n);
        return NULL;
    }
    nb_array *a = calloc(1, sizeof *a);
    void *copy = n ? malloc(n * elem) : NULL;
    if (!a || (n && !copy)) {
        free(a);
        free(copy);
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
        return NULL;
    }
    if (n)
        memcpy(copy, value, n * elem);
    a->n = n;
    a->elem = elem;
    a->values = copy;
    aclsim_obj_init(&a->obj, kind, free_array);
    void *h = aclsim_obj_register(&a->obj);
    if (!h) {
        aclsim_obj_release(&a->obj);
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
    }
    return h;
}

static int get_array(const char *api, const char *arg, const void *h, aclsim_kind kind,
                     const char *what, void **values, uint64_t *n)
{
    if (!h)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, arg);
    nb_array *a = (nb_array *)aclsim_obj_acquire(h, ACLSIM_KIND_BIT(kind));
    if (!a)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: %s (%p) is not a live %s (destroyed already?)", api, arg, h, what);
    void *copy = NULL;
    if (a->n) {
        copy = malloc(a->n * a->elem);
        if (!copy) {
            aclsim_obj_release(&a->obj);
            return aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
        }
        memcpy(copy, a->values, a->n * a->elem);
    }
    *values = copy;
    *n = a->n;
    aclsim_obj_release(&a->obj);
    return 0;
}

ACLSIM_API aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)
{
    return create_array("aclCreateIntArray", ACLSIM_KIND_INT_ARRAY, value, size, sizeof(int64_t));
}

ACLSIM_API aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size)
{
    return create_array("aclCreateFloatArray", ACLSIM_KIND_FLOAT_ARRAY, value, size, sizeof(float));
}

ACLSIM_API aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size)
{
    return create_array("aclCreateBoolArray", ACLSIM_KIND_BOOL_ARRAY, value, size, sizeof(bool));
}

ACLSIM_API aclnnStatus aclDestroyIntArray(const aclIntArray *array)
{
    return destroy_handle("aclDestroyIntArray", "aclIntArray", array, ACLSIM_KIND_INT_ARRAY);
}

ACLSIM_API aclnnStatus aclDestroyFloatArray(const aclFloatArray *array)
{
    return destroy_handle("aclDestroyFloatArray", "aclFloatArray", array, ACLSIM_KIND_FLOAT_ARRAY);
}

ACLSIM_API aclnnStatus aclDestroyBoolArray(const aclBoolArray *array)
{
    return destroy_handle("aclDestroyBoolArray", "aclBoolArray", array, ACLSIM_KIND_BOOL_ARRAY);
}

int aclsim_int_array_get(const char *api, const char *arg, const aclIntArray *a, int64_t **values,
                         uint64_t *n)
{
    return get_array(api, arg, a, ACLSIM_KIND_INT_ARRAY, "aclIntArray", (void **)values, n);
}

int aclsim_float_array_get(const char *api, const char *arg, const aclFloatArray *a, float **values,
                           uint64_t *n)
{
    return get_array(api, arg, a, ACLSIM_KIND_FLOAT_ARRAY, "aclFloatArray", (void **)values, n);
}

int aclsim_bool_array_get(const char *api, const char *arg, const aclBoolArray *a, bool **values,
                          uint64_t *n)
{
    return get_array(api, arg, a, ACLSIM_KIND_BOOL_ARRAY, "aclBoolArray", (void **)values, n);
}

static aclnnStatus array_size(const char *api, const void *h, aclsim_kind kind, const char *what,
                              uint64_t *size)
{
    if (!h || !size)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api,
                                h ? "size" : "array");
    void *values = NULL;
    int rc = get_array(api, "array", h, kind, what, &values, size);
    free(values);
    return rc;
}

ACLSIM_API aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size)
{
    return array_size("aclGetIntArraySize", array, ACLSIM_KIND_INT_ARRAY, "aclIntArray", size);
}

ACLSIM_API aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size)
{
    return array_size("aclGetFloatArraySize", array, ACLSIM_KIND_FLOAT_ARRAY, "aclFloatArray",
                      size);
}

ACLSIM_API aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size)
{
    return array_size("aclGetBoolArraySize", array, ACLSIM_KIND_BOOL_ARRAY, "aclBoolArray", size);
}
