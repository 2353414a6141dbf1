//! Small shared helpers for the kernels: window clipping, C++-exact clamping, and the
//! elementwise loops shared by the out-of-place and in-place forms of unary and binary
//! kernels.

/// Range of filter taps `k` in `0..filter_size` whose input position
/// `origin + dilation * k` lies inside `0..input_size`, as `(start, end)` (empty when
/// `start >= end`). These are exactly the taps TFLM's reference kernels visit (they skip the
/// others one by one), in the same increasing order.
#[inline]
pub(crate) fn tap_range(
    origin: isize,
    dilation: usize,
    input_size: usize,
    filter_size: usize,
) -> (usize, usize) {
    let dilation = dilation.max(1) as isize;
    let start = if origin >= 0 {
        0
    } else {
        ((-origin) + dilation - 1) / dilation
    };
    let room = input_size as isize - origin;
    let end = if room <= 0 {
        0
    } else {
        (room + dilation - 1) / dilation
    };
    let end = (end as usize).min(filter_size);
    (start as usize, end)
}

/// `ActivationFunctionWithMinMax<float>`: `std::min(std::max(x, lo), hi)` with C++'s NaN
/// behaviour (`std::max(a, b)` is `a < b ? b : a`).
#[inline]
pub(crate) fn clamp_f32(x: f32, lo: f32, hi: f32) -> f32 {
    let y = if x < lo { lo } else { x };
    if hi < y { hi } else { y }
}

/// `std::max<float>(a, b)`: `a < b ? b : a`.
#[inline]
pub(crate) fn max_f32(a: f32, b: f32) -> f32 {
    if a < b { b } else { a }
}

/// Clamps an `i32` to `lo..=hi` in TFLM's order (`max` with the minimum first, then `min`).
#[inline]
pub(crate) fn clamp_i32(x: i32, lo: i32, hi: i32) -> i32 {
    let y = if x < lo { lo } else { x };
    if hi < y { hi } else { y }
}

/// Calls `f` on each consecutive `n`-element run of `data` (a trailing shorter part is left
/// alone): `chunks_exact_mut` without the division that sizes its iterator, which costs as
/// much as a small kernel's work where the runs are a pixel's few channels.
#[inline(always)]
pub(crate) fn for_each_run_mut<T>(data: &mut [T], n: usize, mut f: impl FnMut(&mut [T])) {
    if n == 0 {
        return;
    }
    let mut rest = data;
    while let Some((run, tail)) = rest.split_at_mut_checked(n) {
        f(run);
        rest = tail;
    }
}

/// `a / b` (`b > 0`), in 32 bits when both fit (a 64-bit division costs several times a
/// 32-bit one on 64-bit hosts; on 32-bit targets this is the one division it always was).
#[inline(always)]
pub(crate) fn div_usize(a: usize, b: usize) -> usize {
    match (u32::try_from(a), u32::try_from(b)) {
        (Ok(a), Ok(b)) => (a / b) as usize,
        _ => a / b,
    }
}

