//! TensorFlow Lite's builtin operator codes and names, as numbered by the format.

pub const ADD: i32 = 0;
pub const AVERAGE_POOL_2D: i32 = 1;
pub const CONCATENATION: i32 = 2;
pub const CONV_2D: i32 = 3;
pub const DEPTHWISE_CONV_2D: i32 = 4;
pub const DEPTH_TO_SPACE: i32 = 5;
pub const DEQUANTIZE: i32 = 6;
pub const FULLY_CONNECTED: i32 = 9;
pub const L2_NORMALIZATION: i32 = 11;
pub const L2_POOL_2D: i32 = 12;
pub const LOGISTIC: i32 = 14;
pub const MAX_POOL_2D: i32 = 17;
pub const MUL: i32 = 18;
pub const RELU: i32 = 19;
pub const RELU6: i32 = 21;
pub const RESHAPE: i32 = 22;
pub const RESIZE_BILINEAR: i32 = 23;
pub const SOFTMAX: i32 = 25;
pub const SPACE_TO_DEPTH: i32 = 26;
pub const SVDF: i32 = 27;
pub const TANH: i32 = 28;
pub const CUSTOM: i32 = 32;
pub const PAD: i32 = 34;
pub const GATHER: i32 = 36;
pub const TRANSPOSE: i32 = 39;
pub const MEAN: i32 = 40;
pub const SUB: i32 = 41;
pub const DIV: i32 = 42;
pub const SQUEEZE: i32 = 43;
pub const UNIDIRECTIONAL_SEQUENCE_LSTM: i32 = 44;
pub const STRIDED_SLICE: i32 = 45;
pub const SPLIT: i32 = 49;
pub const CAST: i32 = 53;
pub const MAXIMUM: i32 = 55;
pub const MINIMUM: i32 = 57;
pub const PADV2: i32 = 60;
pub const TRANSPOSE_CONV: i32 = 67;
pub const EXPAND_DIMS: i32 = 70;
pub const SUM: i32 = 74;
pub const REDUCE_MAX: i32 = 82;
pub const PACK: i32 = 83;
pub const UNPACK: i32 = 88;
pub const REDUCE_MIN: i32 = 89;
pub const RESIZE_NEAREST_NEIGHBOR: i32 = 97;
pub const LEAKY_RELU: i32 = 98;
pub const MIRROR_PAD: i32 = 100;
pub const SPLIT_V: i32 = 102;
pub const QUANTIZE: i32 = 114;
pub const HARD_SWISH: i32 = 117;
pub const BATCH_MATMUL: i32 = 126;
pub const CUMSUM: i32 = 128;
pub const IF: i32 = 118;
pub const WHILE: i32 = 119;
pub const CALL_ONCE: i32 = 129;
pub const VAR_HANDLE: i32 = 142;
pub const READ_VARIABLE: i32 = 143;
pub const ASSIGN_VARIABLE: i32 = 144;

/// The largest builtin code this version of the format defines.
pub const REDUCE_ALL: i32 = 140;
pub const MAX: i32 = 209;

