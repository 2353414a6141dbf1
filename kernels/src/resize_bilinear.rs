//! RESIZE_BILINEAR over NHWC tensors, float32 and int8.
//!
//! Follows TFLM's `resize_bilinear.cc`: the float kernel is `reference_ops::ResizeBilinear`
//! (source coordinates in `f32` from `ComputeInterpolationValues`, the four-tap weighted sum
//! evaluated left to right as in the C++ expression, plus a `0.0` rounding offset), the int8
//! kernel is `reference_ops::ResizeBilinearInteger` (10-bit fixed-point scales and
//! coordinates, 20-bit weighted sum in `i64`, rounded half away from zero). `align_corners`
//! uses `(in - 1) / (out - 1)` scales when the output has more than one row/column;
//! `half_pixel_centers` samples at pixel centers; TFLM rejects both together, and so does
//! [`prepare`].

use crate::fmath::{ceil_f32, floor_f32};
use crate::quant::PrepareError;

pub use crate::resize_nearest_neighbor::Options;

/// Constant parameters of a RESIZE_BILINEAR node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Batches.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Channels (input and output).
    pub depth: usize,
    /// Output height (`size[0]`).
    pub output_height: usize,
    /// Output width (`size[1]`).
    pub output_width: usize,
    /// `half_pixel_centers`
    pub half_pixel_centers: bool,
    /// Float row scale.
    pub height_scale: f32,
    /// Float column scale.
    pub width_scale: f32,
    /// Int8 row scale in Q10 (`height_scale_10`).
    pub height_scale_10: i32,
    /// Int8 column scale in Q10 (`width_scale_10`).
    pub width_scale_10: i32,
}

impl Params {
    /// Number of input elements.
    pub const fn input_size(&self) -> usize {
        self.batches * self.input_height * self.input_width * self.depth
    }

    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        self.batches * self.output_height * self.output_width * self.depth
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters (float and int8 alike) from the 4-D input shape, the constant
/// `size` tensor (`[output_height, output_width]`) and the options.
pub fn prepare(
    input_shape: [usize; 4],
    size: [i32; 2],
    options: &Options,
) -> Result<Params, PrepareError> {
    let [batches, input_height, input_width, depth] = input_shape;
    if options.align_corners && options.half_pixel_centers {
        return Err(PrepareError::InvalidShape);
    }
    if size[0] <= 0
        || size[1] <= 0
        || input_shape.contains(&0)
        || input_height > (1 << 20)
        || input_width > (1 << 20)
    {
        return Err(PrepareError::InvalidShape);
    }
    let (out_h, out_w) = (size[0], size[1]);
    let (in_h, in_w) = (input_height as i32, input_width as i32);
    let mut height_scale = in_h as f32 / out_h as f32;
    let mut width_scale = in_w as f32 / out_w as f32;
    if options.align_corners && out_h > 1 {
        height_scale = (in_h - 1) as f32 / (out_h - 1) as f32;
    }
    if options.align_corners && out_w > 1 {
        width_scale = (in_w - 1) as f32 / (out_w - 1) as f32;
    }
    let mut height_scale_10 = ((1 << 10) * in_h + out_h / 2) / out_h;
    let mut width_scale_10 = ((1 << 10) * in_w + out_w / 2) / out_w;
    if options.align_corners && out_h > 1 {
        height_scale_10 = ((1 << 10) * (in_h - 1) + (out_h - 1) / 2) / (out_h - 1);
    }
    if options.align_corners && out_w > 1 {
        width_scale_10 = ((1 << 10) * (in_w - 1) + (out_w - 1) / 2) / (out_w - 1);
    }
    Ok(Params {
        batches,
        input_height,
        input_width,
        depth,
        output_height: out_h as usize,
        output_width: out_w as usize,
        half_pixel_centers: options.half_pixel_centers,
        height_scale,
        width_scale,
        height_scale_10,
        width_scale_10,
    })
}

/// `ComputeInterpolationValues`: `(scaled_value, lower_bound, upper_bound)`.
#[inline]
fn interpolation_values(
    value: usize,
    scale: f32,
    hpc: bool,
    input_size: usize,
) -> (f32, usize, usize) {
    let v = value as i32 as f32;
    let scaled = if hpc {
        (v + 0.5) * scale - 0.5
    } else {
        v * scale
    };
    let lower = (floor_f32(scaled) as i32).max(0);
    let upper = (ceil_f32(scaled) as i32).min(input_size as i32 - 1);
    (scaled, lower as usize, upper as usize)
}

/// `ComputeInterpolationValuesInteger`: `(scaled_value_q10, lower_bound, upper_bound)`.
#[inline]
fn interpolation_values_integer(
    value: usize,
    scale_10: i32,
    hpc: bool,
    input_size: usize,
) -> (i32, usize, usize) {
    let v = value as i32;
    let scaled = if hpc {
        v * scale_10 + scale_10 / 2 - (1 << 9)
    } else {
        v * scale_10
    };
    // C++ `/` truncates toward zero, as Rust's does.
    let lower = (scaled / (1 << 10)).max(0);
    let upper = ((scaled + (1 << 10) - 1) / (1 << 10)).min(input_size as i32 - 1);
    (scaled, lower as usize, upper as usize)
}

/// Float RESIZE_BILINEAR (`reference_ops::ResizeBilinear<float>`).
pub fn resize_bilinear_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    let (row, depth) = (p.input_width * p.depth, p.depth);
    let batch = p.input_height * row;
    if depth == 0 || batch == 0 {
        return;
    }
    let mut out = output.chunks_exact_mut(depth);
    for in_b in input.chunks_exact(batch).take(p.batches) {
        for y in 0..p.output_height {
            let (input_y, y0, y1) =
                interpolation_values(y, p.height_scale, p.half_pixel_centers, p.input_height);
            let dy = input_y - y0 as i32 as f32;
            for x in 0..p.output_width {
                let (input_x, x0, x1) =
                    interpolation_values(x, p.width_scale, p.half_pixel_centers, p.input_width);
                let dx = input_x - x0 as i32 as f32;
                let Some(o) = out.next() else { return };
                let (r0, r1) = (&in_b[y0 * row..][..row], &in_b[y1 * row..][..row]);
                for (c, o) in o.iter_mut().enumerate() {
                    let ll = r0[x0 * depth + c];
                    let lu = r1[x0 * depth + c];
                    let rl = r0[x1 * depth + c];
                    let ru = r1[x1 * depth + c];
                    *o = ll * (1.0 - dy) * (1.0 - dx)
                        + lu * dy * (1.0 - dx)
                        + rl * (1.0 - dy) * dx
                        + ru * dy * dx
                        + 0.0;
                }
            }
        }
    }
}

