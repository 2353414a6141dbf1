//! Patch-based execution (`kiln_planner::tiling`): tiled graphs compute the same bytes as
//! untiled ones, and their plans verify.
//!
//! - The public models: for every region Kiln can tile, the fewest and the most strips, run
//!   on the host executor, give TFLM's golden outputs byte for byte (the generated code of
//!   the tiled plans Kiln picks under a budget runs in `e2e_shared.rs`).
//! - Random chains of spatial operators (shapes, strides, dilations, padding modes, pooling,
//!   activations, ADD, strip counts): tiled and untiled outputs equal byte for byte.
//! - The independent check (`tiling::check`) rejects wrong tilings.

mod common;

use kiln_planner::ir::{
    Activation, AddSubOptions, Conv2dOptions, DType, DepthwiseConv2dOptions, Graph, Op, OpId,
    OpKind, Padding, Pool2dOptions, Quantization, Tensor, TensorId, TensorKind,
};
use kiln_planner::tiling::{self, Tiling};
use proptest::prelude::*;

/// Runs `graph` on the host with `inputs`; the graph outputs' bytes.
fn run(graph: &Graph, inputs: &[&[u8]]) -> Vec<Vec<u8>> {
    let steps = kiln_build::lower::lower_all(graph).expect("lowers");
    let d = kiln_build::lower::declared(&steps);
    // The plan of every tiled graph passes the verifier (plan() runs it).
    kiln_planner::plan(graph, &d, &Default::default()).expect("plans and verifies");
    let out = kiln_build::exec::run(graph, &steps, inputs);
    graph
        .outputs
        .iter()
        .map(|o| out[o.0].bytes().to_vec())
        .collect()
}

#[test]
fn public_models_tile_byte_identically() {
    let models = [
        "tflm_person_detect_int8",
        "mlperf_tiny_vww_mobilenetv1_025_96_int8",
        "mlperf_tiny_ic_resnet8_int8",
        "mlperf_tiny_kws_dscnn_int8",
        "mlperf_tiny_sww_int8",
    ];
    for stem in models {
        let bytes = std::fs::read(common::shared_models().join(format!("{stem}.tflite"))).unwrap();
        let graph = kiln_planner::read_model(&bytes).unwrap();
        let samples = common::samples(&common::shared_models().join("golden").join(stem));
        let s = &samples[0];
        let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
        let candidates = tiling::candidates(&graph);
        assert!(!candidates.is_empty(), "{stem} has a region to tile");
        // Per region, the fewest and the most strips.
        let mut chosen: Vec<Tiling> = Vec::new();
        for c in &candidates {
            let of_region = |t: &&Tiling| (t.start, t.end) == (c.start, c.end);
            let first = candidates.iter().find(of_region).expect("c itself");
            let last = candidates.iter().rfind(of_region).expect("c itself");
            for t in [first, last] {
                if !chosen.contains(t) {
                    chosen.push(*t);
                }
            }
        }
        for t in chosen {
            let tiled = tiling::tile(&graph, t).unwrap();
            assert_eq!(run(&tiled.graph, &inputs), s.outputs, "{stem} {t:?}");
        }
    }
}

/// A MobileNetV2-style model (inverted residuals with ADD skips, `tools/gen_tiling_models.py`)
/// compiled by `include_model!` under a budget only a tiling meets (`kiln plan --min-ram`'s
/// arena; the smallest untiled plan takes 46,656 B): byte-identical with TFLM.
mod mobilenetv2 {
    kiln::include_model!("models/tiling/mobilenetv2_int8.tflite", ram_budget = 33168);
}

#[test]
fn mobilenetv2_with_residuals_tiles_under_a_budget() {
    check_golden!(
        mobilenetv2,
        common::repo_root().join("tests/models/tiling/golden/mobilenetv2_int8")
    );
    assert_eq!(mobilenetv2::ARENA_BYTES, 33168);
    // Every tiling of it on the host, each byte-identical.
    let bytes =
        std::fs::read(common::repo_root().join("tests/models/tiling/mobilenetv2_int8.tflite"))
            .unwrap();
    let graph = kiln_planner::read_model(&bytes).unwrap();
    let samples =
        common::samples(&common::repo_root().join("tests/models/tiling/golden/mobilenetv2_int8"));
    let inputs: Vec<&[u8]> = samples[0].inputs.iter().map(Vec::as_slice).collect();
    let candidates = tiling::candidates(&graph);
    // The regions reach past both residual ADDs.
    assert!(candidates.iter().any(|t| t.end >= 9));
    for t in candidates.into_iter().filter(|t| t.patches <= 4) {
        let tiled = tiling::tile(&graph, t).unwrap();
        assert_eq!(run(&tiled.graph, &inputs), samples[0].outputs, "{t:?}");
    }
}

/// 2-D patches (issue 30): a model over a wide image (a 32 x 256 x 1 spectrogram,
/// `tools/gen_tiling_models.py`) compiled by `include_model!` at `kiln plan --min-ram`'s
/// arena, which only patches of rows and columns reach: byte-identical with TFLM.
mod wide_spectrogram {
    kiln::include_model!(
        "models/tiling/wide_spectrogram_int8.tflite",
        ram_budget = 28032
    );
}

/// The wide spectrogram's rows are few and long (256 columns of 32 channels): strips of rows
/// alone reach 65,024 B at best within 20 % extra MACs (8 strips); `--min-ram` runs its
/// first four operators in patches of rows and columns, under 32 KB (28,032 B: 8 strips of
/// rows, each in 8 patches of columns, 17.9 % extra MACs), and the generated code
/// (`include_model!` at that budget: a SLICE copying each patch's input, a CONCATENATION of
/// each band's patches along the columns) and the host executor give TFLM's outputs. At the
/// arena strips of rows reach, with the slow in-place kernels, a budget takes patches
/// with the fastest kernels. On the emulated M4 (opt-level 3): 21.7 M instructions untiled
/// (549,056 B); at a 65,024-byte budget 61.6 M in 10 strips of rows, 24.8 M in 6x3
/// patches; at 28,032 B (patches only) 30.3 M.
#[test]
fn wide_images_run_in_patches_of_rows_and_columns() {
    let dir = common::repo_root().join("tests/models/tiling/golden/wide_spectrogram_int8");
    check_golden!(wide_spectrogram, dir);
    let bytes =
        std::fs::read(common::repo_root().join("tests/models/tiling/wide_spectrogram_int8.tflite"))
            .unwrap();
    let mut o = kiln_build::Options::default();
    o.tiling.min_ram = true;
    let c = kiln_build::compile_tokens(&bytes, &o).unwrap();
    let t = c.tiling.as_ref().expect("tiled");
    assert!(t.columns > 1, "{t:?}");
    assert!(c.plan.arena_bytes < 32768, "{}", c.plan.arena_bytes);
    assert!(t.extra_macs * 100 <= c.macs * 20, "{t:?}");
    let samples = common::samples(&dir);
    for s in &samples {
        let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
        assert_eq!(run(&c.graph, &inputs), s.outputs);
    }
    // Strips of rows alone (`kiln plan --strips-only`): twice the arena or more.
    o.tiling.columns = false;
    let rows_only = kiln_build::compile_tokens(&bytes, &o)
        .unwrap()
        .plan
        .arena_bytes;
    assert!(
        rows_only >= 2 * c.plan.arena_bytes,
        "{rows_only} B in strips of rows"
    );
    // At that arena strips of rows need the slow in-place kernels; patches meet it with the
    // fastest ones, fewer extra MACs, and are taken.
    let budget = |columns: bool| {
        let mut o = kiln_build::Options {
            ram_budget: Some(kiln_build::Budget::Bytes(rows_only)),
            ..Default::default()
        };
        o.tiling.columns = columns;
        kiln_build::compile_tokens(&bytes, &o).unwrap()
    };
    let (strips, patches) = (budget(false), budget(true));
    assert!(!strips.header.plan_variant.starts_with("fastest"));
    assert!(patches.header.plan_variant.starts_with("fastest"));
    let (s, p) = (strips.tiling.unwrap(), patches.tiling.unwrap());
    assert!(p.columns > 1 && p.extra_macs < s.extra_macs, "{p:?} {s:?}");
    let inputs: Vec<&[u8]> = samples[0].inputs.iter().map(Vec::as_slice).collect();
    assert_eq!(run(&patches.graph, &inputs), samples[0].outputs);
}

/// The independent check rejects patches of rows and columns that read the wrong columns,
/// lose a column's padding, leave a patch out of a band, or claim other columns.
#[test]
fn the_check_rejects_wrong_patches() {
    let bytes =
        std::fs::read(common::repo_root().join("tests/models/tiling/wide_spectrogram_int8.tflite"))
            .unwrap();
    let graph = kiln_planner::read_model(&bytes).unwrap();
    let t = Tiling {
        start: 0,
        end: 4,
        patches: 4,
        columns: 3,
    };
    let tiled = tiling::tile(&graph, t).unwrap();
    tiling::check::check(&graph, &tiled).unwrap();
    let rejected = |bad: &tiling::Tiled, what: &str| {
        assert!(tiling::check::check(&graph, bad).is_err(), "{what}");
    };
    // A patch's window a column off, or without its padding columns.
    for (i, (_, w)) in tiled.graph.row_windows.iter().enumerate() {
        let mut bad = tiled.clone();
        bad.graph.row_windows[i].1.input_col = w.input_col + 1;
        rejected(&bad, "a column off");
        let mut bad = tiled.clone();
        bad.graph.row_windows[i].1.output_col = w.output_col + 1;
        rejected(&bad, "output columns off");
    }
    // A band without its last patch, or with two patches swapped.
    let band = (0..tiled.graph.ops.len())
        .find(|&i| tiled.op_origin[i] == tiling::Origin::Band)
        .expect("a band");
    let mut bad = tiled.clone();
    bad.graph.ops[band].inputs.pop();
    rejected(&bad, "a patch left out");
    let mut bad = tiled.clone();
    bad.graph.ops[band].inputs.swap(0, 1);
    rejected(&bad, "patches swapped");
    // A patch tensor claiming columns one further on.
    let patch = tiled
        .tensor_origin
        .iter()
        .position(|o| matches!(o, tiling::Origin::Patch(_, _, c) if *c > 0))
        .expect("a patch");
    let mut bad = tiled.clone();
    let tiling::Origin::Patch(m, r, c) = bad.tensor_origin[patch] else {
        unreachable!()
    };
    bad.tensor_origin[patch] = tiling::Origin::Patch(m, r, c + 1);
    rejected(&bad, "other columns claimed");
}

