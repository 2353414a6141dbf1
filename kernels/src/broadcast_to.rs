//! BROADCAST_TO: repeats a tensor along its dimensions of extent 1 (and new leading ones) to
//! a larger shape (`reference_ops::BroadcastTo`, any element type, at most 5 dimensions as
//! TFLM).

use crate::quant::PrepareError;

/// Largest rank TFLM's BROADCAST_TO accepts.
pub const MAX_DIMS: usize = 5;

/// Constant parameters of a BROADCAST_TO node, right-aligned to [`MAX_DIMS`] dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Output extents, outermost first.
    pub output_dims: [usize; MAX_DIMS],
    /// Input element stride of each output dimension (0 where the input's extent is 1).
    pub input_strides: [usize; MAX_DIMS],
    /// Elements of the input.
    pub input_size: usize,
}

impl Params {
    /// Elements of the output.
    pub fn output_size(&self) -> usize {
        self.output_dims.iter().product()
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input shape and the target shape (TFLM's
/// `ValidateOutputTensor`): the target has at most [`MAX_DIMS`] dimensions and at least as
/// many as the input, and each input dimension (right-aligned) is 1 or the target's.
pub fn prepare(input: &[usize], target: &[usize]) -> Result<Params, PrepareError> {
    let (n, m) = (input.len(), target.len());
    if m > MAX_DIMS || n > m {
        return Err(PrepareError::InvalidShape);
    }
    let mut p = Params {
        output_dims: [1; MAX_DIMS],
        input_strides: [0; MAX_DIMS],
        input_size: input.iter().product(),
    };
    let mut stride = 1;
    for k in (0..m).rev() {
        let j = MAX_DIMS - m + k;
        p.output_dims[j] = target[k];
        if let Some(i) = (k + n).checked_sub(m) {
            let d = input[i];
            if d != 1 && d != target[k] {
                return Err(PrepareError::InvalidShape);
            }
            p.input_strides[j] = if d == 1 { 0 } else { stride };
            stride *= d;
        }
    }
    Ok(collapse(p))
}

/// Merges neighbouring dimensions the kernel walks alike (the same output, fewer and longer
/// steps): extents of 1 are dropped, two broadcast dimensions (stride 0) become one, and so
/// do two the input is read along in step (`outer stride == inner stride * inner extent`).
/// The result is right-aligned again.
fn collapse(p: Params) -> Params {
    let (mut dims, mut strides) = ([1usize; MAX_DIMS], [0usize; MAX_DIMS]);
    let mut len = 0;
    for j in 0..MAX_DIMS {
        let (d, st) = (p.output_dims[j], p.input_strides[j]);
        if d == 1 {
            continue;
        }
        if len > 0 {
            let (pd, ps) = (dims[len - 1], strides[len - 1]);
            if (ps == 0 && st == 0) || (st != 0 && ps == st * d) {
                dims[len - 1] = pd * d;
                strides[len - 1] = st;
                continue;
            }
        }
        dims[len] = d;
        strides[len] = st;
        len += 1;
    }
    let mut q = Params {
        output_dims: [1; MAX_DIMS],
        input_strides: [0; MAX_DIMS],
        input_size: p.input_size,
    };
    q.output_dims[MAX_DIMS - len..].copy_from_slice(&dims[..len]);
    q.input_strides[MAX_DIMS - len..].copy_from_slice(&strides[..len]);
    q
}

/// BROADCAST_TO: `output` in row-major order, each element read through `input_strides`.
///
/// As TFLM's `BroadcastImpl`: the innermost dimensions the input is read along contiguously
/// are one block copy, and a dimension the input has as 1 is written once and then copied
/// from the output (a plain repeat is a few block copies, not one read per element).
pub fn broadcast_to<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.input_size);
    debug_assert_eq!(output.len(), p.output_size());
    let (d, s) = (&p.output_dims, &p.input_strides);
    // `sizes[j]`: output elements of one step along dimension `j`.
    let mut sizes = [1; MAX_DIMS];
    for j in (0..MAX_DIMS - 1).rev() {
        sizes[j] = sizes[j + 1] * d[j + 1];
    }
    // Dimensions `k..` are read contiguously: one block of `sizes[k - 1]` elements.
    let mut k = MAX_DIMS;
    while k > 0 && (d[k - 1] == 1 || s[k - 1] == sizes[k - 1]) {
        k -= 1;
    }
    let Some(out) = output.get_mut(..sizes[0] * d[0]) else {
        return;
    };
    // Leading extents of 1 are no step.
    let j0 = d[..k].iter().position(|&e| e != 1).unwrap_or(k);
    fill(d, s, &sizes, k, j0, 0, input, out);
}

/// Writes `out`, the output's elements of dimensions `j..` at input offset `base`.
#[allow(clippy::too_many_arguments)]
fn fill<T: Copy>(
    d: &[usize; MAX_DIMS],
    s: &[usize; MAX_DIMS],
    sizes: &[usize; MAX_DIMS],
    k: usize,
    j: usize,
    base: usize,
    input: &[T],
    out: &mut [T],
) {
    if j >= k {
        if let Some(src) = input.get(base..base + out.len()) {
            copy(out, src);
        }
        return;
    }
    let sz = sizes[j];
    if j + 1 == k {
        // The last dimension walked: each step is one contiguous block of the input.
        let mut rest = out;
        for r in 0..d[j] {
            let Some((o, more)) = rest.split_at_mut_checked(sz) else {
                return;
            };
            let at = base + r * s[j];
            let Some(src) = input.get(at..at + sz) else {
                return;
            };
            copy(o, src);
            rest = more;
        }
        return;
    }
    if s[j] == 0 {
        let Some((first, mut rest)) = out.split_at_mut_checked(sz) else {
            return;
        };
        fill(d, s, sizes, k, j + 1, base, input, first);
        for _ in 1..d[j] {
            let Some((r, more)) = rest.split_at_mut_checked(sz) else {
                return;
            };
            copy(r, first);
            rest = more;
        }
    } else {
        let mut rest = out;
        for r in 0..d[j] {
            let Some((o, more)) = rest.split_at_mut_checked(sz) else {
                return;
            };
            fill(d, s, sizes, k, j + 1, base + r * s[j], input, o);
            rest = more;
        }
    }
}

/// `dst.copy_from_slice(src)` (equal lengths), element by element for a few elements, where
/// the call of a general copy costs more than the copy.
#[inline(always)]
fn copy<T: Copy>(dst: &mut [T], src: &[T]) {
    if dst.len() <= 4 {
        for (o, x) in dst.iter_mut().zip(src) {
            *o = *x;
        }
    } else if let Some(src) = src.get(..dst.len()) {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts() {
        let p = prepare(&[3], &[2, 3]).unwrap();
        let mut o = [0i8; 6];
        broadcast_to(&p, &[1, 2, 3], &mut o);
        assert_eq!(o, [1, 2, 3, 1, 2, 3]);
        let p = prepare(&[2, 1], &[2, 3]).unwrap();
        broadcast_to(&p, &[1, 2], &mut o);
        assert_eq!(o, [1, 1, 1, 2, 2, 2]);
        assert!(prepare(&[2], &[3]).is_err());
        // Every pattern of ones in a rank-4 input against the plain strided read.
        for mask in 0..16u32 {
            let target = [2usize, 3, 2, 3];
            let input: std::vec::Vec<usize> = (0..4)
                .map(|i| if mask >> i & 1 == 1 { 1 } else { target[i] })
                .collect();
            for lead in 0..2 {
                let (tgt, inp) = (&target[..], &input[lead..]);
                let p = prepare(inp, tgt).unwrap();
                let x: std::vec::Vec<i16> = (0..p.input_size as i16).collect();
                let mut got = std::vec![0i16; p.output_size()];
                broadcast_to(&p, &x, &mut got);
                let mut want = std::vec::Vec::new();
                for i0 in 0..p.output_dims[0] {
                    for i1 in 0..p.output_dims[1] {
                        for i2 in 0..p.output_dims[2] {
                            for i3 in 0..p.output_dims[3] {
                                for i4 in 0..p.output_dims[4] {
                                    let st = p.input_strides;
                                    want.push(
                                        x[i0 * st[0]
                                            + i1 * st[1]
                                            + i2 * st[2]
                                            + i3 * st[3]
                                            + i4 * st[4]],
                                    );
                                }
                            }
                        }
                    }
                }
                assert_eq!(got, want, "{inp:?} -> {tgt:?}");
            }
        }
        assert!(prepare(&[1, 2], &[2]).is_err());
        assert!(prepare(&[1], &[1, 1, 1, 1, 1, 1]).is_err());
    }
}
