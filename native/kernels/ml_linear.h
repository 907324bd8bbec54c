/* ml_linear.h -- parameters of the ai.onnx.ml linear and SVM kernels (parsed by cffi).
 *
 * Every kernel reads X ([N, F] or [F]) followed by constant tables the Python side
 * builds from the attributes (float64 weights, int64 labels); the tables' shapes
 * carry the counts.  post_transform: enum mlrt_ml_transform (ml_misc.h).
 * kernel_type: enum mlrt_ml_svm_kernel. */
#ifndef MLRT_ML_LINEAR_H
#define MLRT_ML_LINEAR_H
#include <stdint.h>

/* kernel_type of the SVM kernels */
enum mlrt_ml_svm_kernel {
    MLRT_ML_SVM_LINEAR = 0,
    MLRT_ML_SVM_POLY = 1,
    MLRT_ML_SVM_RBF = 2,
    MLRT_ML_SVM_SIGMOID = 3
};

/* LinearRegressor: X, coefficients [T, F], intercepts [T] -> Y [N, T]. */
typedef struct mlrt_ml_linear_regressor_params {
    int64_t post_transform;
} mlrt_ml_linear_regressor_params;

/* LinearClassifier: X, coefficients [K, F], intercepts [K], labels [C] -> Y [N], Z [N, K]
 * (Z [N, 2] when K == 1 and C == 2: add_second_class). */
typedef struct mlrt_ml_linear_classifier_params {
    int64_t post_transform;
    int64_t add_second_class;
} mlrt_ml_linear_classifier_params;

/* SVMRegressor: X, support vectors [V, F] (V = 0: linear in the coefficients),
 * coefficients [V] (or [F]), rho [1] -> Y [N, 1]. */
typedef struct mlrt_ml_svm_regressor_params {
    int64_t kernel_type;
    double gamma;
    double coef0;
    double degree;
    int64_t one_class;
    int64_t post_transform;
} mlrt_ml_svm_regressor_params;

/* SVMClassifier: X, support vectors [V, F], coefficients, rho, prob_a [P], prob_b [P],
 * vectors_per_class [C] (empty in linear mode), labels [C] -> Y [N], Z [N, S]. */
typedef struct mlrt_ml_svm_classifier_params {
    int64_t kernel_type;
    double gamma;
    double coef0;
    double degree;
    int64_t post_transform;
    int64_t weights_are_all_positive;
} mlrt_ml_svm_classifier_params;

#endif
