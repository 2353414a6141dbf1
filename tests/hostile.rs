//! Hostile models (`tests/hostile/`, made by `tools/gen_hostile_models.py`): each is refused
//! with a typed diagnostic naming the operator, the tensor and the value, or compiles to code
//! whose outputs are TFLM's, byte for byte. `tests/hostile/tflm.json` records what the pinned
//! TFLM wheel does with each; Kiln refuses everything TFLM refuses, and refuses on purpose a
//! few models TFLM runs (multipliers no kernel can apply, zero points outside their type,
//! weight zero points TFLM's kernels ignore, zero strides, wrong output shapes), each listed
//! below with its reason. The `cf_` models have several subgraphs (IF, WHILE, CALL_ONCE,
//! resource variables): calls that cannot run, recursion, operands that do not match the
//! called subgraph, variables misused, and calls nested deeper than Kiln's limit.

mod common;

use kiln_planner::ErrorKind;
use std::path::PathBuf;

fn dir() -> PathBuf {
    common::repo_root().join("tests/hostile")
}

fn tflm_verdicts() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join("tflm.json")).unwrap()).unwrap()
}

/// What Kiln must do with a model.
enum Expect {
    /// Compiles; the host executor reproduces TFLM's golden outputs (when it has inputs).
    Compiles,
    /// A multi-subgraph model that compiles (the host executor runs one subgraph: its golden
    /// is checked through `include_model!`, in `multi_subgraph_models_run_as_in_tflm`).
    CompilesCalls,
    /// Refused: kind, operator (index and name), tensor index, and words the message (with
    /// the expected/found values) must contain.
    Refused {
        kind: ErrorKind,
        op: Option<(usize, &'static str)>,
        tensor: Option<usize>,
        says: &'static [&'static str],
    },
}

use Expect::*;

const fn refused(
    kind: ErrorKind,
    op: Option<(usize, &'static str)>,
    tensor: Option<usize>,
    says: &'static [&'static str],
) -> Expect {
    Refused {
        kind,
        op,
        tensor,
        says,
    }
}

const U: ErrorKind = ErrorKind::Unsupported;
const M: ErrorKind = ErrorKind::Malformed;

