//! SignalFramer (TFLM's Signal library, `signal/micro/kernels/framer.cc` on
//! `signal/src/circular_buffer.cc`): cuts a stream of int16 samples into overlapping frames.
//! Every innermost row of the input is `n_frames * frame_step` new samples of its own stream;
//! each step of `frame_step` samples yields one frame of `frame_size` samples once the stream
//! holds enough of them, and the bool output says whether every frame of this invocation was
//! produced.
//!
//! TFLM keeps, per row, a circular buffer of `ceil(frame_size / frame_step) * frame_step`
//! samples: each step writes `frame_step` samples, and when at least `frame_size` are held it
//! copies out the *oldest* `frame_size` and discards `frame_step`. The number held therefore
//! grows by `frame_step` per step until the first frame, then stays at `history` (below)
//! forever, so the buffer is equivalent to a linear history of the last `history` samples:
//! `frame_size - frame_step` with `prefill` (TFLM writes that many zeros on reset, so frames
//! come from the first step on), `ceil(frame_size / frame_step) * frame_step - frame_step`
//! without (the frame then lags the newest sample by the rounding). Here the state is that
//! history per row plus, in its last two values, the number of samples held (a `u32`, low
//! half first; it only counts up to `history` before the first frame, without prefill), so a
//! zeroed state is TFLM's reset state.
//!
//! Frames TFLM does not produce (before the stream holds enough samples) it leaves unwritten:
//! their bytes are whatever its arena held. Kiln writes zeros there, so the output is defined.

/// Constant parameters of a SignalFramer node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Samples per frame (>= 1).
    pub frame_size: usize,
    /// New samples per frame (>= 1).
    pub frame_step: usize,
    /// Frames per row and invocation: the input's innermost dimension / `frame_step`.
    pub n_frames: usize,
    /// Independent streams: the input's size / its innermost dimension.
    pub rows: usize,
    /// Samples of history kept per row (see the module docs).
    pub history: usize,
    /// Whether the history starts full of zeros (TFLM's `prefill`).
    pub prefill: bool,
}

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters, `None` where TFLM is undefined or crashes: `frame_step < 1`
/// (division by zero), `frame_size < 1` (a zero-capacity buffer written to), `prefill` with
/// `frame_size < frame_step` (a negative count of zeros written as a huge `size_t`), an
/// innermost dimension that is no positive multiple of `frame_step`, or sizes whose
/// arithmetic overflows TFLM's `int32_t` (or this target's `usize`).
pub fn prepare(
    frame_size: i64,
    frame_step: i64,
    prefill: bool,
    innermost: usize,
    rows: usize,
) -> Option<Params> {
    let size = usize::try_from(frame_size).ok().filter(|&s| s >= 1)?;
    let step = usize::try_from(frame_step).ok().filter(|&s| s >= 1)?;
    // TFLM computes the capacity as `frame_size + frame_step - 1` in int32.
    if frame_size.checked_add(frame_step)? - 1 > i32::MAX as i64 {
        return None;
    }
    if innermost < step || !innermost.is_multiple_of(step) || rows == 0 {
        return None;
    }
    let history = if prefill {
        size.checked_sub(step)?
    } else {
        size.div_ceil(step).checked_mul(step)? - step
    };
    let p = Params {
        frame_size: size,
        frame_step: step,
        n_frames: innermost / step,
        rows,
        history,
        prefill,
    };
    // Every length the kernel slices must be representable.
    p.rows.checked_mul(p.n_frames)?.checked_mul(p.frame_size)?;
    state_len_checked(&p)?;
    Some(p)
}

fn state_len_checked(p: &Params) -> Option<usize> {
    p.rows.checked_mul(p.history)?.checked_add(2)
}

/// Length of the int16 state: `history` samples per row and the two halves of the count.
pub const fn state_len(p: &Params) -> usize {
    p.rows * p.history + 2
}

