/* ms_attention.h -- parameters of the com.microsoft attention family and
 * EmbedLayerNormalization (ms_attention.c; parsed by cffi). */
#ifndef MLRT_MS_ATTENTION_H
#define MLRT_MS_ATTENTION_H
#include <stdint.h>

/* RotaryEmbedding (com.microsoft): the input arrives as a [batch, seq, heads, head_size]
 * view, the caches as [positions, rotary_dim / 2] tables; position_ids is a [batch, seq]
 * int64 view, or (offset_form) one start position p giving rows p, p + 1, ... */
typedef struct mlrt_ms_rotary_params {
    int64_t rotary_dim;
    int64_t interleaved;
    int64_t offset_form;
} mlrt_ms_rotary_params;

/* How mask_index reads (enum mlrt_ms_mask). */
enum mlrt_ms_mask {
    MLRT_MS_MASK_NONE = 0,
    MLRT_MS_MASK_END = 1,        /* [batch]: keys at or past end[b] are masked */
    MLRT_MS_MASK_END_START = 2,  /* [2 * batch]: end[b] then start[b]; keys before start masked too */
    MLRT_MS_MASK_RAW_2D = 3,     /* [batch, total]: 1 attend, 0 masked */
    MLRT_MS_MASK_RAW_3D = 4      /* [batch, q_len, total] */
};

/* Attention, MultiHeadAttention and GroupQueryAttention.  Sizes are resolved by the
 * Python semantics; the kernel checks them against the tensors it gets.  Masked
 * scores get mask_filter_value added (Attention / MultiHeadAttention) as onnxruntime
 * does, or are dropped (GroupQueryAttention). */
typedef struct mlrt_ms_attention_params {
    int64_t batch;
    int64_t q_len;
    int64_t kv_len;          /* new keys and values */
    int64_t past_len;        /* cached ones (past / past_key) */
    int64_t heads;
    int64_t kv_heads;
    int64_t head_size;
    int64_t v_head_size;
    int64_t in_hidden;       /* Attention: input's hidden size (the projection's K) */
    int64_t mask_kind;       /* enum mlrt_ms_mask */
    int64_t unidirectional;
    int64_t local_window;    /* GroupQueryAttention: -1 none */
    int64_t rotary;          /* GroupQueryAttention do_rotary (cos_cache, sin_cache: inputs 7, 8) */
    int64_t rotary_interleaved;
    int64_t present_len;     /* GroupQueryAttention: present rows, max(total_sequence_length, past) */
    int64_t first_prompt;    /* GroupQueryAttention: q_len == total_sequence_length (no past is read) */
    double scale;
    double mask_filter_value;
    double softcap;
} mlrt_ms_attention_params;

/* EmbedLayerNormalization: input_ids / segment_ids [batch, seq] int32 (position_ids
 * [batch or 1, seq] when has_position_ids), tables [rows, hidden], gamma / beta [hidden]. */
typedef struct mlrt_ms_embed_ln_params {
    int64_t has_position_ids;
    double epsilon;
} mlrt_ms_embed_ln_params;

#endif
