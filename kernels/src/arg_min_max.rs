//! ARG_MAX and ARG_MIN along one axis: float32 or int8 input, int32 output (the only types
//! the pinned TFLM runs: `arg_min_max.cc` refuses int16/int32 inputs, int64 outputs and
//! int64 axes).
//!
//! Follows `reference_ops::ArgMinMax` with `GreaterFn`/`LessFn`: for each (outer, inner)
//! position the running value starts at index 0 and is replaced only where
//! `cmp(value, running)` holds strictly, so ties keep the first index, a NaN at index 0 is
//! never replaced (every comparison with it is false) and a later NaN is never taken.
//! The input is viewed as `[outer, axis_size, inner]`; the output as `[outer, inner]`.

/// Constant parameters of an ARG_MAX/ARG_MIN node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Product of the dims before the axis.
    pub outer: usize,
    /// The axis's extent (at least 1).
    pub axis_size: usize,
    /// Product of the dims after the axis.
    pub inner: usize,
}

impl Params {
    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        self.outer * self.inner
    }

    /// Number of input elements.
    pub const fn input_size(&self) -> usize {
        self.outer * self.axis_size * self.inner
    }
}

/// The kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Parameters for `input_shape` (rank >= 1, no zero dims) along `axis` (negative counts from
/// the end, as TFLM adds the rank once).
pub fn prepare(input_shape: &[usize], axis: i32) -> Option<Params> {
    let rank = input_shape.len() as i32;
    let a = if axis < 0 { axis + rank } else { axis };
    if rank == 0 || !(0..rank).contains(&a) || input_shape.contains(&0) {
        return None;
    }
    let a = a as usize;
    Some(Params {
        outer: input_shape[..a].iter().product(),
        axis_size: input_shape[a],
        inner: input_shape[a + 1..].iter().product(),
    })
}

#[inline(always)]
fn arg<T: Copy>(p: &Params, input: &[T], output: &mut [i32], cmp: impl Fn(T, T) -> bool) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    if p.axis_size == 1 {
        // One candidate: every index is 0.
        output.fill(0);
        return;
    }
    if p.inner == 1 {
        // The axis is innermost: one contiguous run per output.
        for (o, run) in output
            .iter_mut()
            .zip(input.chunks_exact(p.axis_size.max(1)))
        {
            let mut best = run[0];
            let mut index = 0;
            for (i, &v) in run.iter().enumerate().skip(1) {
                if cmp(v, best) {
                    best = v;
                    index = i as i32;
                }
            }
            *o = index;
        }
        return;
    }
    let mut out = output.iter_mut();
    for outer in 0..p.outer {
        let base = outer * p.axis_size * p.inner;
        for inner in 0..p.inner {
            let Some(o) = out.next() else { return };
            let mut best = input[base + inner];
            let mut index = 0;
            for i in 1..p.axis_size {
                let v = input[base + i * p.inner + inner];
                if cmp(v, best) {
                    best = v;
                    index = i as i32;
                }
            }
            *o = index;
        }
    }
}

/// Float32 ARG_MAX.
pub fn arg_max_f32(p: &Params, input: &[f32], output: &mut [i32]) {
    arg(p, input, output, |a, b| a > b);
}

/// Float32 ARG_MIN.
pub fn arg_min_f32(p: &Params, input: &[f32], output: &mut [i32]) {
    arg(p, input, output, |a, b| a < b);
}

/// Int8 ARG_MAX.
pub fn arg_max_s8(p: &Params, input: &[i8], output: &mut [i32]) {
    arg(p, input, output, |a, b| a > b);
}

/// Int8 ARG_MIN.
pub fn arg_min_s8(p: &Params, input: &[i8], output: &mut [i32]) {
    arg(p, input, output, |a, b| a < b);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_index_wins_and_nan_rules() {
        let p = prepare(&[2, 3], -1).unwrap();
        let mut out = [0i32; 2];
        arg_max_f32(&p, &[1.0, 3.0, 3.0, f32::NAN, 5.0, 6.0], &mut out);
        assert_eq!(out, [1, 0]);
        arg_min_f32(&p, &[1.0, f32::NAN, -1.0, 2.0, 2.0, 2.0], &mut out);
        assert_eq!(out, [2, 0]);
        let p = prepare(&[2, 3], 0).unwrap();
        let mut out = [0i32; 3];
        arg_max_s8(&p, &[1, 5, -3, 2, 5, -4], &mut out);
        assert_eq!(out, [1, 0, 0]);
        arg_min_s8(&p, &[1, 5, -3, 2, 5, -4], &mut out);
        assert_eq!(out, [0, 0, 1]);
        // An axis of one: every index is 0 (NaN or not).
        let p = prepare(&[2, 1, 2], 1).unwrap();
        let mut out = [7i32; 4];
        arg_max_f32(&p, &[f32::NAN, 1.0, -2.0, 3.0], &mut out);
        assert_eq!(out, [0; 4]);
        assert!(prepare(&[2, 3], 2).is_none());
        assert!(prepare(&[2, 3], -3).is_none());
    }
}
