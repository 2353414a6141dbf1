//! SignalStacker (TFLM's Signal library, `signal/micro/kernels/stacker.cc` on
//! `signal/src/circular_buffer.cc`): stacks consecutive frames of `num_channels` int16
//! values with `left_context` frames before and `right_context` after, one stacked output of
//! `num_channels * (left + right + 1)` values every `step` frames; the bool output says
//! whether this invocation produced one.
//!
//! TFLM writes each input frame into a circular buffer of the stacked size; the first frame
//! after a reset is written `1 + left_context` times (the left padding); when the buffer is
//! full it copies it out and discards the oldest `step` frames. So it holds at most
//! `left + right` frames between invocations, kept here as a linear history (oldest first)
//! followed by a count in the last two values (a `u32`, low half first: 0 after reset, else
//! 1 + the frames held), so that a zeroed state is TFLM's reset state.
//!
//! When no stacked frame is produced (before the first, and between stacks when `step > 1`)
//! TFLM leaves the output unwritten (its bytes are whatever its arena held, garbage or the
//! previous stack); Kiln writes zeros there, so the output is defined.

/// Constant parameters of a SignalStacker node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Values per frame (>= 1).
    pub num_channels: usize,
    /// Frames before the current one (>= 0).
    pub left_context: usize,
    /// Frames after the current one (>= 0).
    pub right_context: usize,
    /// Frames discarded after each stacked output, 1..=left + right + 1.
    pub step: usize,
}

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters, `None` where TFLM is undefined: `num_channels < 1`, a negative
/// context, `step` outside `1..=left + right + 1` (a step of 0 overfills the buffer, a larger
/// one discards frames it does not hold), or sizes past TFLM's `int32_t` arithmetic.
pub fn prepare(num_channels: i64, left: i64, right: i64, step: i64) -> Option<Params> {
    let num_channels = usize::try_from(num_channels).ok().filter(|&n| n >= 1)?;
    let left_context = usize::try_from(left).ok()?;
    let right_context = usize::try_from(right).ok()?;
    let step = usize::try_from(step).ok().filter(|&s| s >= 1)?;
    let frames = left_context.checked_add(right_context)?.checked_add(1)?;
    if step > frames {
        return None;
    }
    // TFLM: num_channels * (left + right + 1) and num_channels * step in int32.
    let stacked = num_channels.checked_mul(frames)?;
    if stacked > i32::MAX as usize {
        return None;
    }
    Some(Params {
        num_channels,
        left_context,
        right_context,
        step,
    })
}

/// Values of one stacked output: `num_channels * (left + right + 1)`.
pub const fn output_len(p: &Params) -> usize {
    p.num_channels * (p.left_context + p.right_context + 1)
}

/// Length of the int16 state: `left + right` frames and the two halves of the count.
pub const fn state_len(p: &Params) -> usize {
    p.num_channels * (p.left_context + p.right_context) + 2
}

/// One invocation: `input` holds `num_channels` values, `output` [`output_len`], `state`
/// [`state_len`] (zero after reset), `valid` one bool (0 or 1).
pub fn signal_stacker(
    p: &Params,
    input: &[i16],
    state: &mut [i16],
    output: &mut [i16],
    valid: &mut [u8],
) {
    let nc = p.num_channels;
    let frames = p.left_context + p.right_context + 1;
    debug_assert_eq!(input.len(), nc);
    debug_assert_eq!(output.len(), output_len(p));
    debug_assert_eq!(state.len(), state_len(p));
    let (hist, count) = state.split_at_mut(state.len() - 2);
    let stored = count[0] as u16 as usize | (count[1] as u16 as usize) << 16;
    // Frames held (at most left + right), and how often this frame is written.
    let (held, copies) = match stored {
        0 => (0, 1 + p.left_context),
        n => ((n - 1).min(frames - 1), 1),
    };
    let now = held + copies;
    let held_after = if now >= frames {
        output[..held * nc].copy_from_slice(&hist[..held * nc]);
        for frame in output[held * nc..].chunks_exact_mut(nc) {
            frame.copy_from_slice(input);
        }
        let keep = frames - p.step;
        hist[..keep * nc].copy_from_slice(&output[p.step * nc..]);
        valid[0] = 1;
        keep
    } else {
        for frame in hist[held * nc..now * nc].chunks_exact_mut(nc) {
            frame.copy_from_slice(input);
        }
        output.fill(0);
        valid[0] = 0;
        now
    };
    let v = held_after + 1;
    count[0] = v as u16 as i16;
    count[1] = (v >> 16) as u16 as i16;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{vec, vec::Vec};

    #[test]
    fn pads_the_first_frame_and_steps() {
        let p = prepare(2, 1, 1, 1).unwrap();
        let mut s = vec![0; state_len(&p)];
        let mut out = [7; 6];
        let mut v = [9];
        signal_stacker(&p, &[10, 11], &mut s, &mut out, &mut v);
        assert_eq!((out, v), ([0; 6], [0]));
        signal_stacker(&p, &[20, 21], &mut s, &mut out, &mut v);
        assert_eq!((out, v), ([10, 11, 10, 11, 20, 21], [1]));
        signal_stacker(&p, &[30, 31], &mut s, &mut out, &mut v);
        assert_eq!((out, v), ([10, 11, 20, 21, 30, 31], [1]));
        // A step of the whole stack starts over each time.
        let p = prepare(1, 0, 1, 2).unwrap();
        let mut s = vec![0; state_len(&p)];
        let mut out = [0; 2];
        for (x, want, ok) in [
            (1, [0, 0], 0),
            (2, [1, 2], 1),
            (3, [0, 0], 0),
            (4, [3, 4], 1),
        ] {
            signal_stacker(&p, &[x], &mut s, &mut out, &mut v);
            assert_eq!((out, v), (want, [ok]));
        }
    }

    /// TFLM's `stacker_test.cc` vectors (left context 1, right 0: the first frame padded is
    /// a full stack), each run twice with the state zeroed in between (its reset tests).
    #[test]
    fn tflm_stacker_test_vectors() {
        let three: [i16; 3] = [0x1234, 0x5678, 0x4321];
        let ten1: [i16; 10] = [252, 477, 1071, 166, 1022, 312, 1171, 1586, 1491, 145];
        let ten2: [i16; 10] = [1060, 200, 69, 1519, 883, 1317, 182, 724, 143, 334];
        for (x, step) in [(&three[..], 1), (&ten1[..], 2), (&ten2[..], 2)] {
            let p = prepare(x.len() as i64, 1, 0, step).unwrap();
            let mut s = vec![0; state_len(&p)];
            let golden: Vec<i16> = x.iter().chain(x).copied().collect();
            for _ in 0..2 {
                s.fill(0);
                let mut out = vec![0; output_len(&p)];
                let mut v = [0];
                signal_stacker(&p, x, &mut s, &mut out, &mut v);
                assert_eq!((out, v), (golden.clone(), [1]));
            }
        }
    }

    #[test]
    fn refuses_where_tflm_is_undefined() {
        assert_eq!(prepare(0, 1, 1, 1), None);
        assert_eq!(prepare(2, -1, 1, 1), None);
        assert_eq!(prepare(2, 1, 1, 0), None);
        assert_eq!(prepare(2, 1, 1, 4), None);
        assert!(prepare(2, 1, 1, 3).is_some());
    }
}
