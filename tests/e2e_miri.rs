//! End to end under Miri (`.ci/miri.sh`): small models whose generated code exercises the
//! arena, the weight statics, the slicing helpers and the kernels (convolution,
//! concatenation, in-place operators, views and concatenation slices, and the stateful SVDF
//! and LSTM with their persistent state), checked for undefined
//! behaviour and against TFLM's outputs. Golden bytes are compiled in, so no file I/O.
//! Also runs as an ordinary test.
//!
//! Covered: the int8 models; the float MLP and CNNs (float convolution, depthwise,
//! pointwise, pooling, concatenation, ADD, MEAN, fully connected, softmax, in-place and
//! aliased forms); the int16 kernels (`cnn_int16`, a 16x8 CNN: int16 convolution,
//! depthwise, ADD, LEAKY_RELU, MEAN, fully connected and softmax; the shared
//! `keyword_scrambled`: int16 -> int8 and int16 -> int32 requantization, int8 -> int16
//! softmax); and one MobileNet v1 block with the vww model's layers
//! (`mobilenet_block_int8`: depthwise, pointwise 8 -> 16, depthwise stride 2, pointwise
//! 16 -> 32, every output byte compared) at 16x16 instead of 48x48, where the block alone
//! takes Miri 6.5 minutes. `cnn_int16` and `mobilenet_block_int8` are made by
//! `tools/gen_miri_models.py`. TFLM's audio preprocessor: the Signal operators (window, FFT,
//! energies, filter bank, noise reduction with its persistent state, log).

macro_rules! check {
    ($module:ident, $file:literal, $golden:literal, [$($seed:literal),*]) => {
        mod $module {
            kiln::include_model!($file);
        }
        #[test]
        fn $module() {
            let mut m = $module::Model::take().expect("taken once");
            assert!($module::Model::take().is_none(), "a second take must fail");
            $(
                m.reset();
                m.input_bytes_mut(0).copy_from_slice(include_bytes!(concat!($golden, "/s", $seed, "_in0.bin")));
                m.invoke();
                assert_eq!(m.output_bytes(0), include_bytes!(concat!($golden, "/s", $seed, "_out0.bin")));
            )*
        }
    };
}

check!(
    hello_world_int8,
    "../../shared/models/tflm_hello_world_int8.tflite",
    "../../shared/models/golden/tflm_hello_world_int8",
    [1, 2, 3]
);
check!(
    hello_world_float,
    "../../shared/models/tflm_hello_world_float.tflite",
    "../../shared/models/golden/tflm_hello_world_float",
    [1]
);
check!(
    audio_preprocessor,
    "../../shared/models/tflm_audio_preprocessor_int8.tflite",
    "../../shared/models/golden/tflm_audio_preprocessor_int8",
    [1, 2]
);
check!(
    mlp_int8,
    "models/mlp_int8.tflite",
    "models/golden/mlp_int8",
    [1]
);
check!(
    cnn_int8,
    "models/cnn_int8.tflite",
    "models/golden/cnn_int8",
    [1]
);
check!(
    branches_int8,
    "models/branches_int8.tflite",
    "models/golden/branches_int8",
    [1]
);
check!(
    svdf_int8,
    "models/svdf_int8.tflite",
    "models/golden/svdf_int8",
    [1, 2]
);
check!(
    aliasing_int8,
    "models/aliasing_int8.tflite",
    "models/golden/aliasing_int8",
    [1]
);
check!(
    aliasing_float,
    "models/aliasing_float.tflite",
    "models/golden/aliasing_float",
    [1]
);
check!(
    depthwise_int8,
    "models/depthwise_int8.tflite",
    "models/golden/depthwise_int8",
    [1]
);
check!(
    pointwise_int8,
    "models/pointwise_int8.tflite",
    "models/golden/pointwise_int8",
    [1]
);
check!(
    lstm_int8,
    "models/lstm_int8.tflite",
    "models/golden/lstm_int8",
    [1, 2]
);
check!(
    mlp_float,
    "models/mlp_float.tflite",
    "models/golden/mlp_float",
    [1]
);
check!(
    cnn_float,
    "models/cnn_float.tflite",
    "models/golden/cnn_float",
    [1]
);
check!(
    branches_float,
    "models/branches_float.tflite",
    "models/golden/branches_float",
    [1]
);
check!(
    depthwise_float,
    "models/depthwise_float.tflite",
    "models/golden/depthwise_float",
    [1]
);
check!(
    pointwise_float,
    "models/pointwise_float.tflite",
    "models/golden/pointwise_float",
    [1]
);
check!(
    cnn_int16,
    "models/cnn_int16.tflite",
    "models/golden/cnn_int16",
    [1]
);
check!(
    keyword_scrambled,
    "../../shared/models/tflm_keyword_scrambled_int8.tflite",
    "../../shared/models/golden/tflm_keyword_scrambled_int8",
    [1]
);
check!(
    mobilenet_block_int8,
    "models/mobilenet_block_int8.tflite",
    "models/golden/mobilenet_block_int8",
    [1]
);
