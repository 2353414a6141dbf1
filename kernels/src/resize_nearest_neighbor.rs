//! RESIZE_NEAREST_NEIGHBOR over NHWC tensors (any element type: it only copies).
//!
//! Follows TFLM's `resize_nearest_neighbor.cc` / `reference_ops::ResizeNearestNeighbor`: for
//! each output row/column, `GetNearestNeighbor` maps the index with a `float` scale
//! (`(in - 1) / (out - 1)` with `align_corners` and more than one output, else `in / out`),
//! adds 0.5 with `half_pixel_centers`, rounds half away from zero (`align_corners`) or floors,
//! and clamps to the input; then the whole depth vector is copied. The index arithmetic is
//! done at run time in `f32`, exactly as TFLM does.

use crate::fmath::floor_f32;
use crate::quant::{PrepareError, round_f32};

/// Builtin options of a RESIZE_NEAREST_NEIGHBOR node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// `align_corners`
    pub align_corners: bool,
    /// `half_pixel_centers`
    pub half_pixel_centers: bool,
}

/// Constant parameters of a RESIZE_NEAREST_NEIGHBOR node.
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
    /// `align_corners`
    pub align_corners: bool,
    /// `half_pixel_centers`
    pub half_pixel_centers: bool,
    /// `GetNearestNeighbor`'s row scale.
    pub height_scale: f32,
    /// `GetNearestNeighbor`'s column scale.
    pub width_scale: f32,
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

/// `GetNearestNeighbor`'s scale in `float`.
fn scale(input_size: usize, output_size: usize, align_corners: bool) -> f32 {
    if align_corners && output_size > 1 {
        (input_size as i32 - 1) as f32 / (output_size as i32 - 1) as f32
    } else {
        input_size as i32 as f32 / output_size as i32 as f32
    }
}

/// Build-time parameters from the 4-D input shape, the constant `size` tensor
/// (`[output_height, output_width]`) and the options.
pub fn prepare(
    input_shape: [usize; 4],
    size: [i32; 2],
    options: &Options,
) -> Result<Params, PrepareError> {
    let [batches, input_height, input_width, depth] = input_shape;
    if size[0] <= 0 || size[1] <= 0 || input_shape.contains(&0) {
        return Err(PrepareError::InvalidShape);
    }
    let (output_height, output_width) = (size[0] as usize, size[1] as usize);
    Ok(Params {
        batches,
        input_height,
        input_width,
        depth,
        output_height,
        output_width,
        align_corners: options.align_corners,
        half_pixel_centers: options.half_pixel_centers,
        height_scale: scale(input_height, output_height, options.align_corners),
        width_scale: scale(input_width, output_width, options.align_corners),
    })
}

/// `GetNearestNeighbor` with a precomputed scale.
#[inline]
fn nearest(p: &Params, value: usize, scale: f32, input_size: usize) -> usize {
    let offset = if p.half_pixel_centers { 0.5f32 } else { 0.0 };
    let v = (value as i32 as f32 + offset) * scale;
    let index = if p.align_corners {
        round_f32(v) as i32
    } else {
        floor_f32(v) as i32
    };
    let mut index = index.min(input_size as i32 - 1);
    if p.half_pixel_centers {
        index = index.max(0);
    }
    index as usize
}

/// RESIZE_NEAREST_NEIGHBOR (`reference_ops::ResizeNearestNeighbor`).
pub fn resize_nearest_neighbor<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    let row = p.input_width * p.depth;
    let batch = p.input_height * row;
    if p.depth == 0 || batch == 0 {
        return;
    }
    let mut out = output.chunks_exact_mut(p.depth);
    for in_b in input.chunks_exact(batch).take(p.batches) {
        for y in 0..p.output_height {
            let in_y = nearest(p, y, p.height_scale, p.input_height);
            let in_row = &in_b[in_y * row..][..row];
            for x in 0..p.output_width {
                let in_x = nearest(p, x, p.width_scale, p.input_width);
                let Some(o) = out.next() else { return };
                o.copy_from_slice(&in_row[in_x * p.depth..][..p.depth]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsamples() {
        let o = Options {
            align_corners: false,
            half_pixel_centers: false,
        };
        let p = prepare([1, 2, 2, 1], [4, 4], &o).unwrap();
        let mut out = [0i8; 16];
        resize_nearest_neighbor(&p, &[1, 2, 3, 4], &mut out);
        assert_eq!(out, [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]);
        let o = Options {
            align_corners: true,
            half_pixel_centers: false,
        };
        let p = prepare([1, 1, 3, 1], [1, 2], &o).unwrap();
        let mut out = [0i8; 2];
        resize_nearest_neighbor(&p, &[1, 2, 3], &mut out);
        assert_eq!(out, [1, 3]);
    }
}
