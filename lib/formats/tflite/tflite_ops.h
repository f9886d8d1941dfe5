/* tflite_ops.h - TFLite builtin operator names. */
#ifndef MF_TFLITE_OPS_H
#define MF_TFLITE_OPS_H
#include <stddef.h>
#include <stdint.h>
/* "CONV_2D" for 3; NULL when the code is not one mfmt knows. */
const char *mf_tflite_op_name(int32_t code);
#endif
