//! PAD / PADV2: copies the input into the middle of a larger output filled with a constant
//! (`reference_ops::PadImpl`, shapes right-aligned and extended to 5-D).
//!
//! TFLM pads int8 tensors with the output zero point unless a constant value is given (PADV2),
//! and float tensors with `0.0`; the caller passes that value.

use crate::quant::PrepareError;

/// Constant parameters of a PAD node. Fields are `[usize; 5]` arrays (outermost first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Input shape extended to 5-D.
    pub input_dims: [usize; 5],
    /// Padding before each dimension.
    pub left_padding: [usize; 5],
    /// Output shape extended to 5-D.
    pub output_dims: [usize; 5],
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input shape (at most 5 dims) and the `[before, after]`
/// padding of each of its dims.
pub fn prepare(input_shape: &[usize], paddings: &[[usize; 2]]) -> Result<Params, PrepareError> {
    let n = input_shape.len();
    if n > 5 || paddings.len() != n {
        return Err(PrepareError::InvalidShape);
    }
    let mut p = Params {
        input_dims: [1; 5],
        left_padding: [0; 5],
        output_dims: [1; 5],
    };
    for (k, (&d, pad)) in input_shape.iter().zip(paddings).enumerate() {
        let j = 5 - n + k;
        p.input_dims[j] = d;
        p.left_padding[j] = pad[0];
        p.output_dims[j] = d + pad[0] + pad[1];
    }
    Ok(p)
}

/// Pads `input` into `output` with `pad_value` (any element type).
///
/// Trailing dimensions without padding are merged into the one before them, so each copy is
/// the longest contiguous run (for NHWC with the channels unpadded, a whole row of pixels)
/// through `arch::copy_block`. Every output element is written once, the gap before
/// each run filled, then the run copied, in output order; except where the gaps between runs
/// are short (channels padded: a `memset` call per gap would cost more than the elements),
/// where the whole output is filled first and then the runs copied over it.
pub fn pad<T: Copy>(p: &Params, input: &[T], pad_value: T, output: &mut [T]) {
    debug_assert_eq!(input.len(), p.input_dims.iter().product::<usize>());
    debug_assert_eq!(output.len(), p.output_dims.iter().product::<usize>());
    let (mut i, mut o, mut l) = (p.input_dims, p.output_dims, p.left_padding);
    // Merge dimension k into k - 1 while k is not padded: the merged dimension's runs are
    // contiguous in both tensors.
    let mut n = 5;
    while n > 1 && l[n - 1] == 0 && i[n - 1] == o[n - 1] {
        i[n - 2] *= i[n - 1];
        o[n - 2] *= o[n - 1];
        l[n - 2] *= o[n - 1];
        n -= 1;
    }
    // Right-aligned in five dimensions again.
    let (mut id, mut od, mut ld) = ([1; 5], [1; 5], [0; 5]);
    id[5 - n..].copy_from_slice(&i[..n]);
    od[5 - n..].copy_from_slice(&o[..n]);
    ld[5 - n..].copy_from_slice(&l[..n]);
    let [i0, i1, i2, i3, run] = id;
    let [_, o1, o2, o3, o4] = od;
    let [l0, l1, l2, l3, l4] = ld;
    // Gaps of fewer elements than this between runs: filled with the rest, up front. (No
    // gap: nothing is padded, one run is the whole tensor.)
    const SHORT_GAP: usize = 16;
    let prefill = (1..SHORT_GAP).contains(&(o4 - run));
    if prefill {
        output.fill(pad_value);
    }
    // Output written so far, input read so far.
    let (mut done, mut read) = (0, 0);
    if run > 0 {
        for c0 in 0..i0 {
            for c1 in 0..i1 {
                for c2 in 0..i2 {
                    let base = (((c0 + l0) * o1 + c1 + l1) * o2 + c2 + l2) * o3 + l3;
                    for c3 in 0..i3 {
                        let start = (base + c3) * o4 + l4;
                        let (Some(seg), Some(src)) = (
                            output.get_mut(done..start + run),
                            input.get(read..read + run),
                        ) else {
                            return;
                        };
                        let Some((gap, dst)) = seg.split_at_mut_checked(start - done) else {
                            return;
                        };
                        if !prefill {
                            gap.fill(pad_value);
                        }
                        crate::arch::copy_block(dst, src);
                        done = start + run;
                        read += run;
                    }
                }
            }
        }
    }
    if let (false, Some(rest)) = (prefill, output.get_mut(done..)) {
        rest.fill(pad_value);
    }
}

