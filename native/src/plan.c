/* plan.c -- a whole partition as one native call.
 *
 * mlrt_plan_create deep-copies the node records (descriptors, slots, parameter
 * blocks, names) so the caller's buffers may be freed.  mlrt_plan_run binds each
 * descriptor's data pointer from its slot (arena or external pointer) and runs the
 * kernels in order; the plan itself is never written, so many threads may run one
 * plan at once, each with its own arena. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

typedef struct plan_node {
    int32_t kernel;
    int32_t n_inputs, n_outputs;
    mlrt_tensor *inputs, *outputs;
    mlrt_slot *input_slots, *output_slots;
    void *params;
    size_t params_size;
    char *name;
} plan_node;

struct mlrt_plan {
    int32_t n_nodes;
    int32_t n_external;
    size_t arena_bytes;
    int32_t max_inputs, max_outputs;
    plan_node *nodes;
};

static void *dup_bytes(const void *src, size_t n) {
    void *dst = malloc(n ? n : 1);
    if (dst && n) memcpy(dst, src, n);
    return dst;
}

/* Bytes a strided view reaches past its start: 1 + sum((shape[d]-1) * stride[d])
 * elements (0 if empty).  Strides are never negative in a plan. */
static int view_extent(const mlrt_tensor *t, size_t *bytes) {
    int64_t last = 0;
    for (int32_t d = 0; d < t->rank; ++d) {
        if (t->shape[d] == 0) { *bytes = 0; return 1; }
        if (t->strides[d] < 0) return 0;
        if (t->shape[d] > 1 && t->strides[d] > (INT64_MAX - last) / (t->shape[d] - 1)) return 0;
        last += (t->shape[d] - 1) * t->strides[d];
    }
    size_t elem = mlrt_dtype_size(t->dtype);
    if ((uint64_t)last + 1 > SIZE_MAX / (elem ? elem : 1)) return 0;
    *bytes = (size_t)(last + 1) * elem;
    return 1;
}

static int check_slot(const mlrt_slot *s, int32_t n_external, size_t arena_bytes, const mlrt_tensor *t) {
    if (s->base < -1 || s->base > n_external) return 0;
    if (s->base == 0) {
        size_t bytes;
        if (!view_extent(t, &bytes)) return 0;
        if (s->offset < 0 || (size_t)s->offset > arena_bytes || bytes > arena_bytes - (size_t)s->offset) return 0;
    }
    return 1;
}

void mlrt_plan_destroy(mlrt_plan *plan) {
    if (!plan) return;
    for (int32_t i = 0; i < plan->n_nodes; ++i) {
        plan_node *n = &plan->nodes[i];
        free(n->inputs); free(n->outputs); free(n->input_slots); free(n->output_slots);
        free(n->params); free(n->name);
    }
    free(plan->nodes);
    free(plan);
}

mlrt_plan *mlrt_plan_create(const mlrt_node_record *records, int32_t n_nodes, int32_t n_external, size_t arena_bytes) {
    if (n_nodes < 0 || n_external < 0 || (n_nodes && !records)) {
        mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "plan: bad node list");
        return NULL;
    }
    mlrt_plan *plan = calloc(1, sizeof *plan);
    if (!plan || !(plan->nodes = calloc((size_t)(n_nodes ? n_nodes : 1), sizeof *plan->nodes))) {
        free(plan);
        mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "plan: out of memory");
        return NULL;
    }
    plan->n_external = n_external;
    plan->arena_bytes = arena_bytes;
    for (int32_t i = 0; i < n_nodes; ++i) {
        const mlrt_node_record *r = &records[i];
        plan_node *n = &plan->nodes[i];
        plan->n_nodes = i + 1;
        const char *name = r->name ? r->name : "";
        if (!mlrt_kernel_get(r->kernel) || r->n_inputs < 0 || r->n_outputs < 0) {
            mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "plan: node %d ('%s') has no valid kernel", i, name);
            goto fail;
        }
        n->kernel = r->kernel;
        n->n_inputs = r->n_inputs;
        n->n_outputs = r->n_outputs;
        n->inputs = dup_bytes(r->inputs, (size_t)r->n_inputs * sizeof(mlrt_tensor));
        n->outputs = dup_bytes(r->outputs, (size_t)r->n_outputs * sizeof(mlrt_tensor));
        n->input_slots = dup_bytes(r->input_slots, (size_t)r->n_inputs * sizeof(mlrt_slot));
        n->output_slots = dup_bytes(r->output_slots, (size_t)r->n_outputs * sizeof(mlrt_slot));
        n->params = r->params_size ? dup_bytes(r->params, r->params_size) : NULL;
        n->params_size = r->params_size;
        n->name = dup_bytes(name, strlen(name) + 1);
        if (!n->inputs || !n->outputs || !n->input_slots || !n->output_slots || !n->name ||
            (r->params_size && !n->params)) {
            mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "plan: out of memory");
            goto fail;
        }
        for (int32_t k = 0; k < n->n_inputs + n->n_outputs; ++k) {
            const mlrt_tensor *t = k < n->n_inputs ? &n->inputs[k] : &n->outputs[k - n->n_inputs];
            const mlrt_slot *s = k < n->n_inputs ? &n->input_slots[k] : &n->output_slots[k - n->n_inputs];
            int bad = t->rank < 0 || t->rank > MLRT_MAX_RANK;
            for (int32_t d = 0; !bad && d < t->rank; ++d) bad = t->shape[d] < 0;
            if (bad || !check_slot(s, n_external, arena_bytes, t)) {
                mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "plan: node %d ('%s') has a bad tensor or slot", i, name);
                goto fail;
            }
        }
        if (n->n_inputs > plan->max_inputs) plan->max_inputs = n->n_inputs;
        if (n->n_outputs > plan->max_outputs) plan->max_outputs = n->n_outputs;
    }
    return plan;
