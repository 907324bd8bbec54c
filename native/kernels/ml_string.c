/* ml_string.c -- ai.onnx.ml lookups of each element in a table of keys made once from
 * the attributes: OneHotEncoder (strings or numbers -> one-hot rows), LabelEncoder and
 * CategoryMapper (strings -> numbers: int64, float, any fixed-size type).
 *
 * A string tensor comes as an mlrt_strings (include/mlrt.h): UTF-32 code points, each
 * element `width` of them, zeros after its end.  The keys are sorted rows of the same
 * layout (numpy's sort of a 'U' array: code point by code point, a shorter string
 * first), so an element is found by binary search comparing code points, a key and an
 * element of different widths read as zero past their ends.  Keys never end in U+0000
 * (Python keeps such tables on the host), so equal rows are equal strings. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "ml_string.h"

/* <0, 0, >0 as string a (width wa) sorts before, with or after b (width wb) */
static int utf32_compare(const uint32_t *a, int64_t wa, const uint32_t *b, int64_t wb) {
    int64_t w = wa < wb ? wa : wb;
    for (int64_t k = 0; k < w; ++k)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    for (int64_t k = w; k < wa; ++k) /* past b's end: b reads as zeros */
        if (a[k]) return 1;
    for (int64_t k = w; k < wb; ++k)
        if (b[k]) return -1;
    return 0;
}

/* index of x among the n sorted keys (rows of wk code points), -1 if none */
static int64_t find_string(const uint32_t *keys, int64_t n, int64_t wk, const uint32_t *x, int64_t wx) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = utf32_compare(keys + mid * wk, wk, x, wx);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

static int64_t find_int(const int64_t *keys, int64_t n, int64_t v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] == v) return mid;
        if (keys[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* X as strings: its mlrt_strings, checked against X's element count */
static int string_input(const mlrt_tensor *x, const char *op, const mlrt_strings **s) {
    MLRT_CHECK(x->dtype == MLRT_STRING && x->data, "%s: X must be a string tensor", op);
    *s = x->data;
    MLRT_CHECK((*s)->width >= 0 && ((*s)->chars || !(*s)->width || !mlrt_numel(x)),
               "%s: X's strings have a bad width or no code points", op);
    return MLRT_OK;
}

/* the keys table: uint32 [n, width] rows (string X) */
static int string_keys(const mlrt_tensor *k, const char *op) {
    MLRT_CHECK(k->dtype == MLRT_UINT32 && k->rank == 2 && mlrt_is_contiguous(k),
               "%s: the keys must be uint32 [n, width] code points", op);
    return MLRT_OK;
}

/* the elements looked up: X's, or X's elements numbers[i] (an optional int64 input):
 * their count in *n, the numbers (or NULL) in *pick, each checked to be one of X's */
static int picked(const mlrt_tensor *x, const mlrt_tensor *in, int32_t n_in, int32_t first, const char *op,
                  int64_t *n, const int64_t **pick) {
    *n = mlrt_numel(x), *pick = NULL;
    if (n_in == first) return MLRT_OK;
    const mlrt_tensor *numbers = &in[first];
    MLRT_CHECK(n_in == first + 1 && numbers->dtype == MLRT_INT64 && mlrt_is_contiguous(numbers),
               "%s: the element numbers must be one contiguous int64 tensor", op);
    int64_t total = *n;
    *n = mlrt_numel(numbers), *pick = numbers->data;
    for (int64_t i = 0; i < *n; ++i)
        MLRT_CHECK((*pick)[i] >= 0 && (*pick)[i] < total, "%s: element number %lld is not one of X's %lld", op,
                   (long long)(*pick)[i], (long long)total);
    return MLRT_OK;
}

/* the key index of element i of X, -1 if X holds no key there */
static int64_t key_of(const mlrt_tensor *x, const mlrt_strings *s, const mlrt_tensor *keys, int64_t i) {
    int64_t n = keys->shape[0];
    if (s) return find_string(keys->data, n, keys->shape[1], s->chars + i * s->width, s->width);
    const int64_t *k = keys->data;
    switch (x->dtype) {
    case MLRT_INT64: return find_int(k, n, ((const int64_t *)x->data)[i]);
    case MLRT_INT32: return find_int(k, n, ((const int32_t *)x->data)[i]);
    default: { /* floats: truncated, as the spec says; none that does not fit an int64 */
        double v = x->dtype == MLRT_FLOAT ? ((const float *)x->data)[i] : ((const double *)x->data)[i];
        if (!(fabs(v) < 9223372036854775808.0)) return -1; /* NaN, inf, |v| >= 2^63 */
        return find_int(k, n, (int64_t)v);
    }
    }
}

/* ---- OneHotEncoder ------------------------------------------------------------------------- */

static int onehot_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_onehot_params, p, params, params_size);
    MLRT_CHECK((n_in == 3 || n_in == 4) && n_out == 1, "OneHotEncoder takes X, the keys and their columns");
    const mlrt_tensor *x = &in[0], *keys = &in[1], *cols = &in[2], *y = &out[0];
    const mlrt_strings *s = NULL;
    const int64_t *pick;
    int64_t n;
    int status = picked(x, in, n_in, 3, "OneHotEncoder", &n, &pick);
    if (status) return status;
    if (x->dtype == MLRT_STRING) {
        status = string_input(x, "OneHotEncoder", &s);
        if (!status) status = string_keys(keys, "OneHotEncoder");
        if (status) return status;
    } else {
        MLRT_CHECK(x->dtype == MLRT_INT64 || x->dtype == MLRT_INT32 || x->dtype == MLRT_FLOAT ||
                       x->dtype == MLRT_DOUBLE, "OneHotEncoder: X must be string, int64, int32, float or double");
        MLRT_CHECK(mlrt_is_contiguous(x), "OneHotEncoder: X must be contiguous");
        MLRT_CHECK(keys->dtype == MLRT_INT64 && keys->rank == 1, "OneHotEncoder: numeric keys must be int64 [n]");
    }
    MLRT_CHECK(cols->dtype == MLRT_INT64 && cols->rank == 1 && cols->shape[0] == keys->shape[0],
               "OneHotEncoder: one int64 column per key");
    int64_t cats = y->rank ? y->shape[y->rank - 1] : 0;
    MLRT_CHECK(y->dtype == MLRT_FLOAT && y->rank == (pick ? in[3].rank : x->rank) + 1 && mlrt_is_contiguous(y) &&
                   mlrt_numel(y) == n * cats,
               "OneHotEncoder: Y must be float32 X.shape + [categories]");
    const int64_t *col = cols->data;
    for (int64_t k = 0; k < cols->shape[0]; ++k)
        MLRT_CHECK(col[k] >= 0 && col[k] < cats, "OneHotEncoder: key %lld has column %lld of %lld", (long long)k,
                   (long long)col[k], (long long)cats);
    float *o = y->data;
    memset(o, 0, (size_t)(n * cats) * sizeof(float));
    for (int64_t i = 0; i < n; ++i) {
        int64_t k = key_of(x, s, keys, pick ? pick[i] : i);
        if (k >= 0) o[i * cats + col[k]] = 1.0f;
        else if (!p->zeros)
            return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "OneHotEncoder: element %lld of X is in no category and zeros=0",
                             (long long)i);
    }
    return MLRT_OK;
}

