//! SignalOverlapAdd (TFLM's Signal library, `signal/micro/kernels/overlap_add.cc` and
//! `signal/src/overlap_add.cc`), int16 and float32: frames of `frame_size` samples are added
//! into a per-row buffer of the same length, of which the first `frame_step` samples are then
//! output and shifted out (zeros shifted in). The buffer is the kernel's state, zero after
//! reset; int16 sums saturate, float32 sums are TFLM's `buffer[i] += input[i]`.

/// Constant parameters of a SignalOverlapAdd node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Samples per input frame: the input's innermost dimension (>= 1).
    pub frame_size: usize,
    /// Samples output per frame, 1..=frame_size.
    pub frame_step: usize,
    /// Frames per row: the input's second innermost dimension (>= 1).
    pub n_frames: usize,
    /// Rows: the input's size / (n_frames * frame_size) (>= 1).
    pub rows: usize,
}

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters, `None` where TFLM is undefined: `frame_step` outside
/// `1..=frame_size` (a larger one moves a negative number of bytes; 0 outputs nothing),
/// or an empty input.
pub fn prepare(frame_step: i64, frame_size: usize, n_frames: usize, rows: usize) -> Option<Params> {
    let frame_step = usize::try_from(frame_step)
        .ok()
        .filter(|&s| s >= 1 && s <= frame_size)?;
    if n_frames == 0 || rows == 0 || frame_size > i32::MAX as usize {
        return None;
    }
    rows.checked_mul(n_frames)?.checked_mul(frame_size)?;
    Some(Params {
        frame_size,
        frame_step,
        n_frames,
        rows,
    })
}

/// Length of the state: one buffer of `frame_size` samples per row.
pub const fn state_len(p: &Params) -> usize {
    p.rows * p.frame_size
}

/// Values of the output: `frame_step` per frame.
pub const fn output_len(p: &Params) -> usize {
    p.rows * p.n_frames * p.frame_step
}

fn overlap_add<T: Copy + Default>(
    p: &Params,
    input: &[T],
    state: &mut [T],
    output: &mut [T],
    add: impl Fn(T, T) -> T,
) {
    let (size, step) = (p.frame_size, p.frame_step);
    debug_assert_eq!(input.len(), p.rows * p.n_frames * size);
    debug_assert_eq!(output.len(), output_len(p));
    debug_assert_eq!(state.len(), state_len(p));
    let rows = input
        .chunks_exact(p.n_frames * size)
        .zip(output.chunks_exact_mut(p.n_frames * step))
        .zip(state.chunks_exact_mut(size));
    for ((x, out), buf) in rows {
        for (frame, o) in x.chunks_exact(size).zip(out.chunks_exact_mut(step)) {
            for (b, &v) in buf.iter_mut().zip(frame) {
                *b = add(*b, v);
            }
            o.copy_from_slice(&buf[..step]);
            buf.copy_within(step.., 0);
            buf[size - step..].fill(T::default());
        }
    }
}

/// int16: `buffer[i] = clamp(buffer[i] + input[i])`.
pub fn signal_overlap_add_s16(p: &Params, input: &[i16], state: &mut [i16], output: &mut [i16]) {
    overlap_add(p, input, state, output, |b, x| b.saturating_add(x));
}

/// float32: `buffer[i] += input[i]`.
pub fn signal_overlap_add_f32(p: &Params, input: &[f32], state: &mut [f32], output: &mut [f32]) {
    overlap_add(p, input, state, output, |b, x| b + x);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TFLM's `overlap_add_test.cc` vectors (frame_size 3, frame_step 1): one frame per
    /// invoke, four per invoke, four per invoke on 2x2 rows, and float32; each run twice with
    /// the state zeroed in between (its reset test).
    #[test]
    fn tflm_overlap_add_test_vectors() {
        let input: [i16; 12] = [125, -12, -895, 1000, 65, -212, 63, 71, 52, 1, -17, 32];
        let golden: [i16; 4] = [125, 988, -767, -140];
        for (n_frames, rows) in [(1, 1), (4, 1), (4, 4)] {
            let p = prepare(1, 3, n_frames, rows).unwrap();
            let mut s = [0i16; 12];
            let s = &mut s[..state_len(&p)];
            for _ in 0..2 {
                s.fill(0);
                for (x, want) in input
                    .chunks_exact(3 * n_frames)
                    .zip(golden.chunks_exact(n_frames))
                {
                    let x: std::vec::Vec<i16> = (0..rows).flat_map(|_| x.iter().copied()).collect();
                    let mut out = [0i16; 16];
                    let out = &mut out[..output_len(&p)];
                    signal_overlap_add_s16(&p, &x, s, out);
                    for row in out.chunks_exact(n_frames) {
                        assert_eq!(row, want, "{n_frames} frames, {rows} rows");
                    }
                }
            }
        }
        let input: [f32; 12] = [
            12.5, -1.2, -89.5, 100.0, 6.5, -21.2, 6.3, 7.1, 5.2, 0.1, -1.7, 3.2,
        ];
        let golden: [f32; 4] = [12.5, 98.8, -76.7, -14.0];
        let p = prepare(1, 3, 1, 1).unwrap();
        let mut s = [0f32; 3];
        for (x, want) in input.chunks_exact(3).zip(golden) {
            let mut out = [0f32];
            signal_overlap_add_f32(&p, x, &mut s, &mut out);
            assert_eq!(out[0].to_bits(), want.to_bits());
        }
    }

    #[test]
    fn adds_overlapping_frames() {
        // frame_size 3, frame_step 2, two frames per invocation.
        let p = prepare(2, 3, 2, 1).unwrap();
        let mut s = [0i16; 3];
        let mut out = [0i16; 4];
        signal_overlap_add_s16(&p, &[10, 11, 12, 13, 14, 15], &mut s, &mut out);
        assert_eq!(out, [10, 11, 25, 14]);
        signal_overlap_add_s16(&p, &[20, 21, 22, 23, 24, 25], &mut s, &mut out);
        assert_eq!(out, [35, 21, 45, 24]);
        let mut s = [32000i16, -32000, 0];
        let p = prepare(1, 3, 1, 1).unwrap();
        signal_overlap_add_s16(&p, &[1000, -1000, 0], &mut s, &mut out[..1]);
        assert_eq!((out[0], s), (32767, [-32768, 0, 0]));
        let mut s = [0.5f32, 0.0];
        let p = prepare(2, 2, 1, 1).unwrap();
        let mut o = [0f32; 2];
        signal_overlap_add_f32(&p, &[0.25, -1.0], &mut s, &mut o);
        assert_eq!((o, s), ([0.75, -1.0], [0.0, 0.0]));
        assert_eq!(prepare(0, 3, 1, 1), None);
        assert_eq!(prepare(4, 3, 1, 1), None);
    }
}