/// BlazeFace (`../shared/models/realworld/`, float32 in) compiled by `include_model!` at
/// `kiln plan --min-ram`'s arena: 196,608 B, its float input alone. Its QUANTIZE writes the
/// int8 image over the floats' start in place (narrowing in place, issue 30: the input and
/// output live together would take 245,760 B), and the first layers run in strips.
mod blazeface_min_ram {
    kiln::include_model!(
        "../../shared/models/realworld/openmv_blazeface_front_128.tflite",
        ram_budget = 196608
    );
}

/// [`blazeface_min_ram`] gives TFLM's outputs (`tests/realworld`, float32 bit for bit) on
/// every sample; `tests/e2e_realworld.rs` checks every layer of the untiled graph (debug
/// mode) and the default plan, which runs the QUANTIZE in place too.
#[test]
fn blazeface_quantizes_in_place_at_its_min_ram_arena() {
    assert_eq!(blazeface_min_ram::ARENA_BYTES, 196608);
    assert_eq!(blazeface_min_ram::PERSISTENT_BYTES, 0);
    check_golden!(
        blazeface_min_ram,
        common::repo_root().join("tests/realworld/openmv_blazeface_front_128")
    );
}

/// The public models compiled with RAM budgets from `--min-ram`'s arena up to the smallest
/// untiled one: the plan meets the budget (tiled where it must be), within the MAC cap, and
/// the compiled graph gives TFLM's golden outputs.
#[test]
fn budgets_between_min_ram_and_untiled() {
    // The public models whose `--min-ram` arena is tiled (BENCHMARKS.md); on the others it
    // is the smallest untiled plan.
    for stem in [
        "tflm_person_detect_int8",
        "mlperf_tiny_vww_mobilenetv1_025_96_int8",
        "mlperf_tiny_ic_resnet8_int8",
        "tflm_micro_speech_int8",
    ] {
        let bytes = std::fs::read(common::shared_models().join(format!("{stem}.tflite"))).unwrap();
        let samples = common::samples(&common::shared_models().join("golden").join(stem));
        let s = &samples[0];
        let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
        let compile =
            |options: kiln_build::Options| kiln_build::compile_tokens(&bytes, &options).unwrap();
        let mut min = kiln_build::Options::default();
        min.tiling.min_ram = true;
        let min = compile(min).plan.arena_bytes;
        let untiled = compile(kiln_build::Options::default());
        let untiled = untiled
            .smallest_arena_bytes
            .unwrap_or(untiled.plan.arena_bytes);
        assert!(min < untiled, "{stem}: {min} < {untiled}");
        let steps = 4;
        for i in 0..steps {
            let budget = min + (untiled - 1 - min) * i / (steps - 1);
            let c = compile(kiln_build::Options {
                ram_budget: Some(kiln_build::Budget::Bytes(budget)),
                ..Default::default()
            });
            assert!(c.plan.arena_bytes <= budget, "{stem}: budget {budget}");
            assert!(c.tiling.is_some(), "{stem}: budget {budget} needs tiling");
            let extra = c.tiling.as_ref().unwrap().extra_macs;
            assert!(extra * 100 <= c.macs * 20, "{stem}: {extra} extra MACs");
            assert_eq!(run(&c.graph, &inputs), s.outputs, "{stem}: budget {budget}");
        }
    }
}

/// The smallest plan without tiling (tiling off, as with a named-constant budget, control
/// flow or debug mode) is at or below the best-order live-bytes bound on every public model
/// without kernel state; on ic_resnet8 and micro_speech the fast convolutions' scratch lifted
/// it above (issue 30), and there it runs them on their reference kernels, which need none,
/// and still gives TFLM's golden outputs. The bound is the planner's: the tensors' live bytes
/// alone (no scratch, a buffer per tensor) for the best order it finds. (Under 1 s.)
#[test]
fn the_smallest_untiled_plan_reaches_the_bound() {
    let mut models: Vec<_> = std::fs::read_dir(common::shared_models())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
        .collect();
    models.sort();
    let mut without_scratch = Vec::new();
    for path in models {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let graph = kiln_planner::read_model(&bytes).unwrap();
        if !graph.kernel_state.is_empty() {
            continue;
        }
        let no_aliasing = kiln_planner::PlanOptions {
            aliasing: kiln_planner::alias::AliasOptions::none(),
            ..Default::default()
        };
        let bound = kiln_planner::plan(&graph, &kiln_planner::NoKernels, &no_aliasing)
            .unwrap()
            .lower_bound_bytes;
        let mut o = kiln_build::Options::default();
        o.tiling.enabled = false;
        o.tiling.min_ram = true;
        let c = kiln_build::compile_tokens(&bytes, &o).unwrap();
        assert!(c.tiling.is_none());
        assert!(
            c.plan.arena_bytes <= bound,
            "{stem}: smallest untiled arena {} above the bound {bound}",
            c.plan.arena_bytes
        );
        if !c
            .header
            .plan_variant
            .starts_with("smallest without scratch")
        {
            continue;
        }
        without_scratch.push(stem.clone());
        // The generated code calls no fast convolution.
        let code = c.tokens.to_string();
        assert!(
            !code.contains("conv_2d_s8_fast"),
            "{stem}: a fast kernel runs"
        );
        // The steps of that plan (the reference kernels) give the golden outputs.
        let steps: Vec<_> = kiln_build::lower::lower_all(&graph)
            .unwrap()
            .into_iter()
            .map(|mut s| match s.without_scratch.take() {
                Some(reference) => *reference,
                None => s,
            })
            .collect();
        let samples = common::samples(&common::shared_models().join("golden").join(&stem));
        let s = &samples[0];
        let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
        let out = kiln_build::exec::run(&graph, &steps, &inputs);
        let out: Vec<Vec<u8>> = graph
            .outputs
            .iter()
            .map(|o| out[o.0].bytes().to_vec())
            .collect();
        assert_eq!(out, s.outputs, "{stem}");
    }
    for stem in ["mlperf_tiny_ic_resnet8_int8", "tflm_micro_speech_int8"] {
        assert!(without_scratch.iter().any(|s| s == stem), "{stem}");
    }
}

/// A budget that the untiled plans meet only with the slow in-place convolutions takes a
/// tiling that meets it with the fastest kernels (on the emulated M4 person_detect then
/// takes 18.6 M instructions instead of 22.1 M), byte-identical; where an untiled
/// plan meets the budget with the fastest kernels, nothing is tiled.
#[test]
fn a_budget_takes_faster_kernels_tiled_over_slow_ones_untiled() {
    let stem = "tflm_person_detect_int8";
    let bytes = std::fs::read(common::shared_models().join(format!("{stem}.tflite"))).unwrap();
    let samples = common::samples(&common::shared_models().join("golden").join(stem));
    let s = &samples[0];
    let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
    let budget = |bytes: usize, tile: bool| {
        let mut o = kiln_build::Options {
            ram_budget: Some(kiln_build::Budget::Bytes(bytes)),
            ..Default::default()
        };
        o.tiling.enabled = tile;
        o
    };
    let compile = |o: kiln_build::Options| kiln_build::compile_tokens(&bytes, &o).unwrap();
    let untiled = compile(budget(40960, false));
    assert!(untiled.tiling.is_none());
    assert!(
        untiled.header.plan_variant.starts_with("smallest"),
        "{}",
        untiled.header.plan_variant
    );
    let c = compile(budget(40960, true));
    assert!(c.tiling.is_some(), "a tiling with faster kernels");
    assert!(
        c.header.plan_variant.starts_with("fastest"),
        "{}",
        c.header.plan_variant
    );
    assert!(c.plan.arena_bytes <= 40960);
    let extra = c.tiling.as_ref().unwrap().extra_macs;
    assert!(extra * 100 <= c.macs * 20, "{extra} extra MACs");
    assert_eq!(run(&c.graph, &inputs), s.outputs);
    // The fastest untiled plan (55,296 B) meets this one: no tiling.
    let c = compile(budget(60000, true));
    assert!(c.tiling.is_none());
    assert!(c.header.plan_variant.starts_with("fastest"));
}

