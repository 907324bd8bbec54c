/* ml_string.h -- parameters of the ai.onnx.ml lookups of ml_string.c (parsed by cffi):
 * OneHotEncoder, and LabelEncoder / CategoryMapper from strings to numbers. */
#ifndef MLRT_ML_STRING_H
#define MLRT_ML_STRING_H
#include <stdint.h>

/* OneHotEncoder: inputs X (string, int64, int32, float, double), the keys (string X: the
 * categories as UTF-32 rows, uint32 [n, width], in code point order; numeric X: int64
 * [n], ascending; each once) and the output column of each key (int64 [n]); Y float32
 * X.shape + [categories].  An element in no category gives a row of zeros (zeros = 1)
 * or an error (zeros = 0).
 * Every lookup may take one more input, int64 `numbers`: the elements looked up are then
 * X's elements numbers[i], in numbers' shape (a plan's data movement on strings, done
 * ahead on their numbers: X is the string input they came from). */
typedef struct mlrt_ml_onehot_params {
    int64_t zeros;
} mlrt_ml_onehot_params;

/* LabelEncoder and CategoryMapper on a string X take no parameters: inputs X (string),
 * the keys (uint32 [n, width], as above) and the values (n + 1 elements of Y's type:
 * the value of each key, then the default for an element that is no key), and maybe
 * the numbers; Y has X's shape (numbers' shape). */

#endif
