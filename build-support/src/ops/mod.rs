//! Operators: one module per TFLite operator (or family of operators sharing a kernel
//! module), holding everything Kiln knows about it beyond the kernel itself, and the table
//! [`OPERATORS`] that names them.
//!
//! An operator module has a `lower` function (TFLM's `Prepare` at build time: the types it
//! accepts and the diagnostic when not, the `prepare*` calls, the choice among its kernels)
//! and, for each kernel it can choose, a type implementing [`Kernel`](crate::op::Kernel):
//! its statement in `invoke()` and its host execution for tests. It imports only the
//! operator contract, [`crate::op`] (and `kiln-kernels`, the planner's IR, a sibling
//! operator module it shares code with); the pipeline (lowering in [`crate::lower`], the
//! emitter in [`crate::emit`], the host executor in `crate::exec`) knows operators only
//! through [`OPERATORS`] and that contract.
//!
//! To add an operator: its kernel module in `kiln-kernels`, its module here, one line in
//! [`OPERATORS`], and its tests (kernel cases, an end-to-end model).

use crate::op::{Cx, Step};
use kiln_planner::diag::Result;

mod add;
mod add_n;
mod arg_min_max;
mod average_finish;
mod batch_matmul;
mod broadcast_to;
mod cast;
mod comparisons;
mod concatenation;
mod control_flow;
mod conv_2d;
mod cumsum;
mod dense_finish;
mod depthwise_conv_2d;
mod depthwise_finish;
mod depthwise_sum;
mod dequantize;
mod div;
mod dot_sum;
mod dynamic_update_slice;
mod elementwise;
mod fill;
mod floor_div_mod;
mod fully_connected;
mod gather;
mod hard_swish;
mod l2_normalization;
mod leaky_relu;
mod log_softmax;
mod logical;
mod logistic;
mod lstm;
mod maximum_minimum;
mod mean;
mod mirror_pad;
mod movement;
mod mul;
mod neg;
mod pad;
mod pooling;
mod prelu;
mod quantize;
mod read_rows;
mod reduce;
mod relu;
mod reshape;
mod resize_bilinear;
mod resize_nearest_neighbor;
mod reverse;
mod row_sum;
mod select;
mod signal_delay;
mod signal_energy;
mod signal_fft_auto_scale;
mod signal_filter_bank;
mod signal_filter_bank_log;
mod signal_filter_bank_spectral_subtraction;
mod signal_filter_bank_square_root;
mod signal_framer;
mod signal_irfft;
mod signal_overlap_add;
mod signal_pcan;
mod signal_rfft;
mod signal_stacker;
mod signal_window;
mod slice;
mod softmax;
mod space_to_batch_nd;
mod space_to_depth;
mod split;
mod squared_difference;
mod strided_slice;
mod sub;
mod svdf;
mod tanh;
mod transpose;
mod transpose_conv;