/// `dst.copy_from_slice(src)` for the short runs of the data movement kernels (a pixel's
/// channels, a row of a few elements), where a call of the general copy costs more than the
/// copy: up to 16 elements as two possibly overlapping fixed-size copies. A shorter `src`
/// copies nothing.
#[inline(always)]
pub(crate) fn copy_run<T: Copy>(dst: &mut [T], src: &[T]) {
    let n = dst.len();
    let Some(src) = src.get(..n) else { return };
    /// The first and the last `K` elements (`K <= n <= 2 K`).
    #[inline(always)]
    fn ends<T: Copy, const K: usize>(dst: &mut [T], src: &[T]) {
        let n = dst.len();
        dst[..K].copy_from_slice(&src[..K]);
        dst[n - K..].copy_from_slice(&src[n - K..]);
    }
    match n {
        0 => {}
        1 => dst[0] = src[0],
        2..=3 => ends::<T, 2>(dst, src),
        4..=7 => ends::<T, 4>(dst, src),
        8..=16 => ends::<T, 8>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

/// `dst.fill(value)` for short runs, element by element (see [`copy_run`]).
#[inline(always)]
pub(crate) fn fill_run<T: Copy>(dst: &mut [T], value: T) {
    if dst.len() <= 16 {
        for d in dst.iter_mut() {
            *d = value;
        }
    } else {
        dst.fill(value);
    }
}

/// `output[i] = f(input[i])`: the loop of every unary elementwise kernel.
#[inline(always)]
pub(crate) fn map<T: Copy, U>(input: &[T], output: &mut [U], f: impl Fn(T) -> U) {
    debug_assert_eq!(input.len(), output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        *o = f(x);
    }
}

/// `data[i] = f(data[i])`: the in-place form of [`map`], giving the same elements.
#[inline(always)]
pub(crate) fn map_in_place<T: Copy>(data: &mut [T], f: impl Fn(T) -> T) {
    for d in data.iter_mut() {
        *d = f(*d);
    }
}

/// Runs the out-of-place kernel `kernel(input, output)` in place on `data`, through a copy of
/// each chunk of `N` elements on the stack (`N` elements of stack, one `memcpy` per chunk).
/// For kernels whose element function calls a large `#[inline]` helper: a second, in-place
/// loop over the same element function would be a second call site, and LLVM would then stop
/// inlining the helper into the out-of-place kernel.
#[inline(always)]
pub(crate) fn in_place_by_chunks<T: Copy + Default, const N: usize>(
    data: &mut [T],
    kernel: impl Fn(&[T], &mut [T]),
) {
    let mut buffer = [T::default(); N];
    for chunk in data.chunks_mut(N) {
        let input = &mut buffer[..chunk.len()];
        input.copy_from_slice(chunk);
        kernel(input, chunk);
    }
}

/// `output[i] = f(input[i])` eight elements per step (written out, which opt-level s keeps
/// unrolled: `array::map` would stay a loop through the stack), then the rest one by one;
/// over the shorter of the two slices. The loop of a binary kernel whose other operand is one
/// broadcast value (a scalar): at opt-level s it runs in about half the instructions of the
/// plain loop.
#[inline(always)]
pub(crate) fn map_by8<T: Copy, U: Copy>(input: &[T], output: &mut [U], f: impl Fn(T) -> U) {
    let mut outs = output.chunks_exact_mut(8);
    let mut ins = input.chunks_exact(8);
    for (o, x) in (&mut outs).zip(&mut ins) {
        if let (Ok(o), Ok(&[x0, x1, x2, x3, x4, x5, x6, x7])) =
            (<&mut [U; 8]>::try_from(o), <&[T; 8]>::try_from(x))
        {
            *o = [f(x0), f(x1), f(x2), f(x3), f(x4), f(x5), f(x6), f(x7)];
        }
    }
    for (o, &x) in outs.into_remainder().iter_mut().zip(ins.remainder()) {
        *o = f(x);
    }
}

/// `output[i] = f(a[i], b[i])` four elements per step (written out, which opt-level s keeps
/// unrolled, as in [`map_by8`]), then the rest one by one; over the shortest of the three
/// slices. For element functions too large for eight at a time in the registers (a multiply
/// and a clamp of two operands).
#[inline(always)]
#[cfg_attr(any(kiln_arch = "dsp", kiln_arch = "mve", test), allow(dead_code))]
pub(crate) fn zip_map_by4<T: Copy, V: Copy, U: Copy>(
    a: &[T],
    b: &[V],
    output: &mut [U],
    f: impl Fn(T, V) -> U,
) {
    let n = output.len().min(a.len()).min(b.len());
    let (a, b, output) = (&a[..n], &b[..n], &mut output[..n]);
    let mut outs = output.chunks_exact_mut(4);
    let (mut xs, mut ys) = (a.chunks_exact(4), b.chunks_exact(4));
    for ((o, x), y) in (&mut outs).zip(&mut xs).zip(&mut ys) {
        if let (Ok(o), Ok(&[x0, x1, x2, x3]), Ok(&[y0, y1, y2, y3])) = (
            <&mut [U; 4]>::try_from(o),
            <&[T; 4]>::try_from(x),
            <&[V; 4]>::try_from(y),
        ) {
            *o = [f(x0, y0), f(x1, y1), f(x2, y2), f(x3, y3)];
        }
    }
    let rest = outs.into_remainder().iter_mut();
    for ((o, &x), &y) in rest.zip(xs.remainder()).zip(ys.remainder()) {
        *o = f(x, y);
    }
}

/// `output[i] = f(input1[i], input2[i])`: the loop of every same-shape binary kernel.
#[inline(always)]
pub(crate) fn zip_map<T: Copy, U>(
    input1: &[T],
    input2: &[T],
    output: &mut [U],
    f: impl Fn(T, T) -> U,
) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = f(x, y);
    }
}

