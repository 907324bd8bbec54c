/* registry.c -- the kernel table, gathered from the list that every kernel file's
 * MLRT_KERNEL constructors link into when the library loads, sorted so that the
 * order never depends on how the files were linked or which constructor ran first. */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

/* filled by the constructors, which run one at a time before any other code of the
 * library can (so with no lock), read once by build_table */
static mlrt_kernel_link *registered;

void mlrt_kernel_register(mlrt_kernel_link *link) {
    link->next = registered;
    registered = link;
}

static const mlrt_kernel_def **table;
static int32_t table_size;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static int compare_defs(const void *pa, const void *pb) {
    const mlrt_kernel_def *a = *(const mlrt_kernel_def *const *)pa;
    const mlrt_kernel_def *b = *(const mlrt_kernel_def *const *)pb;
    int c = strcmp(a->domain, b->domain);
    if (c == 0) c = strcmp(a->op_type, b->op_type);
    if (c == 0) c = (a->since_version > b->since_version) - (a->since_version < b->since_version);
    if (c == 0) c = (a->type_mask > b->type_mask) - (a->type_mask < b->type_mask);
    if (c == 0) c = (a->until_version > b->until_version) - (a->until_version < b->until_version);
    return c;
}

static void build_table(void) {
    size_t n = 0;
    for (const mlrt_kernel_link *l = registered; l; l = l->next) ++n;
    table = malloc((n ? n : 1) * sizeof *table);
    if (!table) return;
    size_t i = 0;
    for (const mlrt_kernel_link *l = registered; l; l = l->next) table[i++] = l->def;
    qsort(table, n, sizeof *table, compare_defs);
    table_size = (int32_t)n;
}

int32_t mlrt_kernel_count(void) {
    pthread_once(&table_once, build_table);
    return table_size;
}

const mlrt_kernel_def *mlrt_kernel_get(int32_t index) {
    if (index < 0 || index >= mlrt_kernel_count()) return NULL;
    return table[index];
}

int32_t mlrt_kernel_find(const char *domain, const char *op_type, int32_t opset, int32_t dtype) {
    int32_t n = mlrt_kernel_count();
    if (!domain || !op_type) return -1;
    if (strcmp(domain, "ai.onnx") == 0) domain = "";
    for (int32_t i = 0; i < n; ++i) {
        const mlrt_kernel_def *k = table[i];
        if (strcmp(k->op_type, op_type) != 0 || strcmp(k->domain, domain) != 0) continue;
        if (opset < k->since_version || opset > k->until_version) continue;
        if (dtype >= 0 && dtype < 64 && !(k->type_mask & MLRT_BIT(dtype))) continue;
        return i;
    }
    return -1;
}

int mlrt_kernel_run(int32_t kernel, mlrt_threadpool *pool, const mlrt_tensor *inputs, int32_t n_inputs,
                    mlrt_tensor *outputs, int32_t n_outputs, const void *params, size_t params_size) {
    const mlrt_kernel_def *k = mlrt_kernel_get(kernel);
    if (!k) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "no kernel with index %d", kernel);
    if (n_inputs < 0 || n_outputs < 0 || (n_inputs && !inputs) || (n_outputs && !outputs))
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "%s: bad tensor lists", k->op_type);
    for (int32_t i = 0; i < n_inputs + n_outputs; ++i) {
        const mlrt_tensor *t = i < n_inputs ? &inputs[i] : &outputs[i - n_inputs];
        if (t->rank < 0 || t->rank > MLRT_MAX_RANK)
            return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "%s: rank %d out of range", k->op_type, t->rank);
        for (int32_t d = 0; d < t->rank; ++d)
            if (t->shape[d] < 0)
                return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "%s: negative dimension", k->op_type);
    }
    mlrt_context ctx = {pool};
    mlrt_clear_error();
    return k->run(&ctx, inputs, n_inputs, outputs, n_outputs, params, params_size);
}