/// Every model of `tests/hostile` and what Kiln does with it.
const CASES: &[(&str, Expect)] = &[
    ("empty_identity", Compiles),
    ("no_tensors", Compiles),
    // TFLM shifts by more than the width of an int (undefined behaviour) for these.
    (
        "conv_output_scale_denormal",
        refused(
            U,
            Some((0, "CONV_2D")),
            Some(3),
            &["requantization multiplier", "tensor 3 1e-45", "-31..=30"],
        ),
    ),
    (
        "conv_input_scale_huge",
        refused(
            U,
            Some((0, "CONV_2D")),
            Some(0),
            &["requantization multiplier", "3e38"],
        ),
    ),
    (
        "fc_output_scale_tiny",
        refused(
            U,
            Some((0, "FULLY_CONNECTED")),
            Some(2),
            &["requantization multiplier", "1e-30"],
        ),
    ),
    (
        "relu_output_scale_tiny",
        refused(
            U,
            Some((0, "RELU")),
            Some(1),
            &["requantization multiplier", "1e-30"],
        ),
    ),
    (
        "logistic_input_scale_tiny",
        refused(
            U,
            Some((0, "LOGISTIC")),
            Some(0),
            &["requantization multiplier", "1e-12", "0..=62"],
        ),
    ),
    ("conv_output_scale_small", Compiles),
    ("logistic_input_scale_large", Compiles),
    // TFLM fails to allocate them too; Kiln says why before planning.
    (
        "huge_tensors",
        refused(
            U,
            None,
            Some(0),
            &["4294836225 bytes", "32-bit address space"],
        ),
    ),
    (
        "arena_over_address_space",
        refused(
            U,
            None,
            None,
            &[
                "the arena does not fit a 32-bit address space",
                "3200000000 bytes",
            ],
        ),
    ),
    // The TFLite quantization spec requires zero points within the type; TFLM's RELU does
    // not check.
    (
        "relu_zero_point_1000",
        refused(M, None, Some(0), &["zero point", "-128..=127", "1000"]),
    ),
    (
        "relu_output_zero_point_minus_300",
        refused(M, None, Some(1), &["zero point", "-128..=127", "-300"]),
    ),
    // TFLM's int8 CONV_2D ignores the weights' zero point: the model would compute
    // something other than it says.
    (
        "conv_weights_zero_point_3",
        refused(U, Some((0, "CONV_2D")), Some(1), &["zero point", "0", "3"]),
    ),
    ("add_int16_zero_point_5", Compiles),
    (
        "conv_stride_zero",
        refused(U, Some((0, "CONV_2D")), None, &["stride"]),
    ),
    (
        "conv_wrong_output_shape",
        refused(U, Some((0, "CONV_2D")), Some(3), &["shape", "[1, 4, 4, 2]"]),
    ),
    (
        "custom_op",
        refused(
            U,
            Some((0, "MyCustomOp")),
            None,
            &["no kernel", "found MyCustomOp (INT8 -> INT8)"],
        ),
    ),
    (
        "several_unsupported_ops",
        refused(
            U,
            None,
            None,
            &[
                "2 operators of the model cannot be compiled",
                "op 2 (MyOtherCustomOp, INT8 -> INT8)",
            ],
        ),
    ),
    // Custom options: TFLM shifts by 40 (undefined), crashes on bytes that are no flexbuffer,
    // and reads past the input when the window's length does not divide it.
    (
        "signal_window_shift_40",
        refused(
            U,
            Some((0, "SignalWindow")),
            None,
            &["`shift` option in 0..=31", "shift 40"],
        ),
    ),
    (
        "signal_window_options_garbage",
        refused(
            U,
            Some((0, "SignalWindow")),
            None,
            &["no integer `shift` in the custom options"],
        ),
    ),
    (
        "signal_window_length_3",
        refused(
            U,
            Some((0, "SignalWindow")),
            Some(1),
            &["multiple of the window's length", "window length 3"],
        ),
    ),
    // More Signal operators. TFLM writes past the output (bins up to 12 of 8), reads an
    // option by position (an extra key `a` becomes its end_index), reads past the spectrum
    // (channel 2's bins 4..9 of 8), shifts by 32 or 64 bits (undefined) and reads past a gain
    // table of 100 entries (estimates of 2^25 or more read entries 100..=124): Kiln refuses all,
    // and a non-scalar scale, which TFLM refuses too.
    (
        "signal_energy_end_past_output",
        refused(
            U,
            Some((0, "SignalEnergy")),
            Some(1),
            &["end_index <= 8", "start_index 0, end_index 12"],
        ),
    ),
    (
        "signal_energy_extra_option",
        refused(
            U,
            Some((0, "SignalEnergy")),
            None,
            &[
                "exactly end_index, start_index",
                "keys [a, end_index, start_index]",
            ],
        ),
    ),
    (
        "signal_filter_bank_past_input",
        refused(
            U,
            Some((0, "SignalFilterBank")),
            Some(3),
            &["bins inside the input's 8", "channel 2: bins 4..9"],
        ),
    ),
    (
        "signal_filter_bank_square_root_vector_bits",
        refused(
            U,
            Some((0, "SignalFilterBankSquareRoot")),
            Some(1),
            &["scale bits must be of rank 0", "shape [2]"],
        ),
    ),
    (
        "signal_filter_bank_log_correction_bits_32",
        refused(
            U,
            Some((0, "SignalFilterBankLog")),
            None,
            &[
                "input_correction_bits in 0..=31",
                "input_correction_bits 32",
            ],
        ),
    ),
    (
        "signal_pcan_snr_shift_64",
        refused(
            U,
            Some((0, "SignalPCAN")),
            None,
            &["snr_shift in 0..=63", "snr_shift 64"],
        ),
    ),
    (
        "signal_pcan_short_gain_lut",
        refused(
            U,
            Some((0, "SignalPCAN")),
            Some(2),
            &["at least 125 entries", "100 entries"],
        ),
    ),
    // SignalRfft: TFLM crashes in kiss_fft's generic butterfly (a radix-7 stage), and writes
    // past an output frame shorter than fft_length + 2.
    (
        "signal_rfft_fft_length_14",
        refused(
            U,
            Some((0, "SignalRfft")),
            Some(0),
            &["no prime factor but 2, 3 and 5", "fft_length 14"],
        ),
    ),
    (
        "signal_rfft_output_short",
        refused(
            U,
            Some((0, "SignalRfft")),
            Some(1),
            &["fft_length / 2 + 1 complex values", "[1, 18]", "[1, 8]"],
        ),
    ),
    // SignalFftAutoScale: TFLM's Prepare wants a rank-1 frame.
    (
        "signal_fft_auto_scale_rank_2",
        refused(
            U,
            Some((0, "SignalFftAutoScale")),
            Some(0),
            &["rank-1 input", "rank 1", "[2, 8]"],
        ),
    ),
    // SignalFilterBankSpectralSubtraction: TFLM shifts a uint32 by 40 (undefined), and
    // leaves the tensors' values past num_channels unwritten.
    (
        "signal_spectral_subtraction_smoothing_bits_40",
        refused(
            U,
            Some((0, "SignalFilterBankSpectralSubtraction")),
            None,
            &["smoothing_bits in 0..=31", "smoothing_bits 40"],
        ),
    ),
    (
        "signal_spectral_subtraction_channels_4",
        refused(
            U,
            Some((0, "SignalFilterBankSpectralSubtraction")),
            Some(0),
            &["num_channels values", "[4]", "shape [8]"],
        ),
    ),
    // SignalIrfft: TFLM reads past an input frame shorter than fft_length + 2.
    (
        "signal_irfft_input_short",
        refused(
            U,
            Some((0, "SignalIrfft")),
            Some(0),
            &["fft_length / 2 + 1 complex values in", "[1, 18]", "[1, 8]"],
        ),
    ),
    // The streaming operators. TFLM divides by a zero frame_step, and writes a negative
    // count of zeros (prefill with frame_size < frame_step, a negative delay) as a huge
    // size_t: it crashes.
    (
        "signal_framer_step_0",
        refused(
            U,
            Some((0, "SignalFramer")),
            Some(0),
            &["frame_step >= 1", "frame_step 0"],
        ),
    ),
    (
        "signal_framer_prefill_step_past_frame",
        refused(
            U,
            Some((0, "SignalFramer")),
            Some(0),
            &[
                "frame_size >= frame_step with prefill",
                "frame_size 2, frame_step 8, prefill true",
            ],
        ),
    ),
    // TFLM runs these three, but a stacker step of 0 overfills its buffer, one beyond the
    // stack discards frames it does not hold, and a short input is read past its end.
    (
        "signal_stacker_step_0",
        refused(
            U,
            Some((0, "SignalStacker")),
            None,
            &["stacker_step in 1..=left + right + 1", "stacker_step 0"],
        ),
    ),
    (
        "signal_stacker_step_past_stack",
        refused(
            U,
            Some((0, "SignalStacker")),
            None,
            &["stacker_step in 1..=left + right + 1", "stacker_step 4"],
        ),
    ),
    (
        "signal_stacker_input_short",
        refused(U, Some((0, "SignalStacker")), Some(0), &["[8]", "[4]"]),
    ),
    (
        "signal_delay_negative",
        refused(
            U,
            Some((0, "SignalDelay")),
            Some(0),
            &["delay_length >= 0", "delay_length -3"],
        ),
    ),
    // TFLM moves a negative number of bytes (frame_step 6 > frame_size 4) and crashes, and
    // refuses a `T` of FLOAT32 on int16 tensors.
    (
        "signal_overlap_add_step_past_frame",
        refused(
            U,
            Some((0, "SignalOverlapAdd")),
            Some(0),
            &["1 <= frame_step <= 4", "frame_step 6"],
        ),
    ),
    (
        "signal_overlap_add_t_float32",
        refused(
            U,
            Some((0, "SignalOverlapAdd")),
            None,
            &[
                "`T` option must name the tensors' type",
                "T 7 (INT16)",
                "T 0",
            ],
        ),
    ),
    // Multi-subgraph models. Calls naming the main subgraph, a negative index or one past the
    // end: TFLM refuses the ones its Prepare checks and crashes on the others (an index it
    // does not check, the main subgraph run inside itself).
    (
        "cf_if_then_subgraph_0",
        refused(
            M,
            Some((0, "IF")),
            None,
            &["then_subgraph_index names the main subgraph", "found 0"],
        ),
    ),
    (
        "cf_if_else_negative",
        refused(
            M,
            Some((0, "IF")),
            None,
            &["else_subgraph_index is negative", "found -1"],
        ),
    ),
    (
        "cf_if_then_past_end",
        refused(
            M,
            Some((0, "IF")),
            None,
            &[
                "then_subgraph_index names a subgraph that does not exist",
                "1..3, found 3",
            ],
        ),
    ),
    (
        "cf_while_body_subgraph_0",
        refused(
            M,
            Some((0, "WHILE")),
            None,
            &["body_subgraph_index names the main subgraph", "found 0"],
        ),
    ),
    (
        "cf_while_cond_negative",
        refused(
            M,
            Some((0, "WHILE")),
            None,
            &["cond_subgraph_index is negative", "found -2"],
        ),
    ),
    (
        "cf_while_body_past_end",
        refused(
            M,
            Some((0, "WHILE")),
            None,
            &[
                "body_subgraph_index names a subgraph that does not exist",
                "1..3, found 7",
            ],
        ),
    ),
    (
        "cf_call_once_subgraph_0",
        refused(
            M,
            Some((0, "CALL_ONCE")),
            None,
            &["init_subgraph_index names the main subgraph", "found 0"],
        ),
    ),
    (
        "cf_call_once_negative",
        refused(
            M,
            Some((0, "CALL_ONCE")),
            None,
            &["init_subgraph_index is negative", "found -1"],
        ),
    ),
    (
        "cf_call_once_past_end",
        refused(
            M,
            Some((0, "CALL_ONCE")),
            None,
            &[
                "init_subgraph_index names a subgraph that does not exist",
                "1..2, found 2",
            ],
        ),
    ),
    // Recursion: TFLM overflows its stack (signal 11) on both.
    (
        "cf_call_once_calls_itself",
        refused(
            U,
            Some((0, "CALL_ONCE")),
            None,
            &[
                "op 0 (CALL_ONCE): in subgraph 1: the operator calls subgraph 1, which is already running",
                "found subgraph 1 -> 1",
            ],
        ),
    ),
    (
        "cf_if_branches_call_each_other",
        refused(
            U,
            Some((0, "IF")),
            None,
            &[
                "calls subgraph 1, which is already running",
                "found subgraph 1 -> 2 -> 1",
            ],
        ),
    ),
    // IF: TFLM's Prepare refuses the condition and the counts; it copies a branch input of
    // another type byte for byte (INT32 read as FLOAT32), and fails in Eval on another shape.
    (
        "cf_if_condition_float",
        refused(
            U,
            Some((0, "IF")),
            Some(0),
            &["condition must be one BOOL", "found FLOAT32 of shape []"],
        ),
    ),
    (
        "cf_if_condition_two_bools",
        refused(
            U,
            Some((0, "IF")),
            Some(0),
            &["condition must be one BOOL", "found BOOL of shape [2]"],
        ),
    ),
    (
        "cf_if_fewer_inputs_than_branch",
        refused(
            U,
            Some((0, "IF")),
            None,
            &[
                "the operator has 1 branch inputs, subgraph 1 has 2 inputs",
                "found 1",
            ],
        ),
    ),
    (
        "cf_if_more_inputs_than_branch",
        refused(
            U,
            Some((0, "IF")),
            None,
            &["has 2 branch inputs, subgraph 1 has 1 inputs", "found 2"],
        ),
    ),
    (
        "cf_if_more_outputs_than_branch",
        refused(
            U,
            Some((0, "IF")),
            None,
            &["has 2 outputs, subgraph 1 has 1 outputs", "found 2"],
        ),
    ),
    (
        "cf_if_fewer_outputs_than_branch",
        refused(
            U,
            Some((0, "IF")),
            None,
            &["has 1 outputs, subgraph 1 has 2 outputs", "found 1"],
        ),
    ),
    (
        "cf_if_branch_input_int32",
        refused(
            U,
            Some((0, "IF")),
            Some(1),
            &[
                "branch input 0 has another type or shape than subgraph 1's input 0",
                "expected INT32 [1, 4] (subgraph 1's tensor 0 `in0`), found FLOAT32 [1, 4]",
            ],
        ),
    ),
    (
        "cf_if_branch_input_shape",
        refused(
            U,
            Some((0, "IF")),
            Some(1),
            &[
                "branch input 0 has another type or shape",
                "expected FLOAT32 [1, 8]",
                "found FLOAT32 [1, 4]",
            ],
        ),
    ),
    // WHILE: TFLM loops forever without a condition output, reads an INT32 condition as a
    // bool, fails in Eval on a body output of another shape, and refuses the counts.
    (
        "cf_while_cond_no_output",
        refused(
            U,
            Some((0, "WHILE")),
            None,
            &[
                "condition (subgraph 1) must have one output",
                "found 0 outputs",
            ],
        ),
    ),
    (
        "cf_while_cond_output_int32",
        refused(
            U,
            Some((0, "WHILE")),
            None,
            &[
                "condition (subgraph 1) must have one output, one BOOL",
                "found INT32 of shape [] (tensor 3 `go`)",
            ],
        ),
    ),
    (
        "cf_while_body_output_shape",
        refused(
            U,
            Some((0, "WHILE")),
            Some(1),
            &[
                "loop variable 1 has another type or shape than subgraph 2's output 1",
                "expected FLOAT32 [1, 8] (subgraph 2's tensor 4 `x_next`), found FLOAT32 [1, 4]",
            ],
        ),
    ),
    (
        "cf_while_more_outputs_than_inputs",
        refused(
            U,
            Some((0, "WHILE")),
            None,
            &[
                "as many outputs as loop variables",
                "expected 2 outputs, found 3",
            ],
        ),
    ),
    (
        "cf_while_fewer_outputs_than_inputs",
        refused(
            U,
            Some((0, "WHILE")),
            None,
            &[
                "as many outputs as loop variables",
                "expected 2 outputs, found 1",
            ],
        ),
    ),
    // CALL_ONCE: TFLM runs an init subgraph with inputs (leaving them unset).
    (
        "cf_call_once_init_has_inputs",
        refused(
            U,
            Some((0, "CALL_ONCE")),
            None,
            &[
                "subgraph 1 must have no inputs",
                "found 1 inputs, 1 outputs",
            ],
        ),
    ),
    // Resource variables: TFLM returns stale bytes for a variable never assigned, copies
    // bytes between a variable's two types or shapes, and cannot take a handle as an input
    // of the main subgraph (its Python wrapper refuses it); an IF branch assigning through a
    // handle it is given runs.
    (
        "cf_read_variable_never_assigned",
        refused(
            U,
            Some((2, "READ_VARIABLE")),
            Some(1),
            &["resource variable `/v` is read but never assigned"],
        ),
    ),
    (
        "cf_variable_two_shapes",
        refused(
            U,
            Some((1, "ASSIGN_VARIABLE")),
            Some(0),
            &[
                "in subgraph 1",
                "resource variable `/v` is used with two types or shapes",
                "expected FLOAT32 [1, 4] (subgraph 0), found FLOAT32 [1, 8] (subgraph 1)",
            ],
        ),
    ),
    (
        "cf_variable_two_dtypes",
        refused(
            U,
            Some((1, "ASSIGN_VARIABLE")),
            Some(0),
            &[
                "resource variable `/v` is used with two types or shapes",
                "expected FLOAT32 [1, 4] (subgraph 0), found INT32 [1, 4] (subgraph 1)",
            ],
        ),
    ),
    (
        "cf_assign_dtype_differs_from_read",
        refused(
            U,
            Some((3, "READ_VARIABLE")),
            Some(1),
            &[
                "used with two types or shapes",
                "expected INT32 [1, 4]",
                "found FLOAT32 [1, 4]",
            ],
        ),
    ),
    (
        "cf_read_variable_handle_is_input",
        refused(
            U,
            Some((1, "READ_VARIABLE")),
            Some(3),
            &[
                "must come from a VAR_HANDLE",
                "expected the output of a VAR_HANDLE, found an input of the subgraph",
            ],
        ),
    ),
    (
        "cf_assign_variable_handle_is_input",
        refused(
            U,
            Some((0, "ASSIGN_VARIABLE")),
            Some(0),
            &[
                "in subgraph 2",
                "must come from a VAR_HANDLE",
                "found an input of the subgraph",
            ],
        ),
    ),
    // Calls nested 200 deep: TFLM runs them; Kiln's emitter recurses once per level, so it
    // refuses more than MAX_CALL_DEPTH (32) and compiles 32 (this test's thread has the
    // default 2 MB stack: 64 levels overflowed it before the limit).
    (
        "cf_nested_if_200",
        refused(
            U,
            Some((0, "IF")),
            None,
            &[
                "op 0 (IF): in subgraph 32: calls nest 200 deep below the main subgraph",
                "call of subgraph 33 is level 33",
                "expected at most 32 nested calls, found 200 nested calls (subgraph 0 -> 1 -> 2 -> ...)",
            ],
        ),
    ),
    ("cf_nested_if_32", CompilesCalls),
    // Odd but valid subgraphs (a branch without operators, one tensor listed as two inputs
    // or two outputs, loop variables passed through): compiled, outputs as TFLM's.
    ("cf_if_branch_passes_input_through", CompilesCalls),
    ("cf_if_branch_lists_input_twice", CompilesCalls),
    ("cf_while_body_passes_variables_through", CompilesCalls),
    ("cf_while_body_lists_output_twice", CompilesCalls),
    ("cf_if_constant_condition", CompilesCalls),
    ("cf_while_condition_is_loop_variable", CompilesCalls),
    // An IF without operands (TFLM's Prepare refuses it); subgraphs outputting or reading a
    // tensor nothing writes (TFLM copies or adds whatever bytes the arena holds there);
    // a WHILE condition that is a constant (TFLM runs it; Kiln keeps subgraph inputs and
    // outputs in the arena).
    (
        "cf_if_no_inputs",
        refused(
            U,
            Some((0, "IF")),
            None,
            &["IF needs its condition as input 0", "found 0 inputs"],
        ),
    ),
    (
        "cf_if_branch_output_unwritten",
        refused(
            M,
            None,
            Some(1),
            &["in subgraph 1: a graph output is never produced"],
        ),
    ),
    (
        "cf_if_branch_reads_unwritten",
        refused(
            M,
            Some((0, "ADD")),
            Some(1),
            &["in subgraph 1: reads a tensor that no operator produces"],
        ),
    ),
    (
        "cf_while_constant_condition",
        refused(
            U,
            Some((0, "WHILE")),
            None,
            &[
                "subgraph 1's output 0 is a constant (tensor 0 `false`)",
                "expected a tensor written at run time, found a constant BOOL []",
            ],
        ),
    ),
    // IFs 24 deep, both branches the same next subgraph: TFLM runs one subgraph per level;
    // Kiln writes each subgraph once, as a function both branches call (code linear in the
    // model, not 2^25 - 2 copies).
    ("cf_if_branches_share_next_24", CompilesCalls),
];

