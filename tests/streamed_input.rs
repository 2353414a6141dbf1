//! A streamed input (`streamed_input = true`): the generated `invoke` takes a
//! `kiln::RowSource` and reads the input strip by strip, never whole; the outputs are TFLM's
//! golden ones byte for byte (float32 bit for bit), and the arena is smaller than any plan
//! that holds the input. The row source sees its requests in order, overlapping by at most
//! `INPUT_HALO_ROWS`.

mod common;

use std::path::Path;

/// Issue 30: at most 12 KB of arena with a streamed input (regions chained strip to strip,
/// no cut between them ever whole).
mod person_detect {
    kiln::include_model!(
        "../../shared/models/tflm_person_detect_int8.tflite",
        streamed_input = true,
        ram_budget = 12288
    );
}

mod vww {
    kiln::include_model!(
        "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite",
        streamed_input = true,
        ram_budget = 19008
    );
}

mod blazeface {
    kiln::include_model!(
        "../../shared/models/realworld/openmv_blazeface_front_128.tflite",
        streamed_input = true,
        ram_budget = 113664
    );
}

/// The fastest streamed plan (no budget): the first operators in as few strips as pay.
mod person_detect_fast {
    kiln::include_model!(
        "../../shared/models/tflm_person_detect_int8.tflite",
        streamed_input = true
    );
}

/// Runs `invoke` with a source over `input` that checks the contract: whole rows, requests
/// in order, overlapping the one before by at most `halo` rows, every row read.
fn run_checked(
    input: &[u8],
    rows: usize,
    row_bytes: usize,
    halo: usize,
    invoke: impl FnOnce(&mut dyn FnMut(usize, &mut [u8])),
) {
    assert_eq!(input.len(), rows * row_bytes);
    let mut last: Option<(usize, usize)> = None;
    let mut seen = vec![false; rows];
    let mut source = |first: usize, out: &mut [u8]| {
        assert_eq!(out.len() % row_bytes, 0, "whole rows");
        let n = out.len() / row_bytes;
        if let Some((f, end)) = last {
            assert!(
                first >= f && first + n > end,
                "in order: {first}+{n} after {f}..{end}"
            );
            assert!(
                end <= first + halo,
                "overlap of {} rows > {halo}",
                end - first
            );
        }
        last = Some((first, first + n));
        seen[first..first + n].fill(true);
        out.copy_from_slice(&input[first * row_bytes..(first + n) * row_bytes]);
    };
    invoke(&mut source);
    assert!(seen.iter().all(|&s| s), "every row is read");
}

macro_rules! streamed {
    ($name:ident, $m:ident, $dir:expr, $below:expr) => {
        #[test]
        fn $name() {
            use $m::*;
            // Smaller than the smallest plan holding the input.
            assert!(ARENA_BYTES < $below, "{ARENA_BYTES}");
            assert_eq!(INPUTS, 0);
            let dir: &Path = &$dir;
            let mut m = Model::take().expect("taken once");
            for s in common::samples(dir) {
                let input = &s.inputs[0];
                run_checked(input, INPUT_ROWS, INPUT_ROW_BYTES, INPUT_HALO_ROWS, |src| {
                    m.invoke(src)
                });
                for (i, want) in s.outputs.iter().enumerate() {
                    assert_eq!(m.output_bytes(i), &want[..], "sample {} output {i}", s.seed);
                }
                // The same through `invoke_with` and an in-memory source.
                let mut calls = 0;
                m.invoke_with(
                    &mut kiln::stream::InMemory {
                        bytes: input,
                        row_bytes: INPUT_ROW_BYTES,
                    },
                    |_, _, _| calls += 1,
                );
                assert_eq!(calls, 2 * OPERATORS.len());
                assert_eq!(m.output_bytes(0), &s.outputs[0][..]);
            }
        }
    };
}

// The smallest plans holding the input: vww's 36,864 bytes, blazeface's 196,608 (its float
// input alone); person_detect's 18,432, below which only a streamed input goes: 12 KB.
streamed!(
    person_detect_streams,
    person_detect,
    common::shared_models().join("golden/tflm_person_detect_int8"),
    12289
);
streamed!(
    vww_streams,
    vww,
    common::shared_models().join("golden/mlperf_tiny_vww_mobilenetv1_025_96_int8"),
    36864
);
streamed!(
    blazeface_streams,
    blazeface,
    common::repo_root().join("tests/realworld/openmv_blazeface_front_128"),
    196608
);
streamed!(
    person_detect_fast_streams,
    person_detect_fast,
    common::shared_models().join("golden/tflm_person_detect_int8"),
    usize::MAX
);
