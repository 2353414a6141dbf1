// The happy path in the same harness: a small model with generous literal budgets and
// `align = 8`, taken once, run, and its output read.
mod mlp {
    kiln::include_model!(
        "../../models/mlp_int8.tflite",
        ram_budget = 64 * 1024,
        flash_budget = 64 * 1024,
        align = 8,
    );
}

fn run(m: &mut mlp::Model) -> [i8; 10] {
    // The arena may reuse an input's bytes once it is consumed: write it before each call.
    for (i, x) in m.input_mut().iter_mut().enumerate() {
        *x = (i as i8).wrapping_mul(7);
    }
    m.invoke();
    *m.output()
}

fn main() {
    const { assert!(mlp::ARENA_BYTES + mlp::PERSISTENT_BYTES <= 64 * 1024) };
    const { assert!(mlp::WEIGHTS_BYTES <= 64 * 1024) };
    assert_eq!((mlp::INPUTS, mlp::OUTPUTS), (1, 1));
    assert_eq!(mlp::INPUT_SHAPE, [1, 64]);
    assert_eq!(mlp::OUTPUT_SHAPE, [1, 10]);
    assert_eq!(mlp::INPUT_DTYPE, kiln::DType::I8);
    let mut m = mlp::Model::take().expect("the first take succeeds");
    assert!(mlp::Model::take().is_none(), "the model is handed out once");
    let first = run(&mut m);
    assert_eq!(run(&mut m), first, "the same input gives the same output");
    // Softmax outputs sum to about 1.0: 10 int8 values at scale 1/256, zero point -128.
    let sum: i32 = first.iter().map(|&y| i32::from(y) + 128).sum();
    assert!(
        (200..=300).contains(&sum),
        "softmax sums to about 256/256, got {sum}/256"
    );
}