fn options() -> kiln_build::Options {
    kiln_build::Options::default()
}

#[test]
fn every_hostile_model_is_listed() {
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "tflite").then(|| p.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    files.sort();
    let mut listed: Vec<String> = CASES.iter().map(|(n, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(files, listed);
    let verdicts = tflm_verdicts();
    assert_eq!(verdicts.as_object().unwrap().len(), CASES.len());
}

#[test]
fn hostile_models_are_refused_with_a_diagnostic_or_match_tflm() {
    let verdicts = tflm_verdicts();
    let mut failures = Vec::new();
    for (name, expect) in CASES {
        let bytes = std::fs::read(dir().join(format!("{name}.tflite"))).unwrap();
        let tflm_ok = verdicts[name] == "ok";
        let result = std::panic::catch_unwind(|| {
            kiln_build::compile_tokens(&bytes, &options()).map(|c| {
                // The formatted file and the reports are part of the compile path.
                let text = kiln_build::format_file(&c.tokens, name);
                let report = kiln_planner::report::text(&c.graph, &c.plan, name);
                let _ = kiln_planner::report::svg(&c.graph, &c.plan, name);
                (c, text, report)
            })
        });
        let Ok(result) = result else {
            failures.push(format!("{name}: panicked"));
            continue;
        };
        match (expect, result) {
            (Compiles, Ok((c, text, _))) => {
                assert!(text.contains("pub fn invoke"), "{name}");
                if !tflm_ok {
                    failures.push(format!("{name}: compiles, but TFLM refuses it"));
                    continue;
                }
                let golden = dir().join("golden").join(name);
                if c.graph.inputs.is_empty() {
                    continue;
                }
                let steps = kiln_build::lower::lower(&c.graph, &c.plan).unwrap();
                for s in common::samples(&golden) {
                    let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
                    let t = kiln_build::exec::run(&c.graph, &steps, &inputs);
                    for (i, (&o, want)) in c.graph.outputs.iter().zip(&s.outputs).enumerate() {
                        if t[o.0].bytes() != want.as_slice() {
                            failures.push(format!(
                                "{name}: sample {} output {i} differs from TFLM",
                                s.seed
                            ));
                        }
                    }
                }
            }
            (CompilesCalls, Ok((c, text, _))) => {
                assert!(text.contains("pub fn invoke"), "{name}");
                assert!(!c.graph.subgraphs.is_empty(), "{name}: one subgraph");
                if !tflm_ok {
                    failures.push(format!("{name}: compiles, but TFLM refuses it"));
                }
            }
            (Compiles | CompilesCalls, Err(d)) => failures.push(format!("{name}: refused: {d}")),
            (Refused { .. }, Ok(_)) => failures.push(format!("{name}: compiles")),
            (
                Refused {
                    kind,
                    op,
                    tensor,
                    says,
                },
                Err(d),
            ) => {
                let shown = d.to_string();
                let got_op = d.op.as_ref().map(|o| (o.index, o.name.as_str()));
                let want_op = op.map(|(i, n)| (i, n));
                if d.kind != *kind
                    || got_op != want_op
                    || d.tensor.as_ref().map(|t| t.index) != *tensor
                    || says.iter().any(|w| !shown.contains(w))
                {
                    failures.push(format!(
                        "{name}: {:?} op {got_op:?} tensor {:?}: {shown}",
                        d.kind,
                        d.tensor.as_ref().map(|t| t.index)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Graphs without operators compile to code that builds and runs: the identity model's
/// output is its input, as in TFLM.
mod empty_identity {
    kiln::include_model!("hostile/empty_identity.tflite");
}
mod no_tensors {
    kiln::include_model!("hostile/no_tensors.tflite");
}

/// The multi-subgraph models of `CASES` that compile (`CompilesCalls`), each run against
/// TFLM's golden outputs.
macro_rules! compiled_calls {
    ($($name:ident: $path:literal),* $(,)?) => {
        $(
            mod $name {
                kiln::include_model!($path);
            }
        )*
        const COMPILED_CALLS: &[&str] = &[$(stringify!($name)),*];

        #[test]
        fn multi_subgraph_models_run_as_in_tflm() {
            $(
                check_golden!(
                    $name,
                    common::repo_root().join(concat!("tests/hostile/golden/", stringify!($name)))
                );
            )*
        }
    };
}

// cf_nested_if_32: IFs nested 32 deep (Kiln's limit), 33 subgraphs active at once when the
// condition is true (x + x at the bottom), x - x when false. The IF models' seeds 1 to 3
// take both branches; the WHILE models run 3 trips. cf_if_branches_share_next_24: 24 levels
// of IFs whose branches call the same next subgraph (one function each in Kiln's code).
compiled_calls!(
    cf_nested_if_32: "hostile/cf_nested_if_32.tflite",
    cf_if_branch_passes_input_through: "hostile/cf_if_branch_passes_input_through.tflite",
    cf_if_branch_lists_input_twice: "hostile/cf_if_branch_lists_input_twice.tflite",
    cf_while_body_passes_variables_through: "hostile/cf_while_body_passes_variables_through.tflite",
    cf_while_body_lists_output_twice: "hostile/cf_while_body_lists_output_twice.tflite",
    cf_if_constant_condition: "hostile/cf_if_constant_condition.tflite",
    cf_while_condition_is_loop_variable: "hostile/cf_while_condition_is_loop_variable.tflite",
    cf_if_branches_share_next_24: "hostile/cf_if_branches_share_next_24.tflite",
);

#[test]
fn every_compiled_multi_subgraph_model_runs_against_tflm() {
    let mut listed: Vec<&str> = CASES
        .iter()
        .filter(|(_, e)| matches!(e, CompilesCalls))
        .map(|(n, _)| *n)
        .collect();
    listed.sort_unstable();
    let mut run = COMPILED_CALLS.to_vec();
    run.sort_unstable();
    assert_eq!(listed, run);
}

#[test]
fn models_without_operators_compile_and_run() {
    check_golden!(
        empty_identity,
        common::repo_root().join("tests/hostile/golden/empty_identity")
    );
    let mut m = no_tensors::Model::take().unwrap();
    m.invoke();
    const { assert!(no_tensors::ARENA_BYTES == 0 && no_tensors::INPUTS == 0) };
}

/// A model with several unsupported operators: one diagnostic names every one of them (index,
/// name and types), not only the first. `several_unsupported_ops` has an unknown custom
/// operator and TFLM's SignalStacker around an ADD.
#[test]
fn every_unsupported_operator_is_named_at_once() {
    let path = common::repo_root().join("tests/hostile/several_unsupported_ops.tflite");
    let bytes = std::fs::read(&path).unwrap();
    let graph = kiln_planner::read_model(&bytes).unwrap();
    let refused: Vec<_> = graph
        .ops
        .iter()
        .filter(|op| kiln_build::lower::lower_op(&graph, op).is_err())
        .collect();
    assert!(
        refused.len() > 1,
        "the model should need several kernels Kiln lacks"
    );
    let Err(d) = kiln_build::compile_tokens(&bytes, &options()) else {
        panic!("several_unsupported_ops compiled");
    };
    assert_eq!(d.kind, ErrorKind::Unsupported);
    let text = d.to_string();
    assert!(
        text.starts_with(&format!(
            "{} operators of the model cannot be compiled",
            refused.len()
        )),
        "{text}"
    );
    for op in refused {
        let entry = format!(
            "op {} ({}, {}): ",
            op.id.0,
            op.kind.name(),
            kiln_build::lower::op_types(&graph, op)
        );
        assert!(text.contains(&entry), "{entry} missing from: {text}");
    }
}