fail:
    mlrt_plan_destroy(plan);
    return NULL;
}

size_t mlrt_plan_arena_bytes(const mlrt_plan *plan) { return plan ? plan->arena_bytes : 0; }

static void *slot_address(const mlrt_slot *s, void *const *external, char *arena) {
    if (s->base < 0) return NULL;
    if (s->base == 0) return arena + s->offset;
    char *base = external[s->base - 1];
    return base ? base + s->offset : NULL;
}

int32_t mlrt_plan_node_count(const mlrt_plan *plan) { return plan ? plan->n_nodes : 0; }

int mlrt_plan_run(const mlrt_plan *plan, mlrt_threadpool *pool, void *const *external, void *arena) {
    return mlrt_plan_run_timed(plan, pool, external, arena, NULL);
}

int mlrt_plan_run_timed(const mlrt_plan *plan, mlrt_threadpool *pool, void *const *external, void *arena,
                        int64_t *times_ns) {
    return mlrt_plan_run_flagged(plan, pool, external, arena, times_ns, NULL);
}

/* The terminate flag, set by another thread: an atomic load (relaxed: it orders nothing). */
static int terminated(const volatile int32_t *terminate) {
    return terminate && __atomic_load_n(terminate, __ATOMIC_RELAXED) != 0;
}

static int fail_terminated(void) {
    return mlrt_fail(MLRT_ERR_TERMINATED, "run terminated: RunOptions.terminate was set");
}

/* The path the kernel running on this thread noted (mlrt_note_path), NULL if none. */
static _Thread_local const char *noted_path;

void mlrt_note_path(const char *path) { noted_path = path; }

static int run_nodes(const mlrt_plan *plan, mlrt_threadpool *pool, void *const *external, void *arena,
                     int64_t *times_ns, const char **paths, const volatile int32_t *terminate);

int mlrt_plan_run_flagged(const mlrt_plan *plan, mlrt_threadpool *pool, void *const *external, void *arena,
                          int64_t *times_ns, const volatile int32_t *terminate) {
    return run_nodes(plan, pool, external, arena, times_ns, NULL, terminate);
}

int mlrt_plan_run_profiled(const mlrt_plan *plan, mlrt_threadpool *pool, void *const *external, void *arena,
                           int64_t *times_ns, const char **paths, const volatile int32_t *terminate) {
    return run_nodes(plan, pool, external, arena, times_ns, paths, terminate);
}

static int run_nodes(const mlrt_plan *plan, mlrt_threadpool *pool, void *const *external, void *arena,
                     int64_t *times_ns, const char **paths, const volatile int32_t *terminate) {
    if (!plan) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "plan: NULL plan");
    if (plan->n_external && !external) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "plan: external pointers missing");
    void *own_arena = NULL;
    if (!arena && plan->arena_bytes) {
        own_arena = mlrt_aligned_alloc(64, plan->arena_bytes);
        if (!own_arena) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "plan: cannot allocate a %zu-byte arena", plan->arena_bytes);
        arena = own_arena;
    }
    mlrt_tensor *ins = malloc(sizeof(mlrt_tensor) * (size_t)(plan->max_inputs + 1));
    mlrt_tensor *outs = malloc(sizeof(mlrt_tensor) * (size_t)(plan->max_outputs + 1));
    int status = MLRT_OK;
    if (!ins || !outs) status = mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "plan: out of memory");
    mlrt_context ctx = {pool};
    mlrt_clear_error();
    mlrt_threadpool_hold(pool, 1);
    for (int32_t i = 0; status == MLRT_OK && i < plan->n_nodes; ++i) {
        if (terminated(terminate)) {
            status = fail_terminated();
            break;
        }
        const plan_node *n = &plan->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; ++k) {
            ins[k] = n->inputs[k];
            ins[k].data = slot_address(&n->input_slots[k], external, arena);
            if (n->input_slots[k].base < 0) ins[k].dtype = MLRT_UNDEFINED;
        }
        for (int32_t k = 0; k < n->n_outputs; ++k) {
            outs[k] = n->outputs[k];
            outs[k].data = slot_address(&n->output_slots[k], external, arena);
            if (n->output_slots[k].base < 0) outs[k].dtype = MLRT_UNDEFINED;
        }
        const mlrt_kernel_def *k = mlrt_kernel_get(n->kernel);
        if (times_ns) times_ns[2 * i] = mlrt_now_ns();
        noted_path = NULL;
        status = k->run(&ctx, ins, n->n_inputs, outs, n->n_outputs, n->params, n->params_size);
        if (times_ns) times_ns[2 * i + 1] = mlrt_now_ns();
        if (paths) paths[i] = noted_path;
        if (status != MLRT_OK) mlrt_error_prefix("node '%s' (%s): ", n->name, k->op_type);
    }
    mlrt_threadpool_hold(pool, -1);
    free(ins);
    free(outs);
    mlrt_aligned_free(own_arena);
    return status;
}