/// `input1_output[i] = f(input1_output[i], input2[i])`: [`zip_map`] with the output
/// overwriting input 1.
#[inline(always)]
pub(crate) fn zip_map_in_place1<T: Copy>(
    input1_output: &mut [T],
    input2: &[T],
    f: impl Fn(T, T) -> T,
) {
    debug_assert_eq!(input1_output.len(), input2.len());
    for (d, &y) in input1_output.iter_mut().zip(input2) {
        *d = f(*d, y);
    }
}

/// `input2_output[i] = f(input1[i], input2_output[i])`: [`zip_map`] with the output
/// overwriting input 2 (the inputs keep their roles).
#[inline(always)]
pub(crate) fn zip_map_in_place2<T: Copy>(
    input1: &[T],
    input2_output: &mut [T],
    f: impl Fn(T, T) -> T,
) {
    debug_assert_eq!(input1.len(), input2_output.len());
    for (d, &x) in input2_output.iter_mut().zip(input1) {
        *d = f(x, *d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn brute(origin: isize, dil: usize, n: usize, f: usize) -> (usize, usize) {
        let v: Vec<usize> = (0..f)
            .filter(|&k| {
                let p = origin + (dil * k) as isize;
                p >= 0 && p < n as isize
            })
            .collect();
        match (v.first(), v.last()) {
            (Some(&a), Some(&b)) => (a, b + 1),
            _ => (0, 0),
        }
    }

    #[test]
    fn tap_range_matches_brute_force() {
        for origin in -12isize..12 {
            for dil in 1..4 {
                for n in 1..9 {
                    for f in 1..6 {
                        let (s, e) = tap_range(origin, dil, n, f);
                        let (bs, be) = brute(origin, dil, n, f);
                        if bs < be {
                            assert_eq!((s, e), (bs, be), "origin={origin} dil={dil} n={n} f={f}");
                        } else {
                            assert!(s >= e, "origin={origin} dil={dil} n={n} f={f}: {s} {e}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn short_runs_copy_and_fill() {
        for n in 0..40usize {
            let src: Vec<i32> = (0..n as i32).map(|v| v * 3 - 7).collect();
            let mut dst = std::vec![0i32; n];
            copy_run(&mut dst, &src);
            assert_eq!(dst, src, "copy {n}");
            fill_run(&mut dst, -5);
            assert!(dst.iter().all(|&v| v == -5), "fill {n}");
        }
        let mut runs = std::vec![0u8; 11];
        let mut k = 0;
        for_each_run_mut(&mut runs, 3, |r| {
            k += 1;
            r.fill(k);
        });
        assert_eq!(runs, [1, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0]);
        for_each_run_mut(&mut runs, 0, |_| unreachable!());
        let mut dst = [0u8; 3];
        copy_run(&mut dst, &[1, 2]);
        assert_eq!(dst, [0, 0, 0]);
    }

    #[test]
    fn clamps_follow_cpp() {
        assert!(clamp_f32(f32::NAN, 0.0, 6.0).is_nan());
        assert_eq!(clamp_f32(7.0, 0.0, 6.0), 6.0);
        assert_eq!(clamp_f32(-1.0, 0.0, 6.0), 0.0);
        assert!(max_f32(f32::NAN, 1.0).is_nan());
        assert_eq!(max_f32(1.0, f32::NAN), 1.0);
        assert_eq!(clamp_i32(300, -128, 127), 127);
        assert_eq!(clamp_i32(-300, -128, 127), -128);
    }
}
