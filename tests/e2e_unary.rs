//! End to end for the unary family (`tools/kcases_unary.py`): the model of case 0 of each
//! bundle (copied to `tests/models/unary` by `tools/kcases_unary.py --e2e`) compiled with
//! `include_model!`, run on that case's input and compared byte for byte with its TFLM output
//! in the bundle, so the generated calls (in-place forms included) compile and run.

mod common;

macro_rules! unary {
    ($name:ident, $file:literal) => {
        mod $name {
            kiln::include_model!($file);
        }
        #[test]
        fn $name() {
            let bundle = common::repo_root()
                .join("tests/kernel_cases")
                .join(concat!(stringify!($name), ".kcase"));
            let cases = common::parse_kcase(&std::fs::read(bundle).unwrap());
            let case = &cases[0];
            let mut m = $name::Model::take().expect("the model is taken once");
            m.reset();
            for (i, bytes) in case.inputs.iter().enumerate() {
                m.input_bytes_mut(i).copy_from_slice(bytes);
            }
            m.invoke();
            for (i, want) in case.outputs.iter().enumerate() {
                assert_eq!(m.output_bytes(i), want.as_slice(), "output {i}");
            }
        }
    };
}

unary!(abs_float32, "models/unary/abs_float32.tflite");
unary!(abs_int8, "models/unary/abs_int8.tflite");
unary!(abs_int16, "models/unary/abs_int16.tflite");
unary!(abs_int16_raw, "models/unary/abs_int16_raw.tflite");
unary!(square_float32, "models/unary/square_float32.tflite");
unary!(sqrt_float32, "models/unary/sqrt_float32.tflite");
unary!(rsqrt_float32, "models/unary/rsqrt_float32.tflite");
unary!(rsqrt_int8, "models/unary/rsqrt_int8.tflite");
unary!(sin_float32, "models/unary/sin_float32.tflite");
unary!(cos_float32, "models/unary/cos_float32.tflite");
unary!(log_float32, "models/unary/log_float32.tflite");
unary!(ceil_float32, "models/unary/ceil_float32.tflite");
unary!(floor_float32, "models/unary/floor_float32.tflite");
unary!(round_float32, "models/unary/round_float32.tflite");
unary!(exp_float32, "models/unary/exp_float32.tflite");
unary!(elu_float32, "models/unary/elu_float32.tflite");
unary!(elu_int8, "models/unary/elu_int8.tflite");
unary!(
    l2_normalization_float32,
    "models/unary/l2_normalization_float32.tflite"
);
unary!(
    l2_normalization_int8,
    "models/unary/l2_normalization_int8.tflite"
);
unary!(
    log_softmax_float32,
    "models/unary/log_softmax_float32.tflite"
);
unary!(log_softmax_int8, "models/unary/log_softmax_int8.tflite");
unary!(tanh_int16, "models/unary/tanh_int16.tflite");
unary!(logistic_int16, "models/unary/logistic_int16.tflite");
unary!(
    quantize_float32_int16,
    "models/unary/quantize_float32_int16.tflite"
);
unary!(
    quantize_int32_int8,
    "models/unary/quantize_int32_int8.tflite"
);
unary!(
    quantize_int32_int16,
    "models/unary/quantize_int32_int16.tflite"
);
unary!(dequantize_int16, "models/unary/dequantize_int16.tflite");