/* An external index the loop may bind: in range, and (unless `may_be_null`) bound. */
static int loop_index_ok(const mlrt_plan *plan, void **external, int32_t i, int may_be_null) {
    return i >= 0 && i < plan->n_external && (may_be_null || external[i] != NULL);
}

int mlrt_plan_run_loop(const mlrt_plan *plan, mlrt_threadpool *pool, void **external, void *arena,
                       mlrt_loop *loop) {
    if (!plan || !loop) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "loop: NULL plan or loop");
    loop->done = 0;
    loop->stopped = 0;
    MLRT_CHECK(external && loop->iterations >= 0 && loop->n_carried >= 0 && loop->n_scan >= 0,
               "loop: bad iteration count, counts or externals");
    MLRT_CHECK((loop->index_input == -1 || loop_index_ok(plan, external, loop->index_input, 0)) &&
                   (loop->cond_input == -1 || loop_index_ok(plan, external, loop->cond_input, 0)) &&
                   (loop->cond_output == -1 || loop_index_ok(plan, external, loop->cond_output, 0)),
               "loop: bad iteration-number or condition slot");
    MLRT_CHECK(loop->n_scan_inputs >= 0, "loop: bad scan input count");
    for (int32_t s = 0; s < loop->n_scan_inputs; ++s)
        MLRT_CHECK(loop_index_ok(plan, external, loop->scan_inputs[s], 1) && loop->scan_inputs_at[s] &&
                       (loop->iterations == 0 || loop->scan_input_bytes[s] <= SIZE_MAX / (size_t)loop->iterations),
                   "loop: bad slot or buffer for scan input %d", s);
    for (int32_t c = 0; c < loop->n_carried; ++c)
        MLRT_CHECK(loop_index_ok(plan, external, loop->carried_inputs[c], 0) &&
                       loop_index_ok(plan, external, loop->carried_outputs[c], 0),
                   "loop: bad slot for loop-carried value %d", c);
    for (int32_t s = 0; s < loop->n_scan; ++s)
        MLRT_CHECK(loop_index_ok(plan, external, loop->scan_outputs[s], 1) && loop->scan_buffers[s] &&
                       (loop->iterations == 0 || loop->scan_bytes[s] <= SIZE_MAX / (size_t)loop->iterations),
                   "loop: bad slot or buffer for scan output %d", s);
    int status = MLRT_OK;
    mlrt_threadpool_hold(pool, 1);
    for (int64_t k = 0; k < loop->iterations; ++k) {
        if (terminated(loop->terminate)) {
            status = fail_terminated();
            break;
        }
        if (loop->index_input >= 0) *(int64_t *)external[loop->index_input] = loop->first_index + k;
        if (loop->cond_input >= 0) *(bool *)external[loop->cond_input] = true;
        for (int32_t s = 0; s < loop->n_scan_inputs; ++s)
            external[loop->scan_inputs[s]] = (char *)loop->scan_inputs_at[s] + (size_t)k * loop->scan_input_bytes[s];
        for (int32_t s = 0; s < loop->n_scan; ++s)
            external[loop->scan_outputs[s]] = (char *)loop->scan_buffers[s] + (size_t)k * loop->scan_bytes[s];
        status = mlrt_plan_run_flagged(plan, pool, external, arena, NULL, loop->terminate);
        if (status != MLRT_OK) break;
        loop->done = k + 1;
        for (int32_t c = 0; c < loop->n_carried; ++c) {
            void *t = external[loop->carried_inputs[c]];
            external[loop->carried_inputs[c]] = external[loop->carried_outputs[c]];
            external[loop->carried_outputs[c]] = t;
        }
        if (loop->cond_output >= 0 && !*(const bool *)external[loop->cond_output]) {
            loop->stopped = 1;
            break;
        }
    }
    mlrt_threadpool_hold(pool, -1);
    return status;
}