/// Names of all builtin codes, indexed by code.
const NAMES: [&str; 210] = [
    "ADD",
    "AVERAGE_POOL_2D",
    "CONCATENATION",
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "DEPTH_TO_SPACE",
    "DEQUANTIZE",
    "EMBEDDING_LOOKUP",
    "FLOOR",
    "FULLY_CONNECTED",
    "HASHTABLE_LOOKUP",
    "L2_NORMALIZATION",
    "L2_POOL_2D",
    "LOCAL_RESPONSE_NORMALIZATION",
    "LOGISTIC",
    "LSH_PROJECTION",
    "LSTM",
    "MAX_POOL_2D",
    "MUL",
    "RELU",
    "RELU_N1_TO_1",
    "RELU6",
    "RESHAPE",
    "RESIZE_BILINEAR",
    "RNN",
    "SOFTMAX",
    "SPACE_TO_DEPTH",
    "SVDF",
    "TANH",
    "CONCAT_EMBEDDINGS",
    "SKIP_GRAM",
    "CALL",
    "CUSTOM",
    "EMBEDDING_LOOKUP_SPARSE",
    "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN",
    "GATHER",
    "BATCH_TO_SPACE_ND",
    "SPACE_TO_BATCH_ND",
    "TRANSPOSE",
    "MEAN",
    "SUB",
    "DIV",
    "SQUEEZE",
    "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "STRIDED_SLICE",
    "BIDIRECTIONAL_SEQUENCE_RNN",
    "EXP",
    "TOPK_V2",
    "SPLIT",
    "LOG_SOFTMAX",
    "DELEGATE",
    "BIDIRECTIONAL_SEQUENCE_LSTM",
    "CAST",
    "PRELU",
    "MAXIMUM",
    "ARG_MAX",
    "MINIMUM",
    "LESS",
    "NEG",
    "PADV2",
    "GREATER",
    "GREATER_EQUAL",
    "LESS_EQUAL",
    "SELECT",
    "SLICE",
    "SIN",
    "TRANSPOSE_CONV",
    "SPARSE_TO_DENSE",
    "TILE",
    "EXPAND_DIMS",
    "EQUAL",
    "NOT_EQUAL",
    "LOG",
    "SUM",
    "SQRT",
    "RSQRT",
    "SHAPE",
    "POW",
    "ARG_MIN",
    "FAKE_QUANT",
    "REDUCE_PROD",
    "REDUCE_MAX",
    "PACK",
    "LOGICAL_OR",
    "ONE_HOT",
    "LOGICAL_AND",
    "LOGICAL_NOT",
    "UNPACK",
    "REDUCE_MIN",
    "FLOOR_DIV",
    "REDUCE_ANY",
    "SQUARE",
    "ZEROS_LIKE",
    "FILL",
    "FLOOR_MOD",
    "RANGE",
    "RESIZE_NEAREST_NEIGHBOR",
    "LEAKY_RELU",
    "SQUARED_DIFFERENCE",
    "MIRROR_PAD",
    "ABS",
    "SPLIT_V",
    "UNIQUE",
    "CEIL",
    "REVERSE_V2",
    "ADD_N",
    "GATHER_ND",
    "COS",
    "WHERE",
    "RANK",
    "ELU",
    "REVERSE_SEQUENCE",
    "MATRIX_DIAG",
    "QUANTIZE",
    "MATRIX_SET_DIAG",
    "ROUND",
    "HARD_SWISH",
    "IF",
    "WHILE",
    "NON_MAX_SUPPRESSION_V4",
    "NON_MAX_SUPPRESSION_V5",
    "SCATTER_ND",
    "SELECT_V2",
    "DENSIFY",
    "SEGMENT_SUM",
    "BATCH_MATMUL",
    "PLACEHOLDER_FOR_GREATER_OP_CODES",
    "CUMSUM",
    "CALL_ONCE",
    "BROADCAST_TO",
    "RFFT2D",
    "CONV_3D",
    "IMAG",
    "REAL",
    "COMPLEX_ABS",
    "HASHTABLE",
    "HASHTABLE_FIND",
    "HASHTABLE_IMPORT",
    "HASHTABLE_SIZE",
    "REDUCE_ALL",
    "CONV_3D_TRANSPOSE",
    "VAR_HANDLE",
    "READ_VARIABLE",
    "ASSIGN_VARIABLE",
    "BROADCAST_ARGS",
    "RANDOM_STANDARD_NORMAL",
    "BUCKETIZE",
    "RANDOM_UNIFORM",
    "MULTINOMIAL",
    "GELU",
    "DYNAMIC_UPDATE_SLICE",
    "RELU_0_TO_1",
    "UNSORTED_SEGMENT_PROD",
    "UNSORTED_SEGMENT_MAX",
    "UNSORTED_SEGMENT_SUM",
    "ATAN2",
    "UNSORTED_SEGMENT_MIN",
    "SIGN",
    "BITCAST",
    "BITWISE_XOR",
    "RIGHT_SHIFT",
    "STABLEHLO_LOGISTIC",
    "STABLEHLO_ADD",
    "STABLEHLO_DIVIDE",
    "STABLEHLO_MULTIPLY",
    "STABLEHLO_MAXIMUM",
    "STABLEHLO_RESHAPE",
    "STABLEHLO_CLAMP",
    "STABLEHLO_CONCATENATE",
    "STABLEHLO_BROADCAST_IN_DIM",
    "STABLEHLO_CONVOLUTION",
    "STABLEHLO_SLICE",
    "STABLEHLO_CUSTOM_CALL",
    "STABLEHLO_REDUCE",
    "STABLEHLO_ABS",
    "STABLEHLO_AND",
    "STABLEHLO_COSINE",
    "STABLEHLO_EXPONENTIAL",
    "STABLEHLO_FLOOR",
    "STABLEHLO_LOG",
    "STABLEHLO_MINIMUM",
    "STABLEHLO_NEGATE",
    "STABLEHLO_OR",
    "STABLEHLO_POWER",
    "STABLEHLO_REMAINDER",
    "STABLEHLO_RSQRT",
    "STABLEHLO_SELECT",
    "STABLEHLO_SUBTRACT",
    "STABLEHLO_TANH",
    "STABLEHLO_SCATTER",
    "STABLEHLO_COMPARE",
    "STABLEHLO_CONVERT",
    "STABLEHLO_DYNAMIC_SLICE",
    "STABLEHLO_DYNAMIC_UPDATE_SLICE",
    "STABLEHLO_PAD",
    "STABLEHLO_IOTA",
    "STABLEHLO_DOT_GENERAL",
    "STABLEHLO_REDUCE_WINDOW",
    "STABLEHLO_SORT",
    "STABLEHLO_WHILE",
    "STABLEHLO_GATHER",
    "STABLEHLO_TRANSPOSE",
    "DILATE",
    "STABLEHLO_RNG_BIT_GENERATOR",
    "REDUCE_WINDOW",
    "STABLEHLO_COMPOSITE",
    "STABLEHLO_SHIFT_LEFT",
    "STABLEHLO_CBRT",
    "STABLEHLO_CASE",
];

/// The name of a builtin code, or `None` if the format defines no such code.
pub fn name(code: i32) -> Option<&'static str> {
    usize::try_from(code)
        .ok()
        .and_then(|c| NAMES.get(c))
        .copied()
}