/// One invocation: `input` holds `rows * n_frames * frame_step` samples, `output`
/// `rows * n_frames * frame_size`, `state` [`state_len`] values (zero after reset), `valid`
/// one bool (0 or 1).
pub fn signal_framer(
    p: &Params,
    input: &[i16],
    state: &mut [i16],
    output: &mut [i16],
    valid: &mut [u8],
) {
    let (size, step, hist_len) = (p.frame_size, p.frame_step, p.history);
    debug_assert_eq!(input.len(), p.rows * p.n_frames * step);
    debug_assert_eq!(output.len(), p.rows * p.n_frames * size);
    debug_assert_eq!(state.len(), state_len(p));
    let (history, count) = state.split_at_mut(state.len() - 2);
    let stored = count[0] as u16 as usize | (count[1] as u16 as usize) << 16;
    // Without prefill the count is a multiple of frame_step up to `history` (itself one).
    let held0 = if p.prefill {
        hist_len
    } else {
        stored.min(hist_len) / step * step
    };
    let mut all = true;
    let mut held_end = held0;
    let rows = input
        .chunks_exact(p.n_frames * step)
        .zip(output.chunks_exact_mut(p.n_frames * size));
    for (r, (x, out)) in rows.enumerate() {
        let hist = &mut history[r * hist_len..(r + 1) * hist_len];
        let mut held = held0;
        for (new, frame) in x.chunks_exact(step).zip(out.chunks_exact_mut(size)) {
            if held == hist_len {
                // The oldest `size` of history ++ new (size <= history + step).
                let a = hist_len.min(size);
                frame[..a].copy_from_slice(&hist[..a]);
                frame[a..].copy_from_slice(&new[..size - a]);
                // Keep the newest `history` of history ++ new.
                if step >= hist_len {
                    hist.copy_from_slice(&new[step - hist_len..]);
                } else {
                    hist.copy_within(step.., 0);
                    hist[hist_len - step..].copy_from_slice(new);
                }
            } else {
                // Not enough samples yet (only without prefill): `held + step <= history`.
                hist[held..held + step].copy_from_slice(new);
                held += step;
                frame.fill(0);
                all = false;
            }
        }
        held_end = held;
    }
    count[0] = held_end as u16 as i16;
    count[1] = (held_end >> 16) as u16 as i16;
    valid[0] = u8::from(all);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{vec, vec::Vec};

    fn run(p: &Params, state: &mut [i16], x: &[i16]) -> (Vec<i16>, bool) {
        let mut out = vec![0; p.rows * p.n_frames * p.frame_size];
        let mut valid = [9u8];
        signal_framer(p, x, state, &mut out, &mut valid);
        (out, valid[0] == 1)
    }

    #[test]
    fn frames_lag_by_the_rounding_without_prefill() {
        // frame_size 5, frame_step 2: TFLM's buffer holds 6; frames start once 6 are in.
        let p = prepare(5, 2, false, 4, 1).unwrap();
        assert_eq!(p.history, 4);
        let mut s = vec![0; state_len(&p)];
        assert_eq!(run(&p, &mut s, &[1, 2, 3, 4]), (vec![0; 10], false));
        let (out, ok) = run(&p, &mut s, &[5, 6, 7, 8]);
        assert!(ok);
        assert_eq!(out, [1, 2, 3, 4, 5, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn prefill_gives_frames_at_once() {
        // frame_size 3, frame_step 1, prefill: two zeros of history from reset.
        let p = prepare(3, 1, true, 1, 1).unwrap();
        let mut s = vec![0; state_len(&p)];
        assert_eq!(run(&p, &mut s, &[5]), (vec![0, 0, 5], true));
        assert_eq!(run(&p, &mut s, &[7]), (vec![0, 5, 7], true));
        assert_eq!(run(&p, &mut s, &[9]), (vec![5, 7, 9], true));
    }

    /// TFLM's `framer_test.cc` loop: feeds `golden[latency + i..]` in steps of the input
    /// size (to every row) and expects frame `f` of every row to be `golden[i + f * step..]`
    /// once ready (from the first invoke with prefill, else from `i >= latency`); twice,
    /// zeroing the state in between (TFLM's `TestReset`).
    fn tflm_vector(size: i64, step: i64, prefill: bool, input: usize, rows: usize, golden: &[i16]) {
        let p = prepare(size, step, prefill, input, rows).unwrap();
        let latency = (size - step) as usize;
        let mut s = vec![0; state_len(&p)];
        for _ in 0..2 {
            s.fill(0);
            let mut i = 0;
            while i < golden.len() - latency {
                let x: Vec<i16> = (0..rows)
                    .flat_map(|_| golden[latency + i..latency + i + input].iter().copied())
                    .collect();
                let (out, ok) = run(&p, &mut s, &x);
                assert_eq!(ok, i >= latency || prefill, "ready at {i}");
                if ok {
                    for (k, frame) in out.chunks_exact(p.frame_size).enumerate() {
                        let at = i + (k % p.n_frames) * p.frame_step;
                        assert_eq!(frame, &golden[at..at + p.frame_size], "frame {k} at {i}");
                    }
                }
                i += input;
            }
        }
    }

    #[test]
    fn tflm_framer_test_vectors() {
        let golden = [0x0, 0x0, 0x1234, 0x5678, 0x4321, 0x7777];
        tflm_vector(3, 1, false, 1, 1, &golden);
        let golden = [0x0, 0x0, 0x0, 0x1010, 0x0202, 0x7070, 0x0606];
        tflm_vector(5, 2, true, 2, 1, &golden);
        tflm_vector(5, 2, true, 4, 1, &golden);
        tflm_vector(5, 2, true, 4, 4, &golden);
    }

    #[test]
    fn refuses_where_tflm_is_undefined() {
        assert_eq!(prepare(4, 0, false, 4, 1), None);
        assert_eq!(prepare(0, 2, false, 4, 1), None);
        assert_eq!(prepare(2, 4, true, 4, 1), None);
        assert_eq!(prepare(4, 3, false, 4, 1), None);
        assert_eq!(prepare(4, 8, false, 4, 1), None);
        assert_eq!(prepare(i32::MAX as i64, 2, false, 4, 1), None);
        // A step longer than the frame is defined without prefill: frames are its start.
        let p = prepare(2, 4, false, 4, 1).unwrap();
        let mut s = vec![0; state_len(&p)];
        assert_eq!(run(&p, &mut s, &[1, 2, 3, 4]), (vec![1, 2], true));
    }
}
