//! SignalEnergy (TFLM's Signal library, `signal/src/energy.cc`): the energy of each bin of
//! an int16 complex spectrum (interleaved real and imaginary parts), `re² + im²` as uint32,
//! for the bins `start..end`; the other outputs are zero (TFLM leaves them untouched: its
//! arena holds zeros there in the golden runs, and Kiln defines them). With the DSP
//! extension (and Helium) a bin is one word and its energy one `SMUAD`. A bin and its
//! energy are both 4 bytes, so [`signal_energy_in_place`] writes the energies over the bins.

/// Constant parameters of a SignalEnergy node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// First bin written.
    pub start: usize,
    /// One past the last bin written (`start <= end`, `end` at most the output's length and
    /// half the input's).
    pub end: usize,
}

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the `start_index` and `end_index` options for an input of
/// `input_len` int16 values and an output of `output_len` bins; `None` if a written bin
/// lies outside either (TFLM would read or write out of bounds). `start >= end` writes no
/// bin, as in TFLM.
pub fn prepare(start: i64, end: i64, input_len: usize, output_len: usize) -> Option<Params> {
    let start = usize::try_from(start).ok()?;
    let end = usize::try_from(end).ok()?;
    if start >= end {
        return Some(Params { start: 0, end: 0 });
    }
    (end <= output_len && end <= input_len / 2).then_some(Params { start, end })
}

/// `output[i] = re[i]² + im[i]²` for `i` in `start..end` (the C++ sums two int32 squares:
/// `2 · 32768²` wraps to `2^31`, which is the right uint32), zero elsewhere.
pub fn signal_energy(p: &Params, input: &[i16], output: &mut [u32]) {
    output.fill(0);
    let (Some(bins), Some(out)) = (
        input.get(2 * p.start..2 * p.end),
        output.get_mut(p.start..p.end),
    ) else {
        return;
    };
    #[cfg(any(
        kiln_arch = "dsp",
        kiln_arch = "mve",
        all(test, kiln_arch = "portable")
    ))]
    {
        // A bin's two int16 values as one word (one load), its energy one `SMUAD`; four
        // bins per step, written out (opt-level s keeps them unrolled).
        let energy =
            |c: &[i16; 2]| word_energy((c[0] as u16 as u32) | ((c[1] as u16 as u32) << 16));
        let (quads, rest) = bins.as_chunks::<8>();
        let mut outs = out.chunks_exact_mut(4);
        for (o, q) in (&mut outs).zip(quads) {
            if let (Ok(o), (pairs, [])) = (<&mut [u32; 4]>::try_from(o), q.as_chunks::<2>())
                && let [a, b, c, d] = pairs
            {
                *o = [energy(a), energy(b), energy(c), energy(d)];
            }
        }
        for (o, c) in outs
            .into_remainder()
            .iter_mut()
            .zip(rest.as_chunks::<2>().0)
        {
            *o = energy(c);
        }
    }
    #[cfg(not(any(
        kiln_arch = "dsp",
        kiln_arch = "mve",
        all(test, kiln_arch = "portable")
    )))]
    {
        let energy = |re: i16, im: i16| {
            let (re, im) = (re as i32, im as i32);
            ((re * re) as u32).wrapping_add((im * im) as u32)
        };
        // Four bins per step (written out, which opt-level s keeps unrolled), then the rest.
        let mut outs = out.chunks_exact_mut(4);
        let mut ins = bins.chunks_exact(8);
        for (o, c) in (&mut outs).zip(&mut ins) {
            if let (Ok(o), Ok(&[r0, i0, r1, i1, r2, i2, r3, i3])) =
                (<&mut [u32; 4]>::try_from(o), <&[i16; 8]>::try_from(c))
            {
                *o = [
                    energy(r0, i0),
                    energy(r1, i1),
                    energy(r2, i2),
                    energy(r3, i3),
                ];
            }
        }
        for (o, c) in outs
            .into_remainder()
            .iter_mut()
            .zip(ins.remainder().chunks_exact(2))
        {
            *o = energy(c[0], c[1]);
        }
    }
}

