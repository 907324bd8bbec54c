/* ml_linear.h -- parameters of the ai.onnx.ml linear and SVM kernels (parsed by cffi).
 *
 * Every kernel reads X ([N, F] or [F]) followed by constant tables the Python side
 * builds from the attributes (float64 weights, int64 labels); the tables' shapes
 * carry the counts.  post_transform: 0 NONE, 1 LOGISTIC, 2 SOFTMAX, 3 SOFTMAX_ZERO,
 * 4 PROBIT.  kernel_type: 0 LINEAR, 1 POLY, 2 RBF, 3 SIGMOID. */
#ifndef MLRT_ML_LINEAR_H
#define MLRT_ML_LINEAR_H
#include <stdint.h>

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