/// Under a budget that only plans with slow in-place convolutions meet, the plan with the
/// fewest estimated instructions is taken, not the one with the fewest extra MACs: at
/// 24,576 bytes person_detect took 4 strips (0.8 % extra MACs, a 20,736-byte arena) with
/// five pointwise and two depthwise convolutions in place, 23.16 M instructions on the
/// emulated M4; 6 strips (1.4 %, 19,008 bytes) need two of each and take 22.86 M
/// (BENCHMARKS.md, "Speed against the budget"). Byte-identical.
#[test]
fn a_budget_takes_the_plan_with_the_fewest_slow_forms() {
    let stem = "tflm_person_detect_int8";
    let bytes = std::fs::read(common::shared_models().join(format!("{stem}.tflite"))).unwrap();
    let samples = common::samples(&common::shared_models().join("golden").join(stem));
    let s = &samples[0];
    let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
    let c = kiln_build::compile_tokens(
        &bytes,
        &kiln_build::Options {
            ram_budget: Some(kiln_build::Budget::Bytes(24576)),
            ..Default::default()
        },
    )
    .unwrap();
    let slow = |kernel: &str| {
        c.header
            .kernel_variants
            .iter()
            .filter(|k| k.kernel.ends_with(kernel))
            .map(|k| k.ops.len())
            .sum::<usize>()
    };
    let tiling = c.tiling.as_ref().expect("tiled");
    assert_eq!(tiling.patches, 6, "{tiling:?}");
    assert_eq!(slow("conv_2d_s8_fast_pointwise_in_place"), 2);
    assert_eq!(slow("depthwise_conv_2d_s8_fast_in_place"), 2);
    assert!(c.plan.arena_bytes <= 24576);
    assert_eq!(run(&c.graph, &inputs), s.outputs);
}

/// A random chain's layer.
#[derive(Clone, Debug)]
enum Layer {
    Conv {
        k: usize,
        stride: usize,
        dilation: usize,
        same: bool,
        out_c: usize,
    },
    Depthwise {
        k: usize,
        stride: usize,
        dilation: usize,
        same: bool,
        mult: usize,
    },
    Pool {
        max: bool,
        k: usize,
        stride: usize,
        same: bool,
    },
    /// PAD (PADV2 with `value`) of rows and columns before and after.
    Pad {
        rows: [usize; 2],
        cols: [usize; 2],
        value: Option<i8>,
    },
    Relu,
    /// ADD of the current image and the one `back` layers before, if of one shape (else
    /// of the current image with itself).
    Add {
        back: usize,
    },
}

fn layer() -> impl Strategy<Value = Layer> {
    prop_oneof![
        (
            1usize..=3,
            1usize..=2,
            1usize..=2,
            any::<bool>(),
            1usize..=4
        )
            .prop_map(|(k, stride, dilation, same, out_c)| Layer::Conv {
                k,
                stride,
                dilation,
                same,
                out_c
            }),
        (
            1usize..=3,
            1usize..=2,
            1usize..=2,
            any::<bool>(),
            1usize..=2
        )
            .prop_map(|(k, stride, dilation, same, mult)| Layer::Depthwise {
                k,
                stride,
                dilation,
                same,
                mult
            }),
        (any::<bool>(), 1usize..=3, 1usize..=2, any::<bool>()).prop_map(
            |(max, k, stride, same)| Layer::Pool {
                max,
                k,
                stride,
                same
            }
        ),
        (
            [0usize..=3, 0usize..=3],
            [0usize..=2, 0usize..=2],
            prop::option::of(any::<i8>())
        )
            .prop_map(|(rows, cols, value)| Layer::Pad { rows, cols, value }),
        Just(Layer::Relu),
        (1usize..=3).prop_map(|back| Layer::Add { back }),
    ]
}

/// Builds an int8 graph of `layers` over a `[1, h, w, c]` input (layers whose output would
/// be empty are left out); weights and biases from `seed`.
fn chain(h: usize, w: usize, c: usize, layers: &[Layer], seed: u64) -> Graph {
    let mut g = Graph::default();
    let mut rng = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) as u32
    };
    let mut buffer = 0;
    let mut tensor = |g: &mut Graph, shape: Vec<usize>, dtype, quant, data: Option<Vec<u8>>| {
        let id = TensorId(g.tensors.len());
        let kind = match data {
            Some(data) => {
                buffer += 1;
                TensorKind::Constant {
                    buffer,
                    offset: 0,
                    data,
                }
            }
            None => TensorKind::Activation,
        };
        g.tensors.push(Tensor {
            id,
            name: format!("t{}", id.0),
            shape,
            dtype,
            quant,
            kind,
        });
        id
    };
    let q = |scale: f32, zero_point: i64| Quantization::PerTensor { scale, zero_point };
    let x = tensor(&mut g, vec![1, h, w, c], DType::I8, q(0.05, 3), None);
    g.inputs.push(x);
    let mut images = vec![x];
    let out_size = |n: usize, k: usize, s: usize, d: usize, same: bool| {
        let e = (k - 1) * d + 1;
        if same {
            n.div_ceil(s)
        } else {
            (n + s).saturating_sub(e) / s
        }
    };
    for (i, l) in layers.iter().enumerate() {
        let cur = *images.last().unwrap();
        let shape = g.tensors[cur.0].shape.clone();
        let quant = g.tensors[cur.0].quant.clone();
        let (hh, ww, cc) = (shape[1], shape[2], shape[3]);
        let oq = q(0.04 + 0.01 * (next() % 8) as f32, (next() % 11) as i64 - 5);
        let padding = |same| if same { Padding::Same } else { Padding::Valid };
        let (kind, inputs, out_shape, out_quant) = match *l {
            Layer::Conv {
                k,
                stride,
                dilation,
                same,
                out_c,
            } => {
                let (oh, ow) = (
                    out_size(hh, k, stride, dilation, same),
                    out_size(ww, k, stride, dilation, same),
                );
                if oh == 0 || ow == 0 {
                    continue;
                }
                let wdata: Vec<u8> = (0..out_c * k * k * cc).map(|_| next() as u8).collect();
                let f = tensor(
                    &mut g,
                    vec![out_c, k, k, cc],
                    DType::I8,
                    q(0.02, 0),
                    Some(wdata),
                );
                let bdata: Vec<u8> = (0..out_c)
                    .flat_map(|_| ((next() % 2001) as i32 - 1000).to_le_bytes())
                    .collect();
                let b = tensor(&mut g, vec![out_c], DType::I32, q(0.001, 0), Some(bdata));
                let o = Conv2dOptions {
                    padding: padding(same),
                    stride_w: stride as i32,
                    stride_h: stride as i32,
                    dilation_w: dilation as i32,
                    dilation_h: dilation as i32,
                    activation: if i % 2 == 0 {
                        Activation::Relu6
                    } else {
                        Activation::None
                    },
                };
                (
                    OpKind::Conv2d(o),
                    vec![Some(cur), Some(f), Some(b)],
                    vec![1, oh, ow, out_c],
                    oq,
                )
            }
            Layer::Depthwise {
                k,
                stride,
                dilation,
                same,
                mult,
            } => {
                let (oh, ow) = (
                    out_size(hh, k, stride, dilation, same),
                    out_size(ww, k, stride, dilation, same),
                );
                if oh == 0 || ow == 0 {
                    continue;
                }
                let oc = cc * mult;
                let wdata: Vec<u8> = (0..k * k * oc).map(|_| next() as u8).collect();
                let f = tensor(
                    &mut g,
                    vec![1, k, k, oc],
                    DType::I8,
                    q(0.02, 0),
                    Some(wdata),
                );
                let bdata: Vec<u8> = (0..oc)
                    .flat_map(|_| ((next() % 2001) as i32 - 1000).to_le_bytes())
                    .collect();
                let b = tensor(&mut g, vec![oc], DType::I32, q(0.001, 0), Some(bdata));
                let o = DepthwiseConv2dOptions {
                    padding: padding(same),
                    stride_w: stride as i32,
                    stride_h: stride as i32,
                    depth_multiplier: mult as i32,
                    dilation_w: dilation as i32,
                    dilation_h: dilation as i32,
                    activation: Activation::None,
                };
                (
                    OpKind::DepthwiseConv2d(o),
                    vec![Some(cur), Some(f), Some(b)],
                    vec![1, oh, ow, oc],
                    oq,
                )
            }
            Layer::Pool {
                max,
                k,
                stride,
                same,
            } => {
                let (oh, ow) = (
                    out_size(hh, k, stride, 1, same),
                    out_size(ww, k, stride, 1, same),
                );
                if oh == 0 || ow == 0 {
                    continue;
                }
                let o = Pool2dOptions {
                    padding: padding(same),
                    stride_w: stride as i32,
                    stride_h: stride as i32,
                    filter_w: k as i32,
                    filter_h: k as i32,
                    activation: Activation::None,
                };
                let kind = if max {
                    OpKind::MaxPool2d(o)
                } else {
                    OpKind::AveragePool2d(o)
                };
                (kind, vec![Some(cur)], vec![1, oh, ow, cc], quant)
            }
            Layer::Pad { rows, cols, value } => {
                let pairs = [0, 0, rows[0], rows[1], cols[0], cols[1], 0, 0];
                let data = pairs
                    .iter()
                    .flat_map(|&v| (v as i32).to_le_bytes())
                    .collect();
                let p = tensor(
                    &mut g,
                    vec![4, 2],
                    DType::I32,
                    Quantization::None,
                    Some(data),
                );
                let (kind, mut inputs) = (OpKind::Pad, vec![Some(cur), Some(p)]);
                let kind = match value {
                    Some(v) => {
                        let v = tensor(
                            &mut g,
                            vec![1],
                            DType::I8,
                            quant.clone(),
                            Some(vec![v as u8]),
                        );
                        inputs.push(Some(v));
                        OpKind::PadV2
                    }
                    None => kind,
                };
                let out = vec![1, hh + rows[0] + rows[1], ww + cols[0] + cols[1], cc];
                (kind, inputs, out, quant)
            }
            Layer::Relu => (OpKind::Relu, vec![Some(cur)], shape.clone(), quant),
            Layer::Add { back } => {
                let other = images
                    .iter()
                    .rev()
                    .nth(back)
                    .copied()
                    .filter(|t| g.tensors[t.0].shape == shape)
                    .unwrap_or(cur);
                let o = AddSubOptions {
                    activation: Activation::None,
                    pot_scale_int16: false,
                };
                (
                    OpKind::Add(o),
                    vec![Some(cur), Some(other)],
                    shape.clone(),
                    oq,
                )
            }
        };
        let y = tensor(&mut g, out_shape, DType::I8, out_quant, None);
        g.ops.push(Op {
            id: OpId(g.ops.len()),
            kind,
            inputs,
            outputs: vec![y],
            intermediates: Vec::new(),
        });
        images.push(y);
    }
    g.outputs.push(*images.last().unwrap());
    g
}

