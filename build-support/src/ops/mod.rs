//! Operators: one module per TFLite operator (or family of operators sharing a kernel
//! module), holding everything Kiln knows about it beyond the kernel itself.
//!
//! An operator module has a `lower` function (TFLM's `Prepare` at build time: the types it
//! accepts and the diagnostic when not, the `prepare*` calls, the choice among its kernels)
//! and, for each kernel it can choose, a type implementing [`Kernel`](crate::lower::Kernel):
//! its statement in `invoke()` and its host execution for tests. The shared machinery
//! (the lowering context and checks in [`crate::lower`], operand bindings and the file in
//! [`crate::emit`], the host executor in `crate::exec`) knows operators only through
//! [`OPERATORS`] and that interface.
//!
//! To add an operator: its kernel module in `kiln-kernels`, its module here, one line in
//! [`OPERATORS`], and its tests (kernel cases, an end-to-end model).

use crate::lower::{Cx, Step};
use kiln_planner::diag::Result;

mod add;
mod cast;
mod concatenation;
mod conv_2d;
mod depthwise_conv_2d;
mod dequantize;
mod div;
mod elementwise;
mod fully_connected;
mod hard_swish;
mod l2_normalization;
mod leaky_relu;
mod log_softmax;
mod logistic;
mod lstm;
mod maximum_minimum;
mod mean;
mod mul;
mod neg;
mod pad;
mod pooling;
mod quantize;
mod relu;
mod reshape;
mod resize_bilinear;
mod resize_nearest_neighbor;
mod softmax;
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
    ("AVERAGE_POOL_2D", pooling::lower_average),
    ("CAST", cast::lower),
    ("CEIL", elementwise::lower_ceil),
    ("CONCATENATION", concatenation::lower),
    ("CONV_2D", conv_2d::lower),
    ("COS", elementwise::lower_cos),
    ("DEPTHWISE_CONV_2D", depthwise_conv_2d::lower),
    ("DEQUANTIZE", dequantize::lower),
    ("DIV", div::lower),
    ("ELU", elementwise::lower_elu),
    ("EXP", elementwise::lower_exp),
    ("EXPAND_DIMS", reshape::lower),
    ("FLOOR", elementwise::lower_floor),
    ("FULLY_CONNECTED", fully_connected::lower),
    ("HARD_SWISH", hard_swish::lower),
    ("L2_NORMALIZATION", l2_normalization::lower),
    ("LEAKY_RELU", leaky_relu::lower),
    ("LOG", elementwise::lower_log),
    ("LOGISTIC", logistic::lower),
    ("LOG_SOFTMAX", log_softmax::lower),
    ("MAXIMUM", maximum_minimum::lower_maximum),
    ("MAX_POOL_2D", pooling::lower_max),
    ("MEAN", mean::lower),
    ("MINIMUM", maximum_minimum::lower_minimum),
    ("MUL", mul::lower),
    ("NEG", neg::lower),
    ("PAD", pad::lower),
    ("PADV2", pad::lower),
    ("QUANTIZE", quantize::lower),
    ("RELU", relu::lower_relu),
    ("RELU6", relu::lower_relu6),
    ("RESHAPE", reshape::lower),
    ("RESIZE_BILINEAR", resize_bilinear::lower),
    ("RESIZE_NEAREST_NEIGHBOR", resize_nearest_neighbor::lower),
    ("ROUND", elementwise::lower_round),
    ("RSQRT", elementwise::lower_rsqrt),
    ("SIN", elementwise::lower_sin),
    ("SOFTMAX", softmax::lower),
    ("SQRT", elementwise::lower_sqrt),
    ("SQUARE", elementwise::lower_square),
    ("SQUEEZE", reshape::lower),
    ("STRIDED_SLICE", strided_slice::lower),
    ("SUB", sub::lower),
    ("SVDF", svdf::lower),
    ("TANH", tanh::lower),
    ("TRANSPOSE", transpose::lower),
    ("TRANSPOSE_CONV", transpose_conv::lower),
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", lstm::lower),
];

/// The lowering of the operator named `name` (TFLite's name), if Kiln compiles it.
pub fn lowering(name: &str) -> Option<Lowering> {
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