/// An operator module's lowering of one operator of the graph.
pub type Lowering = fn(&Cx<'_>) -> Result<Step>;

/// Every operator Kiln compiles: its TFLite name and its module's lowering, by name.
pub const OPERATORS: &[(&str, Lowering)] = &[
    ("ABS", elementwise::lower_abs),
    ("ADD", add::lower),
    ("ADD_N", add_n::lower),
    ("ARG_MAX", arg_min_max::lower_max),
    ("ARG_MIN", arg_min_max::lower_min),
    ("ASSIGN_VARIABLE", control_flow::lower_assign_variable),
    ("AVERAGE_POOL_2D", pooling::lower_average),
    ("BATCH_MATMUL", batch_matmul::lower),
    ("BATCH_TO_SPACE_ND", space_to_batch_nd::lower_batch_to_space),
    ("BROADCAST_ARGS", fill::lower_broadcast_args),
    ("BROADCAST_TO", broadcast_to::lower),
    ("CALL_ONCE", control_flow::lower_call_once),
    ("CAST", cast::lower),
    ("CEIL", elementwise::lower_ceil),
    ("CONCATENATION", concatenation::lower),
    ("CONV_2D", conv_2d::lower),
    ("COS", elementwise::lower_cos),
    ("CUMSUM", cumsum::lower),
    ("DEPTHWISE_CONV_2D", depthwise_conv_2d::lower),
    ("DEPTH_TO_SPACE", space_to_depth::lower),
    ("DEQUANTIZE", dequantize::lower),
    ("DIV", div::lower),
    ("DYNAMIC_UPDATE_SLICE", dynamic_update_slice::lower),
    ("ELU", elementwise::lower_elu),
    ("EMBEDDING_LOOKUP", gather::lower_embedding_lookup),
    ("EQUAL", comparisons::lower_equal),
    ("EXP", elementwise::lower_exp),
    ("EXPAND_DIMS", reshape::lower),
    ("FILL", fill::lower_fill),
    ("FLOOR", elementwise::lower_floor),
    ("FLOOR_DIV", floor_div_mod::lower_div),
    ("FLOOR_MOD", floor_div_mod::lower_mod),
    ("FULLY_CONNECTED", fully_connected::lower),
    ("GATHER", gather::lower_gather),
    ("GATHER_ND", gather::lower_gather_nd),
    ("GREATER", comparisons::lower_greater),
    ("GREATER_EQUAL", comparisons::lower_greater_equal),
    ("HARD_SWISH", hard_swish::lower),
    ("IF", control_flow::lower_if),
    ("L2_NORMALIZATION", l2_normalization::lower),
    ("L2_POOL_2D", pooling::lower_l2),
    ("LEAKY_RELU", leaky_relu::lower),
    ("LESS", comparisons::lower_less),
    ("LESS_EQUAL", comparisons::lower_less_equal),
    ("LOG", elementwise::lower_log),
    ("LOGICAL_AND", logical::lower_and),
    ("LOGICAL_NOT", logical::lower_not),
    ("LOGICAL_OR", logical::lower_or),
    ("LOGISTIC", logistic::lower),
    ("LOG_SOFTMAX", log_softmax::lower),
    ("MAXIMUM", maximum_minimum::lower_maximum),
    ("MAX_POOL_2D", pooling::lower_max),
    ("MEAN", mean::lower),
    ("MINIMUM", maximum_minimum::lower_minimum),
    ("MIRROR_PAD", mirror_pad::lower),
    ("MUL", mul::lower),
    ("NEG", neg::lower),
    ("NOT_EQUAL", comparisons::lower_not_equal),
    ("PACK", split::lower),
    ("PAD", pad::lower),
    ("PADV2", pad::lower),
    ("PRELU", prelu::lower),
    ("QUANTIZE", quantize::lower),
    ("READ_VARIABLE", control_flow::lower_read_variable),
    ("REDUCE_ALL", reduce::lower_all),
    ("REDUCE_MAX", reduce::lower_max),
    ("REDUCE_MIN", reduce::lower_min),
    ("RELU", relu::lower_relu),
    ("RELU6", relu::lower_relu6),
    ("RESHAPE", reshape::lower),
    ("RESIZE_BILINEAR", resize_bilinear::lower),
    ("RESIZE_NEAREST_NEIGHBOR", resize_nearest_neighbor::lower),
    ("REVERSE_V2", reverse::lower),
    ("ROUND", elementwise::lower_round),
    ("RSQRT", elementwise::lower_rsqrt),
    ("SELECT_V2", select::lower),
    ("SHAPE", fill::lower_shape),
    ("SIN", elementwise::lower_sin),
    ("SLICE", slice::lower),
    ("SOFTMAX", softmax::lower),
    ("SPACE_TO_BATCH_ND", space_to_batch_nd::lower_space_to_batch),
    ("SPACE_TO_DEPTH", space_to_depth::lower),
    ("SPLIT", split::lower),
    ("SPLIT_V", split::lower),
    ("SQRT", elementwise::lower_sqrt),
    ("SQUARE", elementwise::lower_square),
    ("SQUARED_DIFFERENCE", squared_difference::lower),
    ("SQUEEZE", reshape::lower),
    ("STRIDED_SLICE", strided_slice::lower),
    ("SUB", sub::lower),
    ("SUM", reduce::lower_sum),
    ("SVDF", svdf::lower),
    ("SignalDelay", signal_delay::lower),
    ("SignalEnergy", signal_energy::lower),
    ("SignalFftAutoScale", signal_fft_auto_scale::lower),
    ("SignalFilterBank", signal_filter_bank::lower),
    ("SignalFilterBankLog", signal_filter_bank_log::lower),
    (
        "SignalFilterBankSpectralSubtraction",
        signal_filter_bank_spectral_subtraction::lower,
    ),
    (
        "SignalFilterBankSquareRoot",
        signal_filter_bank_square_root::lower,
    ),
    ("SignalFramer", signal_framer::lower),
    ("SignalIrfft", signal_irfft::lower),
    ("SignalOverlapAdd", signal_overlap_add::lower),
    ("SignalPCAN", signal_pcan::lower),
    ("SignalRfft", signal_rfft::lower),
    ("SignalStacker", signal_stacker::lower),
    ("SignalWindow", signal_window::lower),
    ("TANH", tanh::lower),
    ("TRANSPOSE", transpose::lower),
    ("TRANSPOSE_CONV", transpose_conv::lower),
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", lstm::lower),
    ("UNPACK", split::lower),
    ("VAR_HANDLE", control_flow::lower_var_handle),
    ("WHILE", control_flow::lower_while),
    ("ZEROS_LIKE", fill::lower_zeros_like),
];

/// The lowering of the operator named `name` (TFLite's name), if Kiln compiles it; and of
/// Kiln's own KILN_READ_ROWS (a streamed input's rows), KILN_ROW_SUM, KILN_AVERAGE_FINISH,
/// KILN_DOT_SUM and KILN_DENSE_FINISH (a tiled region's accumulating ends), which no model holds and
/// [`OPERATORS`] does not list.
pub fn lowering(name: &str) -> Option<Lowering> {
    match name {
        kiln_planner::tiling::READ_ROWS => return Some(read_rows::lower),
        "KILN_ROW_SUM" => return Some(row_sum::lower),
        "KILN_AVERAGE_FINISH" => return Some(average_finish::lower),
        "KILN_DOT_SUM" => return Some(dot_sum::lower),
        "KILN_DENSE_FINISH" => return Some(dense_finish::lower),
        "KILN_DEPTHWISE_SUM" => return Some(depthwise_sum::lower),
        "KILN_DEPTHWISE_FINISH" => return Some(depthwise_finish::lower),
        _ => {}
    }
    OPERATORS
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| OPERATORS[i].1)
}

/// The names of the operators Kiln compiles, in order.
pub fn names() -> impl Iterator<Item = &'static str> {
    OPERATORS.iter().map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_is_sorted_and_has_no_duplicates() {
        assert!(super::OPERATORS.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
