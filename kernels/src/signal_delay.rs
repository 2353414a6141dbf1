//! SignalDelay (TFLM's Signal library, `signal/micro/kernels/delay.cc` on
//! `signal/src/circular_buffer.cc`): delays every innermost row of an int16 input by
//! `delay_length` samples, the row being one stream across invocations. TFLM's circular
//! buffer per row starts with `delay_length` zeros (on reset too); each invocation writes the
//! row and reads the oldest row-length samples back. Here the state is the last
//! `delay_length` samples of each row's stream (zero after reset, as TFLM's).

/// Constant parameters of a SignalDelay node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Samples per row: the input's innermost dimension (>= 1).
    pub frame_size: usize,
    /// Rows: the input's size / `frame_size` (>= 1).
    pub rows: usize,
    /// Delay in samples (>= 0).
    pub delay: usize,
}

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters, `None` where TFLM is undefined: a negative `delay_length` (a
/// negative count of zeros written as a huge `size_t`), an empty input, or sizes past TFLM's
/// `int32_t` arithmetic (`frame_size + delay_length`).
pub fn prepare(delay_length: i64, frame_size: usize, rows: usize) -> Option<Params> {
    let delay = usize::try_from(delay_length).ok()?;
    if frame_size == 0 || rows == 0 || (frame_size as u64 + delay as u64) > i32::MAX as u64 {
        return None;
    }
    rows.checked_mul(delay)?;
    Some(Params {
        frame_size,
        rows,
        delay,
    })
}

/// Length of the int16 state: `delay` samples per row, at least one value (a planned tensor
/// is never empty; a delay of 0 leaves it unused).
pub const fn state_len(p: &Params) -> usize {
    let n = p.rows * p.delay;
    if n == 0 { 1 } else { n }
}

/// One invocation: `output[row]` is the row's stream `delay` samples earlier.
pub fn signal_delay(p: &Params, input: &[i16], state: &mut [i16], output: &mut [i16]) {
    let (n, d) = (p.frame_size, p.delay);
    debug_assert_eq!(input.len(), p.rows * n);
    debug_assert_eq!(output.len(), p.rows * n);
    debug_assert_eq!(state.len(), state_len(p));
    for (r, (x, out)) in input
        .chunks_exact(n)
        .zip(output.chunks_exact_mut(n))
        .enumerate()
    {
        if d == 0 {
            out.copy_from_slice(x);
            continue;
        }
        let hist = &mut state[r * d..(r + 1) * d];
        // out = (hist ++ x)[..n], hist = (hist ++ x)[n..].
        if d >= n {
            out.copy_from_slice(&hist[..n]);
            hist.copy_within(n.., 0);
            hist[d - n..].copy_from_slice(x);
        } else {
            out[..d].copy_from_slice(hist);
            out[d..].copy_from_slice(&x[..n - d]);
            hist.copy_from_slice(&x[n - d..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    /// TFLM's `delay_test.cc` vectors (delays 3 and 5, rows of 8, 3 and 4 samples), each run
    /// twice with the state zeroed in between (its reset tests).
    #[test]
    fn tflm_delay_test_vectors() {
        type Vector<'a> = (i64, &'a [usize], &'a [i16], &'a [i16]);
        let vectors: [Vector<'_>; 4] = [
            (
                3,
                &[8],
                &[1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0],
                &[0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0],
            ),
            (
                5,
                &[3],
                &[1, 2, 3, 4, 0, 0, 0, 0, 0],
                &[0, 0, 0, 0, 0, 1, 2, 3, 4],
            ),
            (
                3,
                &[4, 4],
                &[
                    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, 0, 0, 0,
                ],
                &[
                    0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0, 13, 2, 3, 4, 0, 6, 7, 8, 0, 10,
                    11, 12, 0, 14, 15, 0, 0,
                ],
            ),
            (
                5,
                &[4, 4],
                &[
                    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
                &[
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9,
                    10, 11, 0, 13, 14, 15, 4, 0, 0, 0, 8, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
        ];
        for (delay, shape, input, golden) in vectors {
            let n: usize = shape.iter().product();
            let frame = shape[shape.len() - 1];
            let p = prepare(delay, frame, n / frame).unwrap();
            let mut s = vec![0; state_len(&p)];
            for _ in 0..2 {
                s.fill(0);
                let mut out = vec![0; n];
                for (x, want) in input.chunks_exact(n).zip(golden.chunks_exact(n)) {
                    signal_delay(&p, x, &mut s, &mut out);
                    assert_eq!(out, want, "delay {delay}, shape {shape:?}");
                }
            }
        }
    }

    #[test]
    fn delays_each_row() {
        let p = prepare(3, 2, 2).unwrap();
        let mut s = vec![0; state_len(&p)];
        let mut out = [0; 4];
        signal_delay(&p, &[1, 2, 3, 4], &mut s, &mut out);
        assert_eq!(out, [0, 0, 0, 0]);
        signal_delay(&p, &[5, 6, 7, 8], &mut s, &mut out);
        assert_eq!(out, [0, 1, 0, 3]);
        signal_delay(&p, &[9, 10, 11, 12], &mut s, &mut out);
        assert_eq!(out, [2, 5, 4, 7]);
        let p = prepare(1, 3, 1).unwrap();
        let mut s = vec![0; state_len(&p)];
        let mut out = [0; 3];
        signal_delay(&p, &[1, 2, 3], &mut s, &mut out);
        assert_eq!(out, [0, 1, 2]);
        let p = prepare(0, 2, 1).unwrap();
        signal_delay(&p, &[4, 5], &mut [0], &mut out[..2]);
        assert_eq!(out[..2], [4, 5]);
        assert_eq!(prepare(-1, 2, 1), None);
        assert_eq!(prepare(1, 0, 1), None);
    }
}
