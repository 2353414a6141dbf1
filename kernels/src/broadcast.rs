//! Elementwise broadcasting for binary operators (ADD, SUB, MUL, ...), following TFLM's
//! `NdArrayDescsForElementwiseBroadcast` + `BroadcastBinaryFunction6DSlow`: both input shapes
//! are right-aligned and extended to 6-D, a dimension of extent 1 is repeated (stride 0), and
//! the output is produced in row-major order, element `i` being `f(input1[..], input2[..])`.
//!
//! [`Broadcast::new`] runs at build time and additionally merges adjacent dimensions that are
//! contiguous for both inputs, which shortens the loops without changing which pairs of
//! elements meet or the order outputs are written in.

use crate::quant::PrepareError;
use crate::util::map_by8;

/// A precomputed 6-D broadcast iteration: output extents and per-input element strides
/// (0 along broadcast dimensions), outermost dimension first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Broadcast {
    /// Output extents, outermost first.
    pub output_dims: [usize; 6],
    /// Element stride of input 1 along each output dimension.
    pub input1_strides: [usize; 6],
    /// Element stride of input 2 along each output dimension.
    pub input2_strides: [usize; 6],
}

impl Broadcast {
    /// Broadcast of two shapes (at most 6 dims each, outermost first, TFLite's rules: aligned
    /// on the last dimension, each pair of extents equal or one of them 1). Zero-sized
    /// dimensions are rejected.
    pub fn new(shape1: &[usize], shape2: &[usize]) -> Result<Broadcast, PrepareError> {
        if shape1.len() > 6 || shape2.len() > 6 {
            return Err(PrepareError::InvalidShape);
        }
        let extend = |s: &[usize]| {
            let mut e = [1usize; 6];
            e[6 - s.len()..].copy_from_slice(s);
            e
        };
        let (e1, e2) = (extend(shape1), extend(shape2));
        if e1.contains(&0) || e2.contains(&0) {
            return Err(PrepareError::InvalidShape);
        }
        // Row-major strides of each input over its own (extended) shape.
        let mut s1 = [0usize; 6];
        let mut s2 = [0usize; 6];
        let (mut acc1, mut acc2) = (1usize, 1usize);
        for i in (0..6).rev() {
            s1[i] = acc1;
            s2[i] = acc2;
            acc1 *= e1[i];
            acc2 *= e2[i];
        }
        // Collect non-trivial output dims as (extent, stride1, stride2), outermost first.
        let mut dims = [(1usize, 0usize, 0usize); 6];
        let mut n = 0;
        for i in 0..6 {
            let (a, b) = (e1[i], e2[i]);
            if a != b && a != 1 && b != 1 {
                return Err(PrepareError::InvalidShape);
            }
            let extent = a.max(b);
            if extent == 1 {
                continue;
            }
            let st1 = if a == 1 { 0 } else { s1[i] };
            let st2 = if b == 1 { 0 } else { s2[i] };
            // Merge with the previous (outer) dim when it continues contiguously for both.
            if n > 0 {
                let (pe, ps1, ps2) = dims[n - 1];
                if ps1 == st1 * extent && ps2 == st2 * extent {
                    dims[n - 1] = (pe * extent, st1, st2);
                    continue;
                }
            }
            dims[n] = (extent, st1, st2);
            n += 1;
        }
        let mut b = Broadcast {
            output_dims: [1; 6],
            input1_strides: [0; 6],
            input2_strides: [0; 6],
        };
        for (k, &(e, st1, st2)) in dims[..n].iter().enumerate() {
            let j = 6 - n + k;
            b.output_dims[j] = e;
            b.input1_strides[j] = st1;
            b.input2_strides[j] = st2;
        }
        Ok(b)
    }

    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        let d = &self.output_dims;
        d[0] * d[1] * d[2] * d[3] * d[4] * d[5]
    }

    /// Smallest input length the strides address (`max index + 1`) for the given strides.
    const fn span(&self, strides: &[usize; 6]) -> usize {
        let mut max = 0;
        let mut i = 0;
        while i < 6 {
            max += (self.output_dims[i] - 1) * strides[i];
            i += 1;
        }
        max + 1
    }

    /// Minimum length of input 1.
    pub const fn input1_span(&self) -> usize {
        self.span(&self.input1_strides)
    }

    /// Minimum length of input 2.
    pub const fn input2_span(&self) -> usize {
        self.span(&self.input2_strides)
    }
}

