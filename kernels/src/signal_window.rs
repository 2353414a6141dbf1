//! SignalWindow (TFLM's Signal library, `signal/src/window.cc`): each run of `window.len()`
//! samples multiplied by the window, `clamp((x * w) >> shift)` to int16 (arithmetic shift
//! of the 32-bit product, as the C++ does on its targets).

use crate::util::zip_map_by4;

/// Constant parameters of a SignalWindow node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Right shift of each product, 0..=31.
    pub shift: u32,
}

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the operator's `shift` option, `None` outside `0..=31`
/// (a shift of a 32-bit product by 32 or more is undefined in the C++).
pub fn prepare(shift: i64) -> Option<Params> {
    u32::try_from(shift)
        .ok()
        .filter(|&s| s < 32)
        .map(|shift| Params { shift })
}

/// `output[i] = clamp((input[i] * window[i % n]) >> shift)`; `input.len()` is a multiple of
/// `window.len()` (lowering checks it).
pub fn signal_window(p: &Params, input: &[i16], window: &[i16], output: &mut [i16]) {
    debug_assert_eq!(input.len(), output.len());
    if window.is_empty() {
        return;
    }
    for (x, o) in input
        .chunks_exact(window.len())
        .zip(output.chunks_exact_mut(window.len()))
    {
        zip_map_by4(x, window, o, |x, w| {
            let raw = (x as i32 * w as i32) >> p.shift;
            raw.clamp(i16::MIN as i32, i16::MAX as i32) as i16
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_every_frame_and_saturates() {
        let p = prepare(2).unwrap();
        let mut out = [0i16; 6];
        signal_window(&p, &[4, -4, 32767, 8, -1, -32768], &[1, 2, 4], &mut out);
        // (4*1)>>2, (-4*2)>>2, (32767*4)>>2; then 8>>2, (-2)>>2 = -1, (-131072)>>2.
        assert_eq!(out, [1, -2, 32767, 2, -1, -32768]);
        let p = prepare(0).unwrap();
        signal_window(&p, &[300, -300, 1, 1, 1, 1], &[300, 300, 1], &mut out);
        assert_eq!(out[..2], [32767, -32768]);
        assert_eq!(prepare(32), None);
        assert_eq!(prepare(-1), None);
    }
}
