//! Kiln on the host: a CNN compiled into this binary by `include_model!`, run on an input
//! TFLM also ran, with the scores, Kiln's memory numbers and TFLM's answer printed.
//!
//! `cargo run --example classify`

mod cnn {
    // The model is read, planned and verified at compile time; over 16 KiB of RAM or 32 KiB
    // of flash this line would not compile.
    kiln::include_model!(
        "../tests/models/cnn_int8.tflite",
        ram_budget = 16 * 1024,
        flash_budget = 32 * 1024
    );
}

/// An input image (16x16x3, int8) and TFLM's output for it, from `tools/gen_test_models.py`.
const IMAGE: &[u8; 768] = include_bytes!("../tests/models/golden/cnn_int8/s1_in0.bin");
const TFLM_SCORES: &[u8; 10] = include_bytes!("../tests/models/golden/cnn_int8/s1_out0.bin");

fn main() {
    let mut model = cnn::Model::take().expect("the model is taken once");
    for (dst, &src) in model.input_mut().iter_mut().zip(IMAGE) {
        *dst = src as i8;
    }
    model.invoke();

    let scores = model.output();
    let real = |q: i8| (f32::from(q) - cnn::OUTPUT_ZERO_POINT as f32) * cnn::OUTPUT_SCALE;
    let (best, _) = scores
        .iter()
        .enumerate()
        .max_by_key(|&(i, &q)| (q, std::cmp::Reverse(i)))
        .expect("ten scores");
    println!(
        "cnn_int8: input {:?} int8, output {:?} int8",
        cnn::INPUT_SHAPE,
        cnn::OUTPUT_SHAPE
    );
    for (class, &q) in scores.iter().enumerate() {
        let mark = if class == best { "  <- prediction" } else { "" };
        println!("  class {class}: {q:4} (p = {:.3}){mark}", real(q));
    }
    let same = scores.iter().zip(TFLM_SCORES).all(|(&a, &b)| a as u8 == b);
    println!(
        "matches TFLM byte for byte: {}",
        if same { "yes" } else { "NO" }
    );
    println!("arena (static, exact):  {} bytes", cnn::ARENA_BYTES);
    println!("persistent state:       {} bytes", cnn::PERSISTENT_BYTES);
    println!("weights (flash):        {} bytes", cnn::WEIGHTS_BYTES);
    if !same {
        std::process::exit(1);
    }
}