/// [`pad`] as TFLM's reference kernel computes it (`reference_ops::PadImpl`): element by
/// element over the five output dimensions, each tested against the padding of every
/// dimension. The same outputs; the kernel of `reference_kernels` builds.
pub fn pad_reference<T: Copy>(p: &Params, input: &[T], pad_value: T, output: &mut [T]) {
    let [o0, o1, o2, o3, o4] = p.output_dims;
    let (l, i) = (p.left_padding, p.input_dims);
    // Whether output index `x` of dimension `k` is inside the input.
    let inside = |k: usize, x: usize| x >= l[k] && x < l[k] + i[k];
    let mut src = input.iter();
    let mut out = output.iter_mut();
    for a in 0..o0 {
        for b in 0..o1 {
            for c in 0..o2 {
                for d in 0..o3 {
                    for e in 0..o4 {
                        let Some(y) = out.next() else { return };
                        *y = if inside(0, a)
                            && inside(1, b)
                            && inside(2, c)
                            && inside(3, d)
                            && inside(4, e)
                        {
                            match src.next() {
                                Some(&x) => x,
                                None => return,
                            }
                        } else {
                            pad_value
                        };
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_2d_and_4d() {
        let p = prepare(&[2, 2], &[[1, 0], [0, 2]]).unwrap();
        let mut out = [9i8; 12];
        pad(&p, &[1, 2, 3, 4], -5, &mut out);
        assert_eq!(out, [-5, -5, -5, -5, 1, 2, -5, -5, 3, 4, -5, -5]);
        let p = prepare(&[1, 1, 2, 1], &[[0, 0], [1, 1], [0, 0], [1, 0]]).unwrap();
        let mut f = [9f32; 12];
        pad(&p, &[1.0, 2.0], 0.0, &mut f);
        assert_eq!(
            f,
            [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0]
        );
    }

    /// Every output element from its input element's row-major index, or the pad value.
    fn naive(p: &Params, input: &[i16], v: i16, out: &mut [i16]) {
        let o = p.output_dims;
        let mut k = 0;
        for a in 0..o[0] {
            for b in 0..o[1] {
                for c in 0..o[2] {
                    for d in 0..o[3] {
                        for e in 0..o[4] {
                            let at = [a, b, c, d, e];
                            let mut inside = true;
                            let mut src = 0usize;
                            let dims = p.input_dims.iter().zip(&p.left_padding);
                            for (&x, (&i, &l)) in at.iter().zip(dims) {
                                let x = x.wrapping_sub(l);
                                inside &= x < i;
                                src = src.wrapping_mul(i).wrapping_add(x);
                            }
                            out[k] = if inside { input[src] } else { v };
                            k += 1;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn merged_runs_match_element_by_element() {
        // Shapes with padding in every position, none, only the innermost, zero-sized dims.
        let cases: &[(&[usize], &[[usize; 2]])] = &[
            (&[1, 5, 6, 3], &[[0, 0], [0, 1], [0, 1], [0, 0]]),
            (&[1, 5, 6, 3], &[[0, 0], [1, 1], [2, 1], [0, 0]]),
            (&[1, 4, 4, 3], &[[0, 0], [0, 0], [0, 0], [1, 2]]),
            (&[2, 3, 4, 5], &[[1, 0], [0, 2], [1, 1], [0, 1]]),
            (&[2, 3, 4, 5], &[[0, 0], [0, 0], [0, 0], [0, 0]]),
            (&[3, 4, 5], &[[2, 1], [0, 0], [0, 0]]),
            (&[2, 2, 2, 2, 2], &[[1, 0], [0, 1], [1, 0], [0, 1], [1, 1]]),
            (&[7], &[[3, 4]]),
            (&[1, 0, 4, 2], &[[0, 0], [1, 1], [0, 0], [0, 0]]),
            (&[1, 3, 2, 8], &[[0, 0], [0, 0], [0, 3], [0, 0]]),
            // Long gaps between runs (filled one by one, not up front).
            (&[2, 3, 4], &[[0, 0], [0, 0], [1, 20]]),
            (&[1, 2, 2, 3], &[[0, 0], [0, 0], [9, 9], [0, 0]]),
        ];
        for &(shape, pads) in cases {
            let p = prepare(shape, pads).unwrap();
            let len: usize = shape.iter().product();
            let input: [i16; 256] = core::array::from_fn(|k| k as i16 + 1);
            let n: usize = p.output_dims.iter().product();
            let mut want = [0i16; 1024];
            naive(&p, &input[..len], -7, &mut want[..n]);
            for f in [pad::<i16>, pad_reference::<i16>] {
                let mut out = [99i16; 1024];
                f(&p, &input[..len], -7, &mut out[..n]);
                assert_eq!(out[..n], want[..n], "{shape:?} {pads:?}");
                assert!(out[n..].iter().all(|&x| x == 99));
            }
        }
    }
}