/// The energy of a bin held as one word, its two int16 values in its halves: the sum of
/// their squares (which half is which does not matter, so neither does the byte order), one
/// `SMUAD` with the DSP extension and Helium.
#[inline(always)]
fn word_energy(w: u32) -> u32 {
    #[cfg(any(
        kiln_arch = "dsp",
        kiln_arch = "mve",
        all(test, kiln_arch = "portable")
    ))]
    {
        crate::arch::smuad(w, w)
    }
    #[cfg(not(any(
        kiln_arch = "dsp",
        kiln_arch = "mve",
        all(test, kiln_arch = "portable")
    )))]
    {
        let (a, b) = (w as u16 as i16 as i32, (w >> 16) as u16 as i16 as i32);
        ((a * a) as u32).wrapping_add((b * b) as u32)
    }
}

/// [`signal_energy`] in place: `data` holds the input's bins, one native-endian word per
/// bin (its real then its imaginary int16, as the arena stores them), as many as the output
/// has; each becomes its output word front to back (the bins outside `start..end` zero), the
/// same values as [`signal_energy`]'s.
pub fn signal_energy_in_place(p: &Params, data: &mut [u32]) {
    let n = data.len();
    let start = p.start.min(n);
    let end = p.end.min(n).max(start);
    data[..start].fill(0);
    // Four bins per step, written out (as the out-of-place kernel), then the rest.
    let (quads, rest) = data[start..end].as_chunks_mut::<4>();
    for q in quads {
        *q = [
            word_energy(q[0]),
            word_energy(q[1]),
            word_energy(q[2]),
            word_energy(q[3]),
        ];
    }
    for w in rest {
        *w = word_energy(*w);
    }
    data[end..].fill(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In place over the input's words: the out-of-place kernel's output, for every range.
    #[test]
    fn in_place_matches_out_of_place() {
        let mut seed = 0x1234_5678u32;
        let input: [i16; 16] = core::array::from_fn(|_| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 16) as i16
        });
        for start in 0..=8 {
            for end in 0..=8 {
                let p = prepare(start, end, 16, 8).unwrap();
                let mut expected = [7u32; 8];
                signal_energy(&p, &input, &mut expected);
                let mut data: [u32; 8] = core::array::from_fn(|i| {
                    let b = [input[2 * i].to_ne_bytes(), input[2 * i + 1].to_ne_bytes()];
                    u32::from_ne_bytes([b[0][0], b[0][1], b[1][0], b[1][1]])
                });
                signal_energy_in_place(&p, &mut data);
                assert_eq!(data, expected, "{start}..{end}");
            }
        }
    }

    #[test]
    fn energy_of_the_bins_in_range_and_zero_elsewhere() {
        let p = prepare(1, 3, 8, 4).unwrap();
        let mut out = [7u32; 4];
        signal_energy(&p, &[5, 5, 3, -4, -32768, -32768, 1, 1], &mut out);
        assert_eq!(out, [0, 25, 1 << 31, 0]);
        assert_eq!(prepare(0, 5, 8, 8), None);
        assert_eq!(prepare(0, 4, 8, 3), None);
        assert_eq!(prepare(-1, 2, 8, 4), None);
        assert_eq!(prepare(3, 1, 8, 4), Some(Params { start: 0, end: 0 }));
    }

    /// TFLM's `energy_test.cc` vectors (middle, start, end bins of 8).
    #[test]
    fn tflm_vectors() {
        let input: [i16; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
        for (start, end, golden) in [
            (2, 4, [0, 0, 61, 113, 0, 0, 0, 0]),
            (0, 4, [5, 25, 61, 113, 0, 0, 0, 0]),
            (4, 8, [0, 0, 0, 0, 181, 265, 365, 481]),
        ] {
            let p = prepare(start, end, 16, 8).unwrap();
            let mut out = [0u32; 8];
            signal_energy(&p, &input, &mut out);
            assert_eq!(out, golden);
        }
    }
}
