//! What the in-place kernel tests share: a seeded generator and random quantization.
#![allow(dead_code)]

use kiln_kernels::quant::QuantParams;

/// xorshift32.
pub struct Rng(pub u32);

impl Rng {
    pub fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.next() as usize % (hi - lo + 1)
    }

    pub fn i8(&mut self) -> i8 {
        self.next() as i8
    }

    pub fn i16(&mut self) -> i16 {
        self.next() as i16
    }

    pub fn bool(&mut self) -> bool {
        self.next() & 1 == 1
    }

    /// Roughly uniform in `-1.0..1.0`.
    pub fn f32(&mut self) -> f32 {
        (self.next() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }
}

/// Per-channel (or, sometimes, per-tensor) filter scales and input/output quantization, as
/// the converter would produce them; zero points of 0 unless `zero_points`.
pub fn random_quant(
    rng: &mut Rng,
    channels: usize,
    zero_points: bool,
) -> (QuantParams, Vec<f32>, QuantParams) {
    let zp = |rng: &mut Rng| {
        if zero_points {
            rng.range(0, 255) as i32 - 128
        } else {
            0
        }
    };
    let input = QuantParams {
        scale: 0.005 + 0.05 * (rng.f32() + 1.0),
        zero_point: zp(rng),
    };
    let n = if rng.range(0, 3) == 0 { 1 } else { channels };
    let filter_scales = (0..n).map(|_| 0.001 + 0.01 * (rng.f32() + 1.0)).collect();
    let output = QuantParams {
        scale: 0.02 + 0.2 * (rng.f32() + 1.0),
        zero_point: zp(rng),
    };
    (input, filter_scales, output)
}