/// PAD and PADV2 inside tiled regions (issue 30): every tiling of a chain with paddings of
/// the rows at the top, at the bottom and of the columns, strips of padding rows alone
/// included, gives the untiled bytes; the PADs run on strips ([`ir::RowWindow`]s).
#[test]
fn pads_tile_byte_identically() {
    let conv = |k, stride, same| Layer::Conv {
        k,
        stride,
        dilation: 1,
        same,
        out_c: 3,
    };
    let layers = [
        conv(3, 1, false),
        Layer::Pad {
            rows: [2, 1],
            cols: [1, 1],
            value: None,
        },
        conv(3, 2, false),
        Layer::Pad {
            rows: [0, 3],
            cols: [0, 2],
            value: Some(-7),
        },
        Layer::Depthwise {
            k: 3,
            stride: 1,
            dilation: 1,
            same: true,
            mult: 1,
        },
    ];
    let (h, w, c) = (13, 5, 2);
    let g = chain(h, w, c, &layers, 7);
    assert_eq!(g.ops.len(), layers.len());
    let input: Vec<u8> = (0..h * w * c).map(|i| (i as u64 * 7919) as u8).collect();
    let want = run(&g, &[&input]);
    let candidates = tiling::candidates(&g);
    // Regions through both PADs.
    assert!(
        candidates
            .iter()
            .any(|t| t.start == 0 && t.end == layers.len())
    );
    let mut pads_tiled = 0;
    for t in candidates {
        let tiled = match tiling::tile(&g, t) {
            Ok(tiled) => tiled,
            // A strip of padding rows alone reads no rows: declined, never wrong.
            Err(e) if e.kind == kiln_planner::ErrorKind::Unsupported => continue,
            Err(e) => panic!("{t:?}: {e}"),
        };
        let pads: Vec<usize> = (tiled.graph.row_windows.iter().enumerate())
            .filter(|(_, (op, _))| matches!(tiled.graph.op(*op).kind, OpKind::Pad | OpKind::PadV2))
            .map(|(i, _)| i)
            .collect();
        // The independent check rejects a PAD strip's window a row off.
        for &i in &pads {
            let mut bad = tiled.clone();
            bad.graph.row_windows[i].1.output_row += 1;
            assert!(tiling::check::check(&g, &bad).is_err(), "{t:?}");
        }
        pads_tiled += pads.len();
        assert_eq!(run(&tiled.graph, &[&input]), want, "{t:?}");
    }
    assert!(pads_tiled > 0);
}

/// MoveNet (`../shared/models/realworld/`) tiled through its first PAD (`--min-ram` takes such
/// a region) gives TFLM's golden outputs (`tests/realworld`) byte for byte (~11 s debug).
#[test]
fn movenet_tiles_through_its_pad_byte_identically() {
    let stem = "openmv_movenet_singlepose_192";
    let path = common::shared_models()
        .join("realworld")
        .join(format!("{stem}.tflite"));
    let graph = kiln_planner::read_model(&std::fs::read(path).unwrap()).unwrap();
    let pad = graph
        .ops
        .iter()
        .position(|op| matches!(op.kind, OpKind::Pad | OpKind::PadV2))
        .unwrap();
    let t = tiling::candidates(&graph)
        .into_iter()
        .filter(|t| t.start <= pad && pad < t.end)
        .max_by_key(|t| (t.end, std::cmp::Reverse(t.patches)))
        .expect("a region through the PAD");
    let tiled = tiling::tile(&graph, t).unwrap();
    assert!(
        tiled
            .graph
            .row_windows
            .iter()
            .any(|(op, _)| { matches!(tiled.graph.op(*op).kind, OpKind::Pad | OpKind::PadV2) })
    );
    let samples = common::samples(&common::repo_root().join("tests/realworld").join(stem));
    let s = &samples[0];
    let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
    assert_eq!(run(&tiled.graph, &inputs), s.outputs, "{t:?}");
}

/// The `--min-ram` plans of MoveNet and BlazeFace (`../shared/models/realworld/`) meet issue
/// 30's targets (at most 768 KB and 200 KB, at most 20 % extra MACs), and their tiled
/// graphs compute every layer as TFLM does: every operator-produced tensor of the model
/// (`tests/realworld/<stem>/layers.json`, TFLM's sha256 of each), the region's too, whose
/// strips' rows are put together (rows two strips both compute must agree): 88 layers of
/// MoveNet, 76 of BlazeFace. Host executor, the first sample. (~20 s debug.)
#[test]
fn min_ram_plans_of_large_vision_models_match_tflm_on_every_layer() {
    use sha2::{Digest, Sha256};
    for (stem, target) in [
        ("openmv_movenet_singlepose_192", 768 * 1024),
        ("openmv_blazeface_front_128", 200 * 1024),
    ] {
        let dir = common::repo_root().join("tests/realworld").join(stem);
        let path = common::shared_models()
            .join("realworld")
            .join(format!("{stem}.tflite"));
        let bytes = std::fs::read(path).unwrap();
        let mut o = kiln_build::Options::default();
        o.tiling.min_ram = true;
        let c = kiln_build::compile_tokens(&bytes, &o).unwrap();
        assert!(
            c.plan.arena_bytes <= target,
            "{stem}: {}",
            c.plan.arena_bytes
        );
        let report = c.tiling.as_ref().expect("tiled");
        assert!(report.extra_macs * 100 <= c.macs * 20, "{stem}: {report:?}");
        // The same rewrites, with what each tensor of the tiled graph is in the model.
        let graph = kiln_planner::read_model(&bytes).unwrap();
        let (tiled, origin) = retile(&graph, report);
        assert_eq!(tiled.ops.len(), c.graph.ops.len(), "{stem}");
        let samples = common::samples(&dir);
        let s = &samples[0];
        let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
        let steps = kiln_build::lower::lower_all(&tiled).unwrap();
        let values = kiln_build::exec::run(&tiled, &steps, &inputs);
        // Every tensor of the model, put together from the tensors of the tiled graph that
        // hold its rows (the model's own tensor, or strips), with the rows each covers.
        // (The region's own tensors stay in the tiled graph, written by no operator.)
        let written: Vec<bool> = (0..tiled.tensors.len())
            .map(|i| {
                tiled.inputs.iter().any(|t| t.0 == i)
                    || tiled
                        .ops
                        .iter()
                        .any(|op| op.outputs.iter().any(|t| t.0 == i))
            })
            .collect();
        let mut whole: Vec<Option<(Vec<u8>, Vec<bool>)>> = vec![None; graph.tensors.len()];
        for (i, o) in origin.iter().enumerate() {
            let Some((t, row)) = *o else {
                continue;
            };
            if i >= values.len() || !written[i] {
                continue;
            }
            let got = values[i].bytes();
            let model = graph.tensor(t);
            if got.is_empty() || model.is_constant() {
                continue;
            }
            let rows = if model.shape.len() == 4 {
                model.shape[1]
            } else {
                1
            };
            let row_bytes = model.bytes() / rows.max(1);
            let (buf, covered) = whole
                .get_mut(t.0)
                .unwrap()
                .get_or_insert_with(|| (vec![0; model.bytes()], vec![false; rows]));
            for (k, chunk) in got.chunks(row_bytes).enumerate() {
                let r = row + k;
                let at = &mut buf[r * row_bytes..(r + 1) * row_bytes];
                assert!(
                    !covered[r] || at == chunk,
                    "{stem}: two strips differ on row {r} of tensor {}",
                    t.0
                );
                at.copy_from_slice(chunk);
                covered[r] = true;
            }
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("layers.json")).unwrap())
                .unwrap();
        let want = json["sha256"][s.seed.to_string()].as_array().unwrap();
        let layers = json["layers"].as_array().unwrap();
        assert_eq!(layers.len(), want.len());
        for (l, want) in layers.iter().zip(want) {
            let t = l["tensor_index"].as_u64().unwrap() as usize;
            let (buf, covered) = whole[t]
                .as_ref()
                .unwrap_or_else(|| panic!("{stem}: tensor {t} is not computed"));
            assert!(
                covered.iter().all(|&c| c),
                "{stem}: rows of tensor {t} not computed"
            );
            let got: String = Sha256::digest(buf)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(
                got,
                want.as_str().unwrap(),
                "{stem}: op {} ({}) output, tensor {t}, differs from TFLM",
                l["op_index"],
                l["op"]
            );
        }
    }
}