MLRT_KERNEL(ml_onehot, "OneHotEncoder", "ai.onnx.ml", 1, MLRT_OPSET_MAX,
            MLRT_BIT(MLRT_STRING) | MLRT_BIT(MLRT_INT64) | MLRT_BIT(MLRT_INT32) | MLRT_MASK_FLOATS, onehot_run);

/* ---- LabelEncoder, CategoryMapper: strings -> values ---------------------------------------- */

static int lookup_run(const char *op, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out) {
    MLRT_CHECK((n_in == 3 || n_in == 4) && n_out == 1, "%s takes X, the keys and the values", op);
    const mlrt_tensor *x = &in[0], *keys = &in[1], *values = &in[2], *y = &out[0];
    const mlrt_strings *s = NULL;
    const int64_t *pick;
    int64_t n;
    int status = string_input(x, op, &s);
    if (!status) status = string_keys(keys, op);
    if (!status) status = picked(x, in, n_in, 3, op, &n, &pick);
    if (status) return status;
    size_t es = mlrt_dtype_size(y->dtype);
    int64_t nk = keys->shape[0];
    MLRT_CHECK(es && values->dtype == y->dtype && values->rank == 1 && values->shape[0] == nk + 1,
               "%s: the values must be %lld elements of Y's type (one per key, then the default)", op,
               (long long)(nk + 1));
    MLRT_CHECK(mlrt_is_contiguous(y) && mlrt_numel(y) == n, "%s: Y must be contiguous, of X's size", op);
    const char *v = values->data;
    char *o = y->data;
    for (int64_t i = 0; i < n; ++i) {
        int64_t k = key_of(x, s, keys, pick ? pick[i] : i);
        memcpy(o + (size_t)i * es, v + (size_t)(k < 0 ? nk : k) * es, es);
    }
    return MLRT_OK;
}

static int label_encoder_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                             int32_t n_out, const void *params, size_t params_size) {
    return lookup_run("LabelEncoder", in, n_in, out, n_out);
}

static int category_mapper_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                               int32_t n_out, const void *params, size_t params_size) {
    return lookup_run("CategoryMapper", in, n_in, out, n_out);
}

MLRT_KERNEL(ml_label_encoder, "LabelEncoder", "ai.onnx.ml", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_STRING),
            label_encoder_run);
MLRT_KERNEL(ml_category_mapper, "CategoryMapper", "ai.onnx.ml", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_STRING),
            category_mapper_run);
