//! SignalWindow (TFLM's Signal library, `signal/src/window.cc`): each run of `window.len()`
//! samples multiplied by the window, `clamp((x * w) >> shift)` to int16 (arithmetic shift
//! of the 32-bit product, as the C++ does on its targets). With the DSP extension (and
//! Helium) two samples per word: one load of samples and one of window, the low and high
//! halves' products (`SMULBB`, `SMULTT`).

#[cfg(not(any(
    kiln_arch = "dsp",
    kiln_arch = "mve",
    all(test, kiln_arch = "portable")
)))]
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
    let shift = p.shift;
    let scale = |product: i32| (product >> shift).clamp(i16::MIN as i32, i16::MAX as i32);
    for (x, o) in input
        .chunks_exact(window.len())
        .zip(output.chunks_exact_mut(window.len()))
    {
        #[cfg(any(
            kiln_arch = "dsp",
            kiln_arch = "mve",
            all(test, kiln_arch = "portable")
        ))]
        {
            // Two samples per word (one load each of samples and window), the products of
            // the low and of the high halves (`SMULBB`, `SMULTT`), two words per step.
            let word = |c: &[i16; 2]| (c[0] as u16 as u32) | ((c[1] as u16 as u32) << 16);
            let pair = |x: &[i16; 2], w: &[i16; 2], o: &mut [i16; 2]| {
                let (x, w) = (word(x), word(w));
                let lo = scale((x as i16 as i32) * (w as i16 as i32));
                let hi = scale((x as i32 >> 16) * (w as i32 >> 16));
                *o = [lo as i16, hi as i16];
            };
            let (xs, x_rest) = x.as_chunks::<4>();
            let (ws, w_rest) = window.as_chunks::<4>();
            let (os, o_rest) = o.as_chunks_mut::<4>();
            for ((x, w), o) in xs.iter().zip(ws).zip(os) {
                let ([x0, x1], [w0, w1], [o0, o1]) = (
                    x.as_chunks::<2>().0,
                    w.as_chunks::<2>().0,
                    o.as_chunks_mut::<2>().0,
                ) else {
                    continue;
                };
                pair(x0, w0, o0);
                pair(x1, w1, o1);
            }
            for ((&x, &w), o) in x_rest.iter().zip(w_rest).zip(o_rest) {
                *o = scale(x as i32 * w as i32) as i16;
            }
        }
        #[cfg(not(any(
            kiln_arch = "dsp",
            kiln_arch = "mve",
            all(test, kiln_arch = "portable")
        )))]
        zip_map_by4(x, window, o, |x, w| scale(x as i32 * w as i32) as i16);
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
        // Frames of 10 (two steps of four, a pair's remainder) and every shift: each
        // output the scalar formula.
        let x: [i16; 20] = core::array::from_fn(|i| (i as i16).wrapping_mul(7919).wrapping_mul(13));
        let w: [i16; 10] =
            core::array::from_fn(|i| (i as i16).wrapping_mul(4099).wrapping_sub(20000));
        for shift in [0, 5, 15, 31] {
            let mut out = [0i16; 20];
            signal_window(&prepare(shift).unwrap(), &x, &w, &mut out);
            for (i, &o) in out.iter().enumerate() {
                let want = (x[i] as i32 * w[i % 10] as i32) >> shift;
                assert_eq!(
                    o as i32,
                    want.clamp(-32768, 32767),
                    "shift {shift}, sample {i}"
                );
            }
        }
        assert_eq!(prepare(-1), None);
    }
}