/// Int8 RESIZE_BILINEAR (`reference_ops::ResizeBilinearInteger<int8_t>`).
pub fn resize_bilinear_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    let (row, depth) = (p.input_width * p.depth, p.depth);
    let batch = p.input_height * row;
    if depth == 0 || batch == 0 {
        return;
    }
    const ONE: i64 = 1 << 10;
    let mut out = output.chunks_exact_mut(depth);
    for in_b in input.chunks_exact(batch).take(p.batches) {
        for y in 0..p.output_height {
            let (input_y, y0, y1) = interpolation_values_integer(
                y,
                p.height_scale_10,
                p.half_pixel_centers,
                p.input_height,
            );
            let fy = input_y as i64 - ONE * y0 as i64;
            for x in 0..p.output_width {
                let (input_x, x0, x1) = interpolation_values_integer(
                    x,
                    p.width_scale_10,
                    p.half_pixel_centers,
                    p.input_width,
                );
                let fx = input_x as i64 - ONE * x0 as i64;
                let Some(o) = out.next() else { return };
                let (r0, r1) = (&in_b[y0 * row..][..row], &in_b[y1 * row..][..row]);
                for (c, o) in o.iter_mut().enumerate() {
                    let ll = r0[x0 * depth + c] as i64 * (ONE - fy) * (ONE - fx);
                    let lu = r1[x0 * depth + c] as i64 * fy * (ONE - fx);
                    let rl = r0[x1 * depth + c] as i64 * (ONE - fy) * fx;
                    let ru = r1[x1 * depth + c] as i64 * fy * fx;
                    let output_20 = ll + lu + rl + ru;
                    let round: i64 = if output_20 > 0 { 1 << 19 } else { -(1 << 19) };
                    // C++ `/` truncates toward zero, as Rust's does.
                    *o = ((output_20 + round) / (1 << 20)) as i8;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates() {
        let o = Options {
            align_corners: true,
            half_pixel_centers: false,
        };
        let p = prepare([1, 1, 2, 1], [1, 3], &o).unwrap();
        let mut f = [0.0f32; 3];
        resize_bilinear_f32(&p, &[0.0, 1.0], &mut f);
        assert_eq!(f, [0.0, 0.5, 1.0]);
        let mut q = [0i8; 3];
        resize_bilinear_s8(&p, &[0, 100], &mut q);
        assert_eq!(q, [0, 50, 100]);
        assert!(
            prepare(
                [1, 1, 2, 1],
                [1, 3],
                &Options {
                    align_corners: true,
                    half_pixel_centers: true
                }
            )
            .is_err()
        );
    }
}