/// Applies `f` elementwise under the broadcast `b`: `output[i] = f(input1[j1(i)], input2[j2(i)])`
/// in row-major output order.
#[inline]
pub fn broadcast_binary<T: Copy, U: Copy>(
    b: &Broadcast,
    input1: &[T],
    input2: &[T],
    output: &mut [U],
    f: impl Fn(T, T) -> U,
) {
    debug_assert!(input1.len() >= b.input1_span() && input2.len() >= b.input2_span());
    debug_assert_eq!(output.len(), b.output_size());
    let d = &b.output_dims;
    let (s1, s2) = (&b.input1_strides, &b.input2_strides);
    let inner = d[5];
    if inner == 0 {
        return;
    }
    let row = |o: &mut [U], i1: usize, i2: usize| match (s1[5], s2[5]) {
        (1, 1) => {
            for ((o, &x), &y) in o
                .iter_mut()
                .zip(&input1[i1..i1 + inner])
                .zip(&input2[i2..i2 + inner])
            {
                *o = f(x, y);
            }
        }
        // One value of an input against a row of the other (e.g. a scalar operand).
        (0, 1) => {
            let x = input1[i1];
            map_by8(&input2[i2..i2 + inner], o, |y| f(x, y));
        }
        (1, 0) => {
            let y = input2[i2];
            map_by8(&input1[i1..i1 + inner], o, |x| f(x, y));
        }
        (t1, t2) => {
            for (k, o) in o.iter_mut().enumerate() {
                *o = f(input1[i1 + k * t1], input2[i2 + k * t2]);
            }
        }
    };
    // The output's rows in order (a running offset: no division by the row length).
    let mut at = 0;
    let (mut a1, mut a2) = (0usize, 0usize);
    for _ in 0..d[0] {
        let (mut b1, mut b2) = (a1, a2);
        for _ in 0..d[1] {
            let (mut c1, mut c2) = (b1, b2);
            for _ in 0..d[2] {
                let (mut e1, mut e2) = (c1, c2);
                for _ in 0..d[3] {
                    let (mut g1, mut g2) = (e1, e2);
                    for _ in 0..d[4] {
                        let Some(o) = output.get_mut(at..at + inner) else {
                            return;
                        };
                        at += inner;
                        row(o, g1, g2);
                        g1 += s1[4];
                        g2 += s2[4];
                    }
                    e1 += s1[3];
                    e2 += s2[3];
                }
                c1 += s1[2];
                c2 += s2[2];
            }
            b1 += s1[1];
            b2 += s2[1];
        }
        a1 += s1[0];
        a2 += s2[0];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Naive 6-D broadcast straight from the TFLM definition.
    fn naive(shape1: &[usize], shape2: &[usize], in1: &[i32], in2: &[i32]) -> Vec<(i32, i32)> {
        let ext = |s: &[usize]| {
            let mut e = [1usize; 6];
            e[6 - s.len()..].copy_from_slice(s);
            e
        };
        let (e1, e2) = (ext(shape1), ext(shape2));
        let out: Vec<usize> = (0..6).map(|i| e1[i].max(e2[i])).collect();
        let idx = |e: &[usize; 6], c: &[usize; 6]| {
            let mut k = 0;
            for i in 0..6 {
                k = k * e[i] + if e[i] == 1 { 0 } else { c[i] };
            }
            k
        };
        let mut res = Vec::new();
        let total: usize = out.iter().product();
        for flat in 0..total {
            let mut c = [0usize; 6];
            let mut r = flat;
            for i in (0..6).rev() {
                c[i] = r % out[i];
                r /= out[i];
            }
            res.push((in1[idx(&e1, &c)], in2[idx(&e2, &c)]));
        }
        res
    }

    #[test]
    fn matches_naive_broadcast() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[2, 3, 4], &[2, 3, 4]),
            (&[2, 3, 4], &[4]),
            (&[4], &[2, 3, 4]),
            (&[2, 1, 4], &[1, 3, 1]),
            (&[1, 3, 1, 5], &[2, 1, 4, 5]),
            (&[1], &[3, 2]),
            (&[3, 2], &[1]),
            (&[2, 2, 1, 3, 1, 2], &[1, 2, 3, 1, 2, 2]),
            (&[5, 1], &[1, 5]),
            (&[1, 1, 1], &[1]),
        ];
        for &(a, b) in cases {
            let n1: usize = a.iter().product();
            let n2: usize = b.iter().product();
            let in1: Vec<i32> = (0..n1 as i32).collect();
            let in2: Vec<i32> = (0..n2 as i32).map(|v| v * 1000).collect();
            let bc = Broadcast::new(a, b).unwrap();
            let mut out = std::vec![(0, 0); bc.output_size()];
            broadcast_binary(&bc, &in1, &in2, &mut out, |x, y| (x, y));
            assert_eq!(out, naive(a, b, &in1, &in2), "{a:?} {b:?}");
            assert!(bc.input1_span() <= n1 && bc.input2_span() <= n2);
        }
    }

    #[test]
    fn merges_contiguous_dims() {
        let b = Broadcast::new(&[2, 3, 4], &[2, 3, 4]).unwrap();
        assert_eq!(b.output_dims, [1, 1, 1, 1, 1, 24]);
        let b = Broadcast::new(&[2, 3, 4], &[4]).unwrap();
        assert_eq!(b.output_dims, [1, 1, 1, 1, 6, 4]);
        assert_eq!(b.input2_strides[4], 0);
        assert!(Broadcast::new(&[2, 3], &[3, 2]).is_err());
        assert!(Broadcast::new(&[0, 3], &[3]).is_err());
    }
}
