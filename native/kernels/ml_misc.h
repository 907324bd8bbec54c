/* ml_misc.h -- parameters of the small ai.onnx.ml kernels (parsed by cffi):
 * Normalizer, Binarizer, Scaler, Imputer, ArrayFeatureExtractor, FeatureVectorizer. */
#ifndef MLRT_ML_MISC_H
#define MLRT_ML_MISC_H
#include <stdint.h>

/* post_transform of the linear, SVM and tree kernels (applied by ml_misc.c) */
enum mlrt_ml_transform {
    MLRT_ML_TRANSFORM_NONE = 0,
    MLRT_ML_TRANSFORM_LOGISTIC = 1,
    MLRT_ML_TRANSFORM_SOFTMAX = 2,
    MLRT_ML_TRANSFORM_SOFTMAX_ZERO = 3,
    MLRT_ML_TRANSFORM_PROBIT = 4
};

/* Normalizer's norm */
enum mlrt_ml_norm {
    MLRT_ML_NORM_MAX = 0,
    MLRT_ML_NORM_L1 = 1,
    MLRT_ML_NORM_L2 = 2
};

/* Normalizer over each row of an [N, C] input: norm is an enum mlrt_ml_norm. */
typedef struct mlrt_ml_normalizer_params {
    int64_t norm;
} mlrt_ml_normalizer_params;

/* Binarizer: y = x > threshold ? 1 : 0 (NaN gives 0). */
typedef struct mlrt_ml_binarizer_params {
    double threshold;
} mlrt_ml_binarizer_params;

/* Imputer: elements equal to replaced_value (or NaN when replace_nan) take the
 * imputed value of their column (input 1 holds one value per column, or one). */
typedef struct mlrt_ml_imputer_params {
    double replaced_value;
    int64_t replaced_int;
    int64_t replace_nan;
} mlrt_ml_imputer_params;

/* FeatureVectorizer: input i is [N, C_i] (or [C_i]); its first dims[i] columns go to
 * the output (zeros where C_i < dims[i]), inputs side by side. */
typedef struct mlrt_ml_feature_vectorizer_params {
    int64_t n_inputs;
    int64_t dims[256];
} mlrt_ml_feature_vectorizer_params;

#endif