/// A second region for `tiled` (a graph tiled once), as `--min-ram` tiles around a peak left
/// outside the strips: a tiling through an operator of the model outside them, picked by
/// `pick`, if there is one.
fn second_region(tiled: &tiling::Tiled, pick: prop::sample::Index) -> Option<Tiling> {
    let outside: Vec<usize> = (0..tiled.graph.ops.len())
        .filter(|&i| matches!(tiled.op_origin[i], tiling::Origin::Op(_)))
        .collect();
    let op = *outside.get(pick.index(outside.len().max(1)) % outside.len().max(1))?;
    let again = tiling::candidates_through(&tiled.graph, op);
    (!again.is_empty()).then(|| again[pick.index(again.len())])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_chains_tile_byte_identically(
        h in 4usize..=20,
        w in 1usize..=5,
        c in 1usize..=3,
        layers in prop::collection::vec(layer(), 1..=5),
        seed in any::<u64>(),
        pick in any::<prop::sample::Index>(),
    ) {
        let g = chain(h, w, c, &layers, seed);
        prop_assume!(!g.ops.is_empty());
        // Layers Kiln refuses as they are (e.g. an ADD whose scales no kernel takes) say
        // nothing about tiling.
        prop_assume!(kiln_build::lower::lower_all(&g).is_ok());
        let candidates = tiling::candidates(&g);
        prop_assume!(!candidates.is_empty());
        let t = candidates[pick.index(candidates.len())];
        let input: Vec<u8> = (0..h * w * c).map(|i| ((i as u64 * 7919) ^ seed) as u8).collect();
        let want = run(&g, &[&input]);
        let tiled = match tiling::tile(&g, t) {
            Ok(tiled) => tiled,
            // A tiling the rewrite declines (a PAD's strip of padding rows alone, which
            // reads no rows), as `compile_tokens` skips it; never a wrong one.
            Err(e) if e.kind == kiln_planner::ErrorKind::Unsupported => return Ok(()),
            Err(e) => panic!("{t:?}: {e}"),
        };
        prop_assert_eq!(run(&tiled.graph, &[&input]), want.clone(), "{:?}", t);
        // A second region, on the tiled graph, through an operator outside the strips (as
        // `--min-ram` tiles around a peak left there): checked against the tiled graph by
        // the rewrite, and the same bytes.
        if let Some(t2) = second_region(&tiled, pick) {
            match tiling::tile(&tiled.graph, t2) {
                Ok(twice) => prop_assert_eq!(
                    run(&twice.graph, &[&input]),
                    want.clone(),
                    "{:?} then {:?}",
                    t,
                    t2
                ),
                Err(e) if e.kind == kiln_planner::ErrorKind::Unsupported => {}
                Err(e) => panic!("{t:?} then {t2:?}: {e}"),
            }
            // Chained to the first region (where it starts at its cut): the same bytes.
            match tiling::tile_chained(&tiled.graph, t2) {
                Ok(twice) => prop_assert_eq!(
                    run(&twice.graph, &[&input]),
                    want.clone(),
                    "{:?} then {:?} chained",
                    t,
                    t2
                ),
                Err(e) if e.kind == kiln_planner::ErrorKind::Unsupported => {}
                Err(e) => panic!("{t:?} then {t2:?} chained: {e}"),
            }
        }
        // With the input streamed (where the region starts at it): the same bytes, the
        // reads in the order of their rows.
        if let Ok(streamed) = tiling::stream_input(&tiled) {
            prop_assert!(streamed.graph.inputs.is_empty());
            let firsts: Vec<usize> = streamed
                .graph
                .ops
                .iter()
                .filter_map(|op| tiling::read_rows(&streamed.graph, op).map(|(f, _)| f))
                .collect();
            prop_assert!(!firsts.is_empty() && firsts.windows(2).all(|w| w[0] <= w[1]));
            prop_assert_eq!(run(&streamed.graph, &[&input]), want, "{:?} streamed", t);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// 2-D patches (issue 30): random chains (convolutions, depthwise convolutions, pooling,
    /// PADs of rows and columns, activations, ADD) tiled in patches of rows and columns give
    /// the untiled bytes; so does a second region, in patches or strips, on the tiled graph.
    #[test]
    fn random_chains_tile_in_patches_byte_identically(
        h in 3usize..=14,
        w in 3usize..=14,
        c in 1usize..=3,
        layers in prop::collection::vec(layer(), 1..=5),
        seed in any::<u64>(),
        columns in 2usize..=5,
        pick in any::<prop::sample::Index>(),
    ) {
        let g = chain(h, w, c, &layers, seed);
        prop_assume!(!g.ops.is_empty());
        prop_assume!(kiln_build::lower::lower_all(&g).is_ok());
        let candidates = tiling::candidates(&g);
        prop_assume!(!candidates.is_empty());
        let t = Tiling { columns, ..candidates[pick.index(candidates.len())] };
        let input: Vec<u8> = (0..h * w * c).map(|i| ((i as u64 * 7919) ^ seed) as u8).collect();
        let want = run(&g, &[&input]);
        let tiled = match tiling::tile(&g, t) {
            Ok(tiled) => tiled,
            // Declined (fewer columns than patches, a patch of padding alone); never wrong.
            Err(e) if e.kind == kiln_planner::ErrorKind::Unsupported => return Ok(()),
            Err(e) => panic!("{t:?}: {e}"),
        };
        prop_assert!(tiled.graph.ops.iter().any(|op| matches!(
            op.kind,
            OpKind::Concatenation(o) if o.axis == 2
        )));
        prop_assert_eq!(run(&tiled.graph, &[&input]), want.clone(), "{:?}", t);
        if let Some(t2) = second_region(&tiled, pick) {
            let t2 = Tiling { columns: 1 + columns % 3, ..t2 };
            match tiling::tile(&tiled.graph, t2) {
                Ok(twice) => prop_assert_eq!(
                    run(&twice.graph, &[&input]),
                    want,
                    "{:?} then {:?}",
                    t,
                    t2
                ),
                Err(e) if e.kind == kiln_planner::ErrorKind::Unsupported => {}
                Err(e) => panic!("{t:?} then {t2:?}: {e}"),
            }
        }
    }
}

/// A tiling whose strips leave out a row, read the wrong rows, or lose the padding is
/// rejected by the independent check.
#[test]
fn the_check_rejects_wrong_tilings() {
    let layers = [
        Layer::Conv {
            k: 3,
            stride: 1,
            dilation: 1,
            same: true,
            out_c: 2,
        },
        Layer::Depthwise {
            k: 3,
            stride: 2,
            dilation: 1,
            same: true,
            mult: 1,
        },
    ];
    let g = chain(12, 3, 2, &layers, 7);
    let t = Tiling {
        start: 0,
        end: 2,
        patches: 3,
        columns: 1,
    };
    let good = tiling::tile(&g, t).unwrap();
    tiling::check::check(&g, &good).unwrap();
    // A strip's window one row later than the rows its output reads.
    let mut bad = good.clone();
    bad.graph.row_windows[1].1.input_row += 1;
    assert!(tiling::check::check(&g, &bad).is_err());
    // The cut assembled from two of its three strips.
    let mut bad = good.clone();
    let last = bad.graph.ops.len() - 1;
    bad.graph.ops[last].inputs.pop();
    assert!(tiling::check::check(&g, &bad).is_err());
    // A strip claiming rows of another tensor.
    let mut bad = good.clone();
    let first_strip = bad
        .op_origin
        .iter()
        .position(|o| matches!(o, tiling::Origin::Strip(_)))
        .unwrap();
    let strip = bad.graph.ops[first_strip].outputs[0];
    bad.tensor_origin[strip.0] = tiling::Origin::Rows(TensorId(0), 0);
    assert!(tiling::check::check(&g, &bad).is_err());
}

/// A region chained to the one before it (issue 30): tiled right after the cut of the
/// region before, its strips read their rows from that region's strips (a SLICE of one, or a
/// CONCATENATION gathering rows of two), the cut's assembling CONCATENATION is dropped, the
/// bytes are the untiled graph's, and the check rejects a gathering that takes other rows.
#[test]
fn chained_regions_never_assemble_the_cut_between_them() {
    let layers = [
        Layer::Conv {
            k: 3,
            stride: 1,
            dilation: 1,
            same: true,
            out_c: 2,
        },
        Layer::Depthwise {
            k: 3,
            stride: 1,
            dilation: 1,
            same: true,
            mult: 1,
        },
        Layer::Conv {
            k: 3,
            stride: 1,
            dilation: 1,
            same: true,
            out_c: 3,
        },
        Layer::Depthwise {
            k: 3,
            stride: 2,
            dilation: 1,
            same: true,
            mult: 1,
        },
    ];
    let g = chain(12, 3, 2, &layers, 7);
    let input: Vec<u8> = (0..12 * 3 * 2).map(|i| (i * 37 + 11) as u8).collect();
    let want = run(&g, &[&input]);
    let first = tiling::tile(
        &g,
        Tiling {
            start: 0,
            end: 2,
            patches: 4,
            columns: 1,
        },
    )
    .unwrap();
    let cut = first.cut;
    // The region of the two operators after the first region's cut.
    let start = (0..first.graph.ops.len())
        .find(|&i| first.op_origin[i] == tiling::Origin::Op(OpId(2)))
        .unwrap();
    let second = tiling::tile_chained(
        &first.graph,
        Tiling {
            start,
            end: start + 2,
            patches: 3,
            columns: 1,
        },
    )
    .unwrap();
    tiling::check::check(&first.graph, &second).unwrap();
    let g2 = &second.graph;
    // The first cut is neither written nor read: only strips of it.
    assert!(
        g2.ops
            .iter()
            .all(|op| !op.outputs.contains(&cut) && op.present_inputs().all(|t| t != cut))
    );
    let gathers: Vec<usize> = (0..g2.ops.len())
        .filter(|&i| second.op_origin[i] == tiling::Origin::Gather)
        .collect();
    assert!(!gathers.is_empty());
    assert_eq!(run(g2, &[&input]), want);
    // A gathering of its rows in the wrong order.
    let mut bad = second.clone();
    bad.graph.ops[gathers[0]].inputs.reverse();
    assert!(tiling::check::check(&first.graph, &bad).is_err());
    // A gathering claiming the rows one row later.
    let mut bad = second.clone();
    let out = bad.graph.ops[gathers[0]].outputs[0];
    let tiling::Origin::Rows(t, r) = bad.tensor_origin[out.0] else {
        panic!("a gathering holds rows")
    };
    bad.tensor_origin[out.0] = tiling::Origin::Rows(t, r + 1);
    assert!(tiling::check::check(&first.graph, &bad).is_err());
    // A gathering missing one of its pieces.
    let mut bad = second.clone();
    bad.graph.ops[gathers[0]].inputs.pop();
    assert!(tiling::check::check(&first.graph, &bad).is_err());
    // An operator of the graph tiled before claimed as something else (it is missing).
    let mut bad = second.clone();
    let strip = (0..bad.graph.ops.len())
        .find(|&i| bad.op_origin[i] == tiling::Origin::Op(OpId(0)))
        .unwrap();
    bad.op_origin[strip] = tiling::Origin::Slice;
    assert!(tiling::check::check(&first.graph, &bad).is_err());
}

/// The tiled graph of a compiled model's tiling report, rebuilt region after region from
/// the model (each further region's operators found by their origin in the graph tiled
/// before; each rewrite checked against the graph it rewrites), and what each of its tensors
/// holds of the model's: rows of which tensor, from which row (`None`: a constant of the
/// rewrite).
fn retile(
    graph: &Graph,
    report: &kiln_build::TilingReport,
) -> (Graph, Vec<Option<(TensorId, usize)>>) {
    use tiling::Origin;
    let first = Tiling {
        start: report.start,
        end: report.end,
        patches: report.patches,
        columns: 1,
    };
    let tiled = tiling::tile(graph, first).unwrap();
    let mut origin: Vec<Option<(TensorId, usize)>> = tiled
        .tensor_origin
        .iter()
        .map(|o| match *o {
            Origin::Rows(t, r) if t.0 < graph.tensors.len() => Some((t, r)),
            _ => None,
        })
        .collect();
    let mut op_origin = tiled.op_origin;
    let mut g = tiled.graph;
    for m in &report.more {
        let start = op_origin
            .iter()
            .position(|o| *o == Origin::Op(OpId(m.start)))
            .expect("the region's first operator is outside the strips");
        let t = Tiling {
            start,
            end: start + m.end - m.start,
            patches: m.patches,
            columns: 1,
        };
        let next = tiling::tile(&g, t).unwrap();
        tiling::check::check(&g, &next).unwrap();
        origin = next
            .tensor_origin
            .iter()
            .map(|o| match *o {
                Origin::Rows(t, r) => origin
                    .get(t.0)
                    .copied()
                    .flatten()
                    .map(|(m, r0)| (m, r0 + r)),
                _ => None,
            })
            .collect();
        op_origin = next
            .op_origin
            .iter()
            .map(|o| match *o {
                Origin::Op(x) => op_origin[x.0],
                Origin::Strip(x) => match op_origin[x.0] {
                    Origin::Op(m) => Origin::Strip(m),
                    other => other,
                },
                other => other,
            })
            .collect();
        g = next.graph;
    }
    (g, origin)
}

/// Regions anywhere (issue 30): `--min-ram` tiles person_detect and vww in more than one
/// region (each after the one before, on the graph it tiled), within 20 % extra MACs; the
/// plan verifies and every layer of the model, put together from the strips that hold its
/// rows, is byte-identical with TFLM's (`golden_all/`).
#[test]
fn several_regions_match_tflm_on_every_layer() {
    for (stem, target) in [
        ("tflm_person_detect_int8", 19008),
        ("mlperf_tiny_vww_mobilenetv1_025_96_int8", 36864),
    ] {
        let bytes = std::fs::read(common::shared_models().join(format!("{stem}.tflite"))).unwrap();
        let graph = kiln_planner::read_model(&bytes).unwrap();
        let mut o = kiln_build::Options::default();
        o.tiling.min_ram = true;
        let c = kiln_build::compile_tokens(&bytes, &o).unwrap();
        // One region alone reached `target`.
        assert!(
            c.plan.arena_bytes < target,
            "{stem}: {}",
            c.plan.arena_bytes
        );
        let report = c.tiling.as_ref().expect("tiled");
        assert!(!report.more.is_empty(), "{stem}: {report:?}");
        assert!(report.extra_macs * 100 <= c.macs * 20, "{stem}: {report:?}");
        let (g, origin) = retile(&graph, report);
        assert_eq!(g.ops.len(), c.graph.ops.len(), "{stem}");
        assert_eq!(tiling::macs(&g), c.macs + report.extra_macs, "{stem}");
        let dir = common::shared_models().join("golden_all").join(stem);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap())
                .unwrap();
        let samples = common::samples(&dir);
        let s = &samples[0];
        let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
        let steps = kiln_build::lower::lower_all(&g).unwrap();
        let d = kiln_build::lower::declared(&steps);
        kiln_planner::plan(&g, &d, &Default::default()).expect("plans and verifies");
        let values = kiln_build::exec::run(&g, &steps, &inputs);
        let written: Vec<bool> = (0..g.tensors.len())
            .map(|i| {
                g.inputs.iter().any(|t| t.0 == i)
                    || g.ops.iter().any(|op| op.outputs.iter().any(|t| t.0 == i))
            })
            .collect();
        let mut whole: Vec<Option<(Vec<u8>, Vec<bool>)>> = vec![None; graph.tensors.len()];
        for (i, o) in origin.iter().enumerate() {
            let Some((t, row)) = *o else { continue };
            let model = graph.tensor(t);
            if !written[i] || model.is_constant() || values[i].bytes().is_empty() {
                continue;
            }
            let rows = if model.shape.len() == 4 {
                model.shape[1]
            } else {
                1
            };
            let row_bytes = model.bytes() / rows.max(1);
            let (buf, covered) =
                whole[t.0].get_or_insert_with(|| (vec![0; model.bytes()], vec![false; rows]));
            for (k, chunk) in values[i].bytes().chunks(row_bytes).enumerate() {
                let r = row + k;
                let at = &mut buf[r * row_bytes..(r + 1) * row_bytes];
                assert!(
                    !covered[r] || at == chunk,
                    "{stem}: two strips differ on row {r} of tensor {}",
                    t.0
                );
                at.copy_from_slice(chunk);
                covered[r] = true;
            }
        }
        let outputs = json["outputs"].as_array().unwrap();
        assert_eq!(outputs.len(), s.outputs.len());
        assert!(outputs.len() > 20, "{stem}: every layer");
        for (out, want) in outputs.iter().zip(&s.outputs) {
            let t = out["tensor_index"].as_u64().unwrap() as usize;
            let (buf, covered) = whole[t]
                .as_ref()
                .unwrap_or_else(|| panic!("{stem}: tensor {t} is not computed"));
            assert!(covered.iter().all(|&c| c), "{stem}: rows of tensor {t}");
            assert!(buf == want, "{stem}: tensor {t} differs from TFLM");
        }
    }
}

/// The generated code of plans in several regions: person_detect and vww compiled by
/// `include_model!` at `kiln plan --min-ram`'s arenas (BENCHMARKS.md; one region alone
/// reached 19,008 B and 36,864 B), which only a tiling in more than one region meets; every
/// sample byte-identical with TFLM.
mod person_detect_regions {
    kiln::include_model!(
        "../../shared/models/tflm_person_detect_int8.tflite",
        ram_budget = 18432
    );
}

mod vww_regions {
    kiln::include_model!(
        "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite",
        ram_budget = 30528
    );
}

// Within the budgets (checked as the crate compiles).
const _: () = assert!(person_detect_regions::ARENA_BYTES <= 18432);
const _: () = assert!(vww_regions::ARENA_BYTES <= 30528);

#[test]
fn several_regions_compile_and_match_tflm() {
    check_golden!(
        person_detect_regions,
        common::shared_models()
            .join("golden")
            .join("tflm_person_detect_int8")
    );
    check_golden!(
        vww_regions,
        common::shared_models()
            .join("golden")
            .join("mlperf_tiny_vww_mobilenetv1_025_96_int8")
    );
}

/// Accumulating region ends (sinks, issue 30): kws_dscnn's ten layers of 25x5x64 images run
/// in strips straight into its AVERAGE_POOL_2D over the whole image, which KILN_ROW_SUM
/// accumulates strip by strip and KILN_AVERAGE_FINISH finishes; micro_speech's convolution
/// runs in strips into its FULLY_CONNECTED over the whole image (KILN_DOT_SUM,
/// KILN_DENSE_FINISH). For every number of strips: the sink's output and the model's output
/// are TFLM's (`golden_all/`, `golden/`), byte for byte, and the plan verifies.
#[test]
fn sink_regions_of_kws_dscnn_and_micro_speech_match_tflm() {
    for (stem, finish) in [
        ("mlperf_tiny_kws_dscnn_int8", "KILN_AVERAGE_FINISH"),
        ("tflm_micro_speech_int8", "KILN_DENSE_FINISH"),
    ] {
        sink_regions_match_tflm(stem, finish, 8);
    }
}

/// The streaming wake-word model ends its convolutions in a DEPTHWISE_CONV_2D whose window
/// is its whole 15-row image: regions ending there (a depthwise sink) sum their strips'
/// weighted pixels and finish per channel as TFLM.
#[test]
fn depthwise_sink_regions_of_sww_match_tflm() {
    sink_regions_match_tflm("mlperf_tiny_sww_int8", "KILN_DEPTHWISE_FINISH", 4);
}

/// Every tiling of `stem` ending in a sink (at least `least` of them) finishes with
/// `finish`, never writes the sink's image whole, and gives TFLM's bytes on the sink's
/// output and the model's outputs.
fn sink_regions_match_tflm(stem: &str, finish: &str, least: usize) {
    let bytes = std::fs::read(common::shared_models().join(format!("{stem}.tflite"))).unwrap();
    let graph = kiln_planner::read_model(&bytes).unwrap();
    let sinks: Vec<(Tiling, tiling::Tiled)> = tiling::candidates(&graph)
        .into_iter()
        .filter_map(|t| Some((t, tiling::tile(&graph, t).ok()?)))
        .filter(|(_, tiled)| tiled.sink.is_some())
        .collect();
    assert!(sinks.len() >= least, "{stem}: {} sink tilings", sinks.len());
    let finishes = |g: &Graph| g.ops.iter().filter(|op| op.kind.name() == finish).count();
    assert!(sinks.iter().all(|(_, t)| finishes(&t.graph) == 1), "{stem}");
    let all = common::shared_models().join("golden_all").join(stem);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(all.join("golden.json")).unwrap()).unwrap();
    let layers: Vec<usize> = json["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["tensor_index"].as_u64().unwrap() as usize)
        .collect();
    let every = &common::samples(&all)[0];
    let samples = common::samples(&common::shared_models().join("golden").join(stem));
    for (t, tiled) in &sinks {
        let g = &tiled.graph;
        // The image the sink sums is never written whole: only its strips are.
        let image = tiled.sink.unwrap();
        assert!(g.ops.iter().all(|op| !op.outputs.contains(&image)), "{t:?}");
        let steps = kiln_build::lower::lower_all(g).unwrap();
        let d = kiln_build::lower::declared(&steps);
        kiln_planner::plan(g, &d, &Default::default()).expect("plans and verifies");
        let inputs: Vec<&[u8]> = every.inputs.iter().map(Vec::as_slice).collect();
        let values = kiln_build::exec::run(g, &steps, &inputs);
        let at = layers.iter().position(|&l| l == tiled.cut.0).unwrap();
        assert_eq!(
            values[tiled.cut.0].bytes(),
            every.outputs[at],
            "{stem} {t:?}: sink"
        );
        for s in &samples {
            let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
            assert_eq!(run(g, &inputs), s.outputs, "{stem} {t:?}: seed {}", s.seed);
        }
    }
}

/// `chain` ending in an int8 AVERAGE_POOL_2D whose one output pixel's window covers the
/// whole image (VALID with the image's size, or SAME with a window `grow` cells larger).
fn chain_into_global_pool(
    h: usize,
    w: usize,
    c: usize,
    layers: &[Layer],
    seed: u64,
    same: bool,
    grow: usize,
) -> Graph {
    let mut g = chain(h, w, c, layers, seed);
    let x = *g.outputs.last().unwrap();
    let (s, quant) = (g.tensor(x).shape.clone(), g.tensor(x).quant.clone());
    let y = TensorId(g.tensors.len());
    g.tensors.push(Tensor {
        id: y,
        name: "pooled".into(),
        shape: vec![1, 1, 1, s[3]],
        dtype: DType::I8,
        quant,
        kind: TensorKind::Activation,
    });
    let (fh, fw) = if same {
        (s[1] + grow, s[2] + grow)
    } else {
        (s[1], s[2])
    };
    let o = Pool2dOptions {
        padding: if same { Padding::Same } else { Padding::Valid },
        // SAME: one output pixel only with a stride at least the image's size.
        stride_w: if same { s[2] as i32 } else { 1 },
        stride_h: if same { s[1] as i32 } else { 1 },
        filter_w: fw as i32,
        filter_h: fh as i32,
        activation: if seed.is_multiple_of(2) {
            Activation::Relu
        } else {
            Activation::None
        },
    };
    g.ops.push(Op {
        id: OpId(g.ops.len()),
        kind: OpKind::AveragePool2d(o),
        inputs: vec![Some(x)],
        outputs: vec![y],
        intermediates: Vec::new(),
    });
    g.outputs = vec![y];
    g
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random chains into a whole-image AVERAGE_POOL_2D: every sink tiling (any number of
    /// strips the image's rows allow) gives the untiled bytes.
    #[test]
    fn random_chains_into_a_global_pool_tile_byte_identically(
        h in 4usize..=20,
        w in 1usize..=5,
        c in 1usize..=3,
        layers in prop::collection::vec(layer(), 1..=4),
        seed in any::<u64>(),
        same in any::<bool>(),
        grow in 0usize..=2,
        pick in any::<prop::sample::Index>(),
    ) {
        let g = chain_into_global_pool(h, w, c, &layers, seed, same, grow);
        prop_assume!(g.ops.len() >= 2);
        prop_assume!(kiln_build::lower::lower_all(&g).is_ok());
        let sinks: Vec<tiling::Tiled> = tiling::candidates(&g)
            .into_iter()
            .filter_map(|t| tiling::tile(&g, t).ok())
            .filter(|t| t.sink.is_some())
            .collect();
        prop_assume!(!sinks.is_empty());
        let tiled = &sinks[pick.index(sinks.len())];
        let input: Vec<u8> = (0..h * w * c).map(|i| ((i as u64 * 7919) ^ seed) as u8).collect();
        let want = run(&g, &[&input]);
        prop_assert_eq!(run(&tiled.graph, &[&input]), want, "{:?}", tiled.tiling);
    }
}

/// A sink whose accumulators skip a strip, count one twice, start after row 0, or finish
/// another pooling is rejected by the independent check.
#[test]
fn the_check_rejects_wrong_sinks() {
    let layers = [
        Layer::Conv {
            k: 3,
            stride: 1,
            dilation: 1,
            same: true,
            out_c: 3,
        },
        Layer::Depthwise {
            k: 3,
            stride: 1,
            dilation: 1,
            same: true,
            mult: 1,
        },
    ];
    let g = chain_into_global_pool(12, 3, 2, &layers, 7, false, 0);
    let t = Tiling {
        start: 0,
        end: 3,
        patches: 3,
        columns: 1,
    };
    let good = tiling::tile(&g, t).unwrap();
    assert!(good.sink.is_some());
    tiling::check::check(&g, &good).unwrap();
    let sums: Vec<usize> = (0..good.graph.ops.len())
        .filter(|&i| good.op_origin[i] == tiling::Origin::Accumulate)
        .collect();
    assert_eq!(sums.len(), 3);
    let finish = good
        .op_origin
        .iter()
        .position(|o| *o == tiling::Origin::Finish)
        .unwrap();
    // The last strip's sums added to the first strip's (the middle strip left out).
    let mut bad = good.clone();
    bad.graph.ops[sums[2]].inputs[1] = Some(bad.graph.ops[sums[0]].outputs[0]);
    assert!(tiling::check::check(&g, &bad).is_err());
    // The middle strip's rows counted twice (its sums added where the last strip's go).
    let mut bad = good.clone();
    bad.graph.ops[sums[2]].inputs[0] = bad.graph.ops[sums[1]].inputs[0];
    assert!(tiling::check::check(&g, &bad).is_err());
    // The middle strip's sums started afresh: the first strip's rows lost.
    let mut bad = good.clone();
    bad.graph.ops[sums[1]].inputs[1] = None;
    assert!(tiling::check::check(&g, &bad).is_err());
    // The finish reads the sums of the first two strips only.
    let mut bad = good.clone();
    bad.graph.ops[finish].inputs[0] = Some(bad.graph.ops[sums[1]].outputs[0]);
    assert!(tiling::check::check(&g, &bad).is_err());
    // The finish averages over another image size.
    let mut bad = good.clone();
    if let OpKind::KilnAverageFinish { height, .. } = &mut bad.graph.ops[finish].kind {
        *height += 1;
    }
    assert!(tiling::check::check(&g, &bad).is_err());
    // A finish claiming a pooling that is not over the whole image.
    let mut g2 = g.clone();
    let last = g2.ops.len() - 1;
    if let OpKind::AveragePool2d(o) = &mut g2.ops[last].kind {
        o.filter_h -= 1;
    }
    let mut bad = good.clone();
    bad.graph.ops[finish].kind = match &bad.graph.ops[finish].kind {
        OpKind::KilnAverageFinish { height, width, .. } => OpKind::KilnAverageFinish {
            options: match g2.ops[last].kind {
                OpKind::AveragePool2d(o) => o,
                _ => unreachable!(),
            },
            height: *height,
            width: *width,
        },
        _ => unreachable!(),
    };
    assert!(tiling::check::check(&g, &bad).is_err());
}

/// The generated code of a sink: kws_dscnn compiled by `include_model!` under a budget
/// below its smallest untiled plan (8,490 B) and any tiling with a cut (its images are
/// 8,000 B each), which only its layers run in strips into the accumulated AVERAGE_POOL_2D
/// meet; every sample byte-identical with TFLM.
mod kws_sink {
    kiln::include_model!(
        "../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite",
        ram_budget = 6144
    );
}

const _: () = assert!(kws_sink::ARENA_BYTES <= 6144);

#[test]
fn a_sink_compiles_and_matches_tflm() {
    check_golden!(
        kws_sink,
        common::shared_models()
            .join("golden")
            .join("mlperf_tiny_kws_dscnn_int8")
    );
}

/// The generated code of a depthwise sink: sww compiled by `include_model!` under a budget
/// (3,536 B) that only its convolutions run in two strips into its last DEPTHWISE_CONV_2D,
/// accumulated, meet (26.6 % extra MACs, allowed here up to 30 %); every sample
/// byte-identical with TFLM.
mod sww_sink {
    kiln::include_model!(
        "../../shared/models/mlperf_tiny_sww_int8.tflite",
        ram_budget = 3536,
        max_extra_macs = 30
    );
}

const _: () = assert!(sww_sink::ARENA_BYTES <= 3536);

#[test]
fn a_depthwise_sink_compiles_and_matches_tflm() {
    check_golden!(
        sww_sink,
        common::shared_models()
            .join("golden")
            .join("mlperf_tiny_sww_int8")
    );
}

/// `chain` ending in an int8 FULLY_CONNECTED over the whole image (after a RESHAPE
/// flattening it, or reading it as it is), per-tensor or per-channel weights, a bias or none.
#[allow(clippy::too_many_arguments)]
fn chain_into_dense(
    h: usize,
    w: usize,
    c: usize,
    layers: &[Layer],
    seed: u64,
    reshape: bool,
    per_channel: bool,
    outputs: usize,
) -> Graph {
    let mut g = chain(h, w, c, layers, seed);
    let x = *g.outputs.last().unwrap();
    let (d, xq) = (g.tensor(x).elements(), g.tensor(x).quant.clone());
    let Quantization::PerTensor { scale: xs, .. } = xq else {
        unreachable!("chain's images are per tensor")
    };
    let mut next = seed | 1;
    let mut rand = move || {
        next = next
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (next >> 33) as u32
    };
    let push = |g: &mut Graph, name: &str, shape, dtype, quant, data: Option<Vec<u8>>| {
        let id = TensorId(g.tensors.len());
        let buffer = 1000 + id.0;
        g.tensors.push(Tensor {
            id,
            name: name.into(),
            shape,
            dtype,
            quant,
            kind: match data {
                Some(data) => TensorKind::Constant {
                    buffer,
                    offset: 0,
                    data,
                },
                None => TensorKind::Activation,
            },
        });
        id
    };
    let input = if reshape {
        let y = push(&mut g, "flat", vec![1, d], DType::I8, xq.clone(), None);
        g.ops.push(Op {
            id: OpId(g.ops.len()),
            kind: OpKind::Reshape,
            inputs: vec![Some(x)],
            outputs: vec![y],
            intermediates: Vec::new(),
        });
        y
    } else {
        x
    };
    let ws = 0.01;
    let wq = if per_channel {
        Quantization::PerChannel {
            scales: (0..outputs).map(|o| ws * (1.0 + o as f32 * 0.25)).collect(),
            zero_points: vec![0; outputs],
            axis: 0,
        }
    } else {
        Quantization::PerTensor {
            scale: ws,
            zero_point: 0,
        }
    };
    let wdata: Vec<u8> = (0..outputs * d).map(|_| rand() as u8).collect();
    let wt = push(
        &mut g,
        "weights",
        vec![outputs, d],
        DType::I8,
        wq,
        Some(wdata),
    );
    let bias = (!seed.is_multiple_of(3)).then(|| {
        let data = (0..outputs)
            .flat_map(|_| ((rand() % 4001) as i32 - 2000).to_le_bytes())
            .collect();
        let q = Quantization::PerTensor {
            scale: xs * ws,
            zero_point: 0,
        };
        push(&mut g, "bias", vec![outputs], DType::I32, q, Some(data))
    });
    let oq = Quantization::PerTensor {
        scale: 0.05 + (seed % 7) as f32 * 0.02,
        zero_point: (seed % 9) as i64 - 4,
    };
    let out = push(&mut g, "dense", vec![1, outputs], DType::I8, oq, None);
    g.ops.push(Op {
        id: OpId(g.ops.len()),
        kind: OpKind::FullyConnected(kiln_planner::ir::FullyConnectedOptions {
            activation: if seed.is_multiple_of(2) {
                Activation::Relu
            } else {
                Activation::None
            },
            keep_num_dims: false,
        }),
        inputs: vec![Some(input), Some(wt), bias],
        outputs: vec![out],
        intermediates: Vec::new(),
    });
    g.outputs = vec![out];
    g
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random chains into a FULLY_CONNECTED over the whole image: every dense sink tiling
    /// gives the untiled bytes.
    #[test]
    fn random_chains_into_a_dense_layer_tile_byte_identically(
        h in 4usize..=16,
        w in 1usize..=4,
        c in 1usize..=3,
        layers in prop::collection::vec(layer(), 1..=3),
        seed in any::<u64>(),
        reshape in any::<bool>(),
        per_channel in any::<bool>(),
        outputs in 1usize..=5,
        pick in any::<prop::sample::Index>(),
    ) {
        let g = chain_into_dense(h, w, c, &layers, seed, reshape, per_channel, outputs);
        prop_assume!(kiln_build::lower::lower_all(&g).is_ok());
        let sinks: Vec<tiling::Tiled> = tiling::candidates(&g)
            .into_iter()
            .filter_map(|t| tiling::tile(&g, t).ok())
            .filter(|t| t.sink.is_some())
            .collect();
        prop_assume!(!sinks.is_empty());
        let tiled = &sinks[pick.index(sinks.len())];
        let input: Vec<u8> = (0..h * w * c).map(|i| ((i as u64 * 7919) ^ seed) as u8).collect();
        let want = run(&g, &[&input]);
        prop_assert_eq!(run(&tiled.graph, &[&input]), want, "{:?}", tiled.tiling);
    }
}

/// A dense sink whose strips' dot products start at the wrong element, use other weights,
/// or skip a strip is rejected by the independent check.
#[test]
fn the_check_rejects_wrong_dense_sinks() {
    let layers = [Layer::Conv {
        k: 3,
        stride: 1,
        dilation: 1,
        same: true,
        out_c: 2,
    }];
    for reshape in [false, true] {
        let g = chain_into_dense(9, 3, 2, &layers, 5, reshape, false, 3);
        let n = g.ops.len();
        let good = tiling::tile(
            &g,
            Tiling {
                start: 0,
                end: n,
                patches: 3,
                columns: 1,
            },
        )
        .unwrap();
        assert!(good.sink.is_some());
        tiling::check::check(&g, &good).unwrap();
        let dots: Vec<usize> = (0..good.graph.ops.len())
            .filter(|&i| good.op_origin[i] == tiling::Origin::Accumulate)
            .collect();
        assert_eq!(dots.len(), 3);
        // The middle strip's products taken one pixel too far along the weights' rows.
        let mut bad = good.clone();
        if let OpKind::KilnDotSum { first } = &mut bad.graph.ops[dots[1]].kind {
            *first += 2;
        }
        assert!(tiling::check::check(&g, &bad).is_err());
        // Other weights (the convolution's filter in their place).
        let mut bad = good.clone();
        bad.graph.ops[dots[1]].inputs[2] = g.ops[0].input(1);
        assert!(tiling::check::check(&g, &bad).is_err());
        // The last strip added to the first strip's products.
        let mut bad = good.clone();
        bad.graph.ops[dots[2]].inputs[1] = Some(bad.graph.ops[dots[0]].outputs[0]);
        assert!(tiling::check::check(&g, &bad).is_err());
    }
}

/// A depthwise sink (sww's last convolutions, in two strips) whose strips' sums start at
/// the wrong pixel, use another filter, skip a strip, or finish another layer is rejected.
#[test]
fn the_check_rejects_wrong_depthwise_sinks() {
    let bytes = std::fs::read(common::shared_models().join("mlperf_tiny_sww_int8.tflite")).unwrap();
    let g = kiln_planner::read_model(&bytes).unwrap();
    let good = tiling::tile(
        &g,
        Tiling {
            start: 0,
            end: 7,
            patches: 3,
            columns: 1,
        },
    )
    .unwrap();
    assert!(good.sink.is_some());
    tiling::check::check(&g, &good).unwrap();
    let sums: Vec<usize> = (0..good.graph.ops.len())
        .filter(|&i| good.op_origin[i] == tiling::Origin::Accumulate)
        .collect();
    assert_eq!(sums.len(), 3);
    assert!(
        sums.iter()
            .all(|&i| matches!(good.graph.ops[i].kind, OpKind::KilnDepthwiseSum { .. }))
    );
    // The middle strip's sums taken one pixel too far along the filter.
    let mut bad = good.clone();
    if let OpKind::KilnDepthwiseSum { first } = &mut bad.graph.ops[sums[1]].kind {
        *first += 1;
    }
    assert!(tiling::check::check(&g, &bad).is_err());
    // Another filter (the first layer's in its place).
    let mut bad = good.clone();
    bad.graph.ops[sums[1]].inputs[2] = g.ops[0].input(1);
    assert!(tiling::check::check(&g, &bad).is_err());
    // The last strip added to the first strip's sums.
    let mut bad = good.clone();
    bad.graph.ops[sums[2]].inputs[1] = Some(bad.graph.ops[sums[0]].outputs[0]);
    assert!(tiling::check::check(&g, &bad).is_err());
    // The middle strip's pixels summed unweighted (a pooling's KILN_ROW_SUM).
    let mut bad = good.clone();
    bad.graph.ops[sums[1]].kind = OpKind::KilnRowSum;
    bad.graph.ops[sums[1]].inputs.truncate(2);
    assert!(tiling::check::check(&g, &bad).is_err());
    // The finish with other options (a ReLU the layer does not have).
    let mut bad = good.clone();
    let finish = (0..bad.graph.ops.len())
        .find(|&i| bad.op_origin[i] == tiling::Origin::Finish)
        .unwrap();
    if let OpKind::KilnDepthwiseFinish(o) = &mut bad.graph.ops[finish].kind {
        o.activation = if o.activation == Activation::Relu {
            Activation::None
        } else {
            Activation::Relu
        };
    }
    assert!(tiling::check::check(&g, &bad).is_err());
}

/// The generated code of a dense sink: micro_speech compiled by `include_model!` under a
/// budget below its smallest tiling with a cut (4,280 B: the convolution's whole 4,000-byte
/// image), which only its convolution run in strips into the accumulated FULLY_CONNECTED
/// meets; every sample byte-identical with TFLM.
mod micro_speech_sink {
    kiln::include_model!(
        "../../shared/models/tflm_micro_speech_int8.tflite",
        ram_budget = 2304
    );
}

const _: () = assert!(micro_speech_sink::ARENA_BYTES <= 2304);

#[test]
fn a_dense_sink_compiles_and_matches_tflm() {
    check_golden!(
        micro_speech_sink,
        common::shared_models()
            .join("golden")
            .join("tflm_micro_speech_int8")
    );
}
