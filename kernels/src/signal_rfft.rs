//! SignalRfft (TFLM's Signal library, `signal/src/rfft_{int16,int32,float}.cc`): the real
//! FFT of every frame (the innermost dimension, zero-padded to `fft_length`), through KISS
//! FFT v130's fixed-point `kiss_fftr` exactly as TFLM builds it (`FIXED_POINT` 16 or 32):
//! a complex FFT of `fft_length / 2` points, radix 4, 2, 3 and 5 butterflies in
//! `kf_factor`'s order, each stage dividing its inputs by the radix (`C_FIXDIV`:
//! multiplication by `SAMP_MAX / p` with rounding), then the real-FFT split with its
//! `super_twiddles` and halving (`HALF_OF`, an arithmetic shift of the widened sum).
//! Products round as `sround`: `(x + 2^(FRACBITS-1)) >> FRACBITS` in the C's wider type;
//! everything stored back into a sample wraps as the C's stores do. The float32 form is the
//! same algorithm in `f32` without the per-stage division.
//!
//! The twiddle tables are computed at build time (`cos`/`sin` in double precision, as
//! `kiss_fft_alloc` and `kiss_fftr_alloc` do; the kernel crate has no `libm`), and passed
//! interleaved (`re, im, re, im, ...`) with the factors (`p, m` pairs of `kf_factor`); the
//! complex FFT's twiddles in the order its butterflies read them ([`stage_twiddles`]).
//!
//! The complex FFT runs KISS FFT's recursion as loops: the input copies of the innermost
//! sub-FFTs first, then the butterflies stage by stage from the innermost outwards (each
//! butterfly sees the same inputs as in the recursion; see `Fft::run`). With the DSP
//! extension's packed int16 form, an innermost radix-4 butterfly reads its four inputs where
//! they are instead of from their copy.

/// Constant parameters of a SignalRfft node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// The FFT's length (even, >= 2).
    pub fft_length: usize,
    /// Samples per input frame (<= `fft_length`; the rest is zero).
    pub input_length: usize,
    /// Number of frames.
    pub frames: usize,
}

/// Scratch elements (of the sample type): the zero-padded frame. (The complex FFT writes
/// into the output frame, where the real-FFT split then runs in place.)
pub const fn scratch_elements(p: &Params) -> usize {
    p.fft_length
}

/// Scratch elements the forward transform also runs with, a little more slowly: none for
/// frames of an even length ([`signal_rfft_unpadded`]: the complex FFT reads them where
/// they are, as complex values, zero past their end: no copy, but a bounds test per
/// innermost block); for an odd length, [`scratch_elements`].
pub const fn lean_scratch_elements(p: &Params) -> usize {
    if p.input_length.is_multiple_of(2) {
        0
    } else {
        p.fft_length
    }
}

/// Scratch elements of the inverse transform ([`signal_irfft`]): the complex FFT's input.
pub const fn inverse_scratch_elements(p: &Params) -> usize {
    p.fft_length
}

/// Scratch bytes for samples of `bytes` bytes.
pub const fn scratch_bytes(p: &Params, bytes: usize) -> usize {
    scratch_elements(p) * bytes
}

/// `kf_factor`: the `(p, m)` stages of a complex FFT of `n` points (radix 4 first, then 2,
/// then odd numbers up to `floor(sqrt(n))`, then `n` itself); `None` if `n` is 0.
pub fn factors(n: usize, out: &mut [u32; 64]) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let mut floor_sqrt = 0usize;
    while (floor_sqrt + 1) * (floor_sqrt + 1) <= n {
        floor_sqrt += 1;
    }
    let (mut n, mut p, mut len) = (n, 4usize, 0usize);
    loop {
        while n % p != 0 {
            p = match p {
                4 => 2,
                2 => 3,
                _ => p + 2,
            };
            if p > floor_sqrt {
                p = n;
            }
        }
        n /= p;
        if len + 2 > out.len() {
            return None;
        }
        out[len] = p as u32;
        out[len + 1] = n as u32;
        len += 2;
        if n <= 1 {
            return Some(len);
        }
    }
}

/// Build-time parameters, `None` where TFLM's kernel is undefined or crashes: an odd
/// `fft_length` (`kiss_fftr_alloc` fails), frames longer than it (the copy overruns the
/// work area), or `fft_length / 2` with a prime factor other than 2, 3 and 5, or 1 (the
/// pinned wheel crashes in kiss_fft's generic butterfly, whose scratch TFLM's build does not
/// allocate).
pub fn prepare(fft_length: i64, input_length: usize, frames: usize) -> Option<Params> {
    let n = usize::try_from(fft_length).ok()?;
    if n < 4 || n % 2 != 0 || n > 1 << 20 || input_length > n || input_length == 0 {
        return None;
    }
    let mut f = [0u32; 64];
    let len = factors(n / 2, &mut f)?;
    if f[..len].iter().step_by(2).any(|&p| !(2..=5).contains(&p)) {
        return None;
    }
    Some(Params {
        fft_length: n,
        input_length,
        frames,
    })
}

/// A complex value.
#[derive(Clone, Copy, Debug, Default)]
struct C<T> {
    r: T,
    i: T,
}

/// The fixed-point arithmetic of `_kiss_fft_guts.h` for one sample type.
pub trait Sample: Copy + Default {
    /// How the twiddle tables store a value (the sample itself; `f32` as its bits, since
    /// generated tables are integers).
    type Table: Copy;
    /// Whether radix 4 runs `LANES` butterflies side by side (faster on the host for
    /// `f32`; the integer forms' widening products are faster one by one).
    const SIDE_BY_SIDE: bool = false;
    /// A table entry as a sample.
    fn from_table(t: Self::Table) -> Self;
    /// `sround(smul(a, b))`.
    fn s_mul(a: Self, b: Self) -> Self;
    /// `sround(smul(a.r, b.r) - smul(a.i, b.i))`: the C computes the difference in the wide
    /// type before rounding.
    fn mul_diff(ar: Self, br: Self, ai: Self, bi: Self) -> Self;
    /// `sround(smul(a.r, b.i) + smul(a.i, b.r))`.
    fn mul_sum(ar: Self, bi: Self, ai: Self, br: Self) -> Self;
    /// `DIVSCALAR(x, k)`: `sround(smul(x, SAMP_MAX / k))`.
    fn div(x: Self, k: usize) -> Self;
    /// Wrapping addition, subtraction and negation (the C's stores into samples).
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    /// `HALF_OF(x)`: `x >> 1`.
    fn half(a: Self) -> Self;
    /// `HALF_OF(a + b)` with the sum in C's `int` (int16: no wrap before the shift).
    fn half_sum(a: Self, b: Self) -> Self;
    /// `HALF_OF(a - b)`, likewise.
    fn half_diff(a: Self, b: Self) -> Self;
    /// Runs the radix-4 butterflies of one stage (`a`, `b`, `c`, `d`: the four quarters of
    /// the output, `tw`: each butterfly's three twiddles) on a target's packed form, with
    /// the same results as `bfly4_one`; `false` where there is none (the caller runs them).
    fn bfly4_packed<const INVERSE: bool>(
        _a: &mut [Stored<Self>],
        _b: &mut [Stored<Self>],
        _c: &mut [Stored<Self>],
        _d: &mut [Stored<Self>],
        _tw: &[[Stored<Self::Table>; 3]],
    ) -> bool {
        false
    }
    /// Runs one radix-4 butterfly of the innermost stage (`m = 1`) on a target's packed
    /// form, reading its four inputs straight from `from` at `stride` (the values
    /// `Fft::gather` would copy into `out` first) and writing `out`; `false` where there
    /// is none or the values are out of range (the caller copies and runs it).
    fn bfly4_leaf_packed<const INVERSE: bool>(
        _out: &mut [Stored<Self>],
        _from: &[Stored<Self>],
        _stride: usize,
        _tw: &[Stored<Self::Table>],
    ) -> bool {
        false
    }
    /// Runs the split steps of `kiss_fftr` (`INVERSE = false`) or `kiss_fftri` on
    /// `values` (see `split_pairs`) on a target's packed form, with the same results as
    /// the steps `split_forward` and `split_inverse`; `false` where there is none.
    fn split_packed<const INVERSE: bool>(
        _values: &mut [Stored<Self>],
        _ncfft: usize,
        _super_twiddles: &[Stored<Self::Table>],
    ) -> bool {
        false
    }
}

/// Int16 butterflies on words of two int16 halves (a complex value: real low, imaginary
/// high) with the DSP extension's dual 16-bit instructions (`crate::arch`): one load per
/// value, a complex product in four instructions. Each half is computed exactly as
/// [`bfly4_one`] computes it. Also built for the host's tests (portable arch), on the plain-Rust forms.
#[cfg(any(
    kiln_arch = "dsp",
    kiln_arch = "mve",
    all(test, kiln_arch = "portable")
))]
mod packed {
    use super::Stored;
    use crate::arch::{cmul_q15, sadd16, sasx, scale_q15, shadd16, shsub16, ssax, ssub16};

    fn ld(s: &Stored<i16>) -> u32 {
        (s[0] as u16 as u32) | ((s[1] as u16 as u32) << 16)
    }

    fn st(s: &mut Stored<i16>, x: u32) {
        *s = unld(x);
    }

    fn unld(x: u32) -> Stored<i16> {
        [x as u16 as i16, (x >> 16) as u16 as i16]
    }

    /// The complex conjugate: the high half negated, wrapping (`~h + 1` modulo 2^16; the
    /// low half and no carry are unchanged).
    fn conj(x: u32) -> u32 {
        (x ^ 0xffff_0000).wrapping_add(0x1_0000)
    }

    /// [`super::Sample::split_packed`] for int16: each step as [`super::split_forward`]
    /// or [`super::split_inverse`], on packed values.
    pub(super) fn split<const INVERSE: bool>(
        values: &mut [Stored<i16>],
        ncfft: usize,
        super_twiddles: &[Stored<i16>],
    ) {
        // `C_FIXDIV(x, 2)`: times `SAMP_MAX / 2`.
        let q = (i16::MAX / 2) as u32;
        super::split_pairs(values, ncfft, super_twiddles, |k, nk, t| {
            let fk = scale_q15(ld(&k), q);
            let fnk = scale_q15(conj(ld(&nk)), q);
            let (sum, diff) = (sadd16(fk, fnk), ssub16(fk, fnk));
            let tw = cmul_q15(diff, ld(t));
            if INVERSE {
                (unld(sadd16(sum, tw)), unld(conj(ssub16(sum, tw))))
            } else {
                // `HALF_OF(sum + tw)`; `HALF_OF(sum.r - tw.r)` and `HALF_OF(tw.i - sum.i)`.
                let low_high = |lo: u32, hi: u32| (lo & 0xffff) | (hi & 0xffff_0000);
                let second = shsub16(low_high(sum, tw), low_high(tw, sum));
                (unld(shadd16(sum, tw)), unld(second))
            }
        });
    }

    /// One radix-4 butterfly on packed values: inputs `x`, twiddles `t` (as [`super::bfly4_one`]).
    #[inline(always)]
    fn one<const INVERSE: bool>(x: [u32; 4], t: &[Stored<i16>; 3]) -> [u32; 4] {
        // `C_FIXDIV(x, 4)`: times `SAMP_MAX / 4`.
        let q = (i16::MAX / 4) as u32;
        let f0 = scale_q15(x[0], q);
        let f1 = scale_q15(x[1], q);
        let f2 = scale_q15(x[2], q);
        let f3 = scale_q15(x[3], q);
        let s0 = cmul_q15(f1, ld(&t[0]));
        let s1 = cmul_q15(f2, ld(&t[1]));
        let s2 = cmul_q15(f3, ld(&t[2]));
        let s5 = ssub16(f0, s1);
        let f0 = sadd16(f0, s1);
        let s3 = sadd16(s0, s2);
        let s4 = ssub16(s0, s2);
        // s5 - i·s4 and s5 + i·s4.
        let (plus, minus) = (ssax(s5, s4), sasx(s5, s4));
        let (r1, r3) = if INVERSE {
            (minus, plus)
        } else {
            (plus, minus)
        };
        [sadd16(f0, s3), r1, ssub16(f0, s3), r3]
    }

    /// [`super::Sample::bfly4_packed`] for int16.
    pub(super) fn bfly4<const INVERSE: bool>(
        a: &mut [Stored<i16>],
        b: &mut [Stored<i16>],
        c: &mut [Stored<i16>],
        d: &mut [Stored<i16>],
        tw: &[[Stored<i16>; 3]],
    ) {
        let quads = a
            .iter_mut()
            .zip(b.iter_mut())
            .zip(c.iter_mut())
            .zip(d.iter_mut());
        for ((((a, b), c), d), t) in quads.zip(tw) {
            let [ya, yb, yc, yd] = one::<INVERSE>([ld(a), ld(b), ld(c), ld(d)], t);
            st(a, ya);
            st(b, yb);
            st(c, yc);
            st(d, yd);
        }
    }

    /// [`super::Sample::bfly4_leaf_packed`] for int16.
    pub(super) fn leaf4<const INVERSE: bool>(
        out: &mut [Stored<i16>],
        from: &[Stored<i16>],
        stride: usize,
        tw: &[Stored<i16>],
    ) -> bool {
        let (Ok(out), Some(x3), Some(t)) = (
            <&mut [Stored<i16>; 4]>::try_from(out),
            from.get(3 * stride),
            tw.first_chunk::<3>(),
        ) else {
            return false;
        };
        // In range: `3 * stride` is, so are `0`, `stride` and `2 * stride`.
        let x = [
            ld(&from[0]),
            ld(&from[stride]),
            ld(&from[2 * stride]),
            ld(x3),
        ];
        // Written out: a loop over the four keeps them in memory at opt-level s.
        let [ya, yb, yc, yd] = one::<INVERSE>(x, t);
        let [a, b, c, d] = out;
        st(a, ya);
        st(b, yb);
        st(c, yc);
        st(d, yd);
        true
    }
}

impl Sample for i16 {
    type Table = i16;
    fn from_table(t: i16) -> i16 {
        t
    }
    fn s_mul(a: i16, b: i16) -> i16 {
        ((a as i32 * b as i32).wrapping_add(1 << 14) >> 15) as i16
    }
    fn mul_diff(ar: i16, br: i16, ai: i16, bi: i16) -> i16 {
        let x = (ar as i32 * br as i32).wrapping_sub(ai as i32 * bi as i32);
        (x.wrapping_add(1 << 14) >> 15) as i16
    }
    fn mul_sum(ar: i16, bi: i16, ai: i16, br: i16) -> i16 {
        let x = (ar as i32 * bi as i32).wrapping_add(ai as i32 * br as i32);
        (x.wrapping_add(1 << 14) >> 15) as i16
    }
    fn div(x: i16, k: usize) -> i16 {
        let q = (i16::MAX as i32) / k as i32;
        ((x as i32 * q).wrapping_add(1 << 14) >> 15) as i16
    }
    fn add(a: i16, b: i16) -> i16 {
        a.wrapping_add(b)
    }
    fn sub(a: i16, b: i16) -> i16 {
        a.wrapping_sub(b)
    }
    fn neg(a: i16) -> i16 {
        a.wrapping_neg()
    }
    fn half(a: i16) -> i16 {
        a >> 1
    }
    fn half_sum(a: i16, b: i16) -> i16 {
        ((a as i32 + b as i32) >> 1) as i16
    }
    fn half_diff(a: i16, b: i16) -> i16 {
        ((a as i32 - b as i32) >> 1) as i16
    }
    #[cfg(any(
        kiln_arch = "dsp",
        kiln_arch = "mve",
        all(test, kiln_arch = "portable")
    ))]
    fn bfly4_packed<const INVERSE: bool>(
        a: &mut [Stored<i16>],
        b: &mut [Stored<i16>],
        c: &mut [Stored<i16>],
        d: &mut [Stored<i16>],
        tw: &[[Stored<i16>; 3]],
    ) -> bool {
        packed::bfly4::<INVERSE>(a, b, c, d, tw);
        true
    }
    #[cfg(any(
        kiln_arch = "dsp",
        kiln_arch = "mve",
        all(test, kiln_arch = "portable")
    ))]
    fn bfly4_leaf_packed<const INVERSE: bool>(
        out: &mut [Stored<i16>],
        from: &[Stored<i16>],
        stride: usize,
        tw: &[Stored<i16>],
    ) -> bool {
        packed::leaf4::<INVERSE>(out, from, stride, tw)
    }
    #[cfg(any(
        kiln_arch = "dsp",
        kiln_arch = "mve",
        all(test, kiln_arch = "portable")
    ))]
    fn split_packed<const INVERSE: bool>(
        values: &mut [Stored<i16>],
        ncfft: usize,
        super_twiddles: &[Stored<i16>],
    ) -> bool {
        packed::split::<INVERSE>(values, ncfft, super_twiddles);
        true
    }
}

impl Sample for i32 {
    type Table = i32;
    fn from_table(t: i32) -> i32 {
        t
    }
    fn s_mul(a: i32, b: i32) -> i32 {
        ((a as i64 * b as i64).wrapping_add(1 << 30) >> 31) as i32
    }
    fn mul_diff(ar: i32, br: i32, ai: i32, bi: i32) -> i32 {
        let x = (ar as i64 * br as i64).wrapping_sub(ai as i64 * bi as i64);
        (x.wrapping_add(1 << 30) >> 31) as i32
    }
    fn mul_sum(ar: i32, bi: i32, ai: i32, br: i32) -> i32 {
        let x = (ar as i64 * bi as i64).wrapping_add(ai as i64 * br as i64);
        (x.wrapping_add(1 << 30) >> 31) as i32
    }
    fn div(x: i32, k: usize) -> i32 {
        let q = (i32::MAX as i64) / k as i64;
        ((x as i64 * q).wrapping_add(1 << 30) >> 31) as i32
    }
    fn add(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
    fn sub(a: i32, b: i32) -> i32 {
        a.wrapping_sub(b)
    }
    fn neg(a: i32) -> i32 {
        a.wrapping_neg()
    }
    fn half(a: i32) -> i32 {
        a >> 1
    }
    fn half_sum(a: i32, b: i32) -> i32 {
        a.wrapping_add(b) >> 1
    }
    fn half_diff(a: i32, b: i32) -> i32 {
        a.wrapping_sub(b) >> 1
    }
}

/// Float32 (`kiss_fft` in floating point): no division per stage (`C_FIXDIV` is a no-op),
/// products and sums in `f32` in the C's order, `HALF_OF(x)` as `x * 0.5`.
impl Sample for f32 {
    type Table = u32;
    const SIDE_BY_SIDE: bool = true;
    fn from_table(t: u32) -> f32 {
        f32::from_bits(t)
    }
    fn s_mul(a: f32, b: f32) -> f32 {
        a * b
    }
    fn mul_diff(ar: f32, br: f32, ai: f32, bi: f32) -> f32 {
        ar * br - ai * bi
    }
    fn mul_sum(ar: f32, bi: f32, ai: f32, br: f32) -> f32 {
        ar * bi + ai * br
    }
    fn div(x: f32, _k: usize) -> f32 {
        x
    }
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    fn sub(a: f32, b: f32) -> f32 {
        a - b
    }
    fn neg(a: f32) -> f32 {
        -a
    }
    fn half(a: f32) -> f32 {
        a * 0.5
    }
    fn half_sum(a: f32, b: f32) -> f32 {
        (a + b) * 0.5
    }
    fn half_diff(a: f32, b: f32) -> f32 {
        (a - b) * 0.5
    }
}

/// A complex value as stored (interleaved): `[re, im]`.
type Stored<T> = [T; 2];

/// A complex table entry.
fn ld_table<T: Sample>(s: &Stored<T::Table>) -> C<T> {
    C {
        r: T::from_table(s[0]),
        i: T::from_table(s[1]),
    }
}

fn ld<T: Sample>(s: &Stored<T>) -> C<T> {
    C { r: s[0], i: s[1] }
}

fn st<T: Sample>(s: &mut Stored<T>, c: C<T>) {
    *s = [c.r, c.i];
}

fn cmul<T: Sample>(a: C<T>, b: C<T>) -> C<T> {
    C {
        r: T::mul_diff(a.r, b.r, a.i, b.i),
        i: T::mul_sum(a.r, b.i, a.i, b.r),
    }
}

fn cdiv<T: Sample>(a: C<T>, k: usize) -> C<T> {
    C {
        r: T::div(a.r, k),
        i: T::div(a.i, k),
    }
}

fn cadd<T: Sample>(a: C<T>, b: C<T>) -> C<T> {
    C {
        r: T::add(a.r, b.r),
        i: T::add(a.i, b.i),
    }
}

fn csub<T: Sample>(a: C<T>, b: C<T>) -> C<T> {
    C {
        r: T::sub(a.r, b.r),
        i: T::sub(a.i, b.i),
    }
}

/// Butterflies computed side by side by [`Fft::bfly4`].
const LANES: usize = 4;

/// [`LANES`] samples, each lane computed exactly as a sample alone: the butterflies of
/// `LANES` consecutive `u` at once, in a form the compiler can run in SIMD registers.
type Lanes<T> = [T; LANES];

impl<T: Sample> Sample for Lanes<T> {
    type Table = [T::Table; LANES];
    fn from_table(t: Self::Table) -> Self {
        t.map(T::from_table)
    }
    fn s_mul(a: Self, b: Self) -> Self {
        core::array::from_fn(|l| T::s_mul(a[l], b[l]))
    }
    fn mul_diff(ar: Self, br: Self, ai: Self, bi: Self) -> Self {
        core::array::from_fn(|l| T::mul_diff(ar[l], br[l], ai[l], bi[l]))
    }
    fn mul_sum(ar: Self, bi: Self, ai: Self, br: Self) -> Self {
        core::array::from_fn(|l| T::mul_sum(ar[l], bi[l], ai[l], br[l]))
    }
    fn div(x: Self, k: usize) -> Self {
        x.map(|v| T::div(v, k))
    }
    fn add(a: Self, b: Self) -> Self {
        core::array::from_fn(|l| T::add(a[l], b[l]))
    }
    fn sub(a: Self, b: Self) -> Self {
        core::array::from_fn(|l| T::sub(a[l], b[l]))
    }
    fn neg(a: Self) -> Self {
        a.map(T::neg)
    }
    fn half(a: Self) -> Self {
        a.map(T::half)
    }
    fn half_sum(a: Self, b: Self) -> Self {
        core::array::from_fn(|l| T::half_sum(a[l], b[l]))
    }
    fn half_diff(a: Self, b: Self) -> Self {
        core::array::from_fn(|l| T::half_diff(a[l], b[l]))
    }
}

/// [`LANES`] consecutive complex values as one complex value of lanes.
fn lanes_ld<T: Sample>(x: &[Stored<T>; LANES]) -> C<Lanes<T>> {
    C {
        r: core::array::from_fn(|l| x[l][0]),
        i: core::array::from_fn(|l| x[l][1]),
    }
}

fn lanes_st<T: Sample>(x: &mut [Stored<T>; LANES], c: C<Lanes<T>>) {
    for (l, x) in x.iter_mut().enumerate() {
        *x = [c.r[l], c.i[l]];
    }
}

/// One radix-4 butterfly (`kf_bfly4`'s loop body): inputs `f`, twiddles `t` of `u`,
/// `2u`, `3u` (times `fstride`); returns the values for `u`, `u + m`, `u + 2m`, `u + 3m`.
fn bfly4_one<S: Sample, const INVERSE: bool>(f: [C<S>; 4], t: [C<S>; 3]) -> [C<S>; 4] {
    let f0 = cdiv(f[0], 4);
    let f1 = cdiv(f[1], 4);
    let f2 = cdiv(f[2], 4);
    let f3 = cdiv(f[3], 4);
    let s0 = cmul(f1, t[0]);
    let s1 = cmul(f2, t[1]);
    let s2 = cmul(f3, t[2]);
    let s5 = csub(f0, s1);
    let f0 = cadd(f0, s1);
    let s3 = cadd(s0, s2);
    let s4 = csub(s0, s2);
    let (plus, minus) = (
        C {
            r: S::add(s5.r, s4.i),
            i: S::sub(s5.i, s4.r),
        },
        C {
            r: S::sub(s5.r, s4.i),
            i: S::add(s5.i, s4.r),
        },
    );
    let (r1, r3) = if INVERSE {
        (minus, plus)
    } else {
        (plus, minus)
    };
    [cadd(f0, s3), r1, csub(f0, s3), r3]
}

/// Complex values a stage of radix `p` keeps before its `(p - 1) * m` twiddles: the
/// constants `bfly3` (`epi3`) and `bfly5` (`ya`, `yb`) read.
const fn stage_constants(p: usize) -> usize {
    match p {
        3 => 1,
        5 => 2,
        _ => 0,
    }
}

/// Complex values of the stage-ordered twiddle table ([`stage_twiddles`]) of `factors`.
pub fn stage_twiddles_len(factors: &[u32]) -> usize {
    factors
        .chunks_exact(2)
        .map(|f| {
            let (p, m) = (f[0] as usize, f[1] as usize);
            stage_constants(p) + (p - 1) * m
        })
        .sum()
}

/// Reorders `kiss_fft_alloc`'s twiddles (`twiddles`, `ncfft` complex values) by stage, as
/// the butterflies read them: for each stage `(p, m)` of `factors` in order (`fstride` the
/// product of the radixes before it), its constants (`twiddles[fstride * m]`, and for radix
/// 5 also `twiddles[2 * fstride * m]`), then for `u` in `0..m` the twiddles
/// `twiddles[j * u * fstride]`, `j` in `1..p`. Every value is one of `twiddles`' (the
/// arithmetic is unchanged, only the walk through the table is sequential). `None` if
/// `out` does not hold [`stage_twiddles_len`] values or `twiddles` is too short.
pub fn stage_twiddles<X: Copy>(
    twiddles: &[[X; 2]],
    factors: &[u32],
    out: &mut [[X; 2]],
) -> Option<()> {
    if out.len() != stage_twiddles_len(factors) {
        return None;
    }
    let (mut fstride, mut k) = (1usize, 0usize);
    for f in factors.chunks_exact(2) {
        let (p, m) = (f[0] as usize, f[1] as usize);
        for c in 1..=stage_constants(p) {
            out[k] = *twiddles.get(c * fstride * m)?;
            k += 1;
        }
        for u in 0..m {
            for j in 1..p {
                out[k] = *twiddles.get(j * u * fstride)?;
                k += 1;
            }
        }
        fstride *= p;
    }
    Some(())
}

/// One stage's butterflies over a block (`Fft::bfly2` and the others): block, `m`, the
/// stage's twiddles.
type Butterflies<T> = fn(&mut [Stored<T>], usize, &[Stored<<T as Sample>::Table>]);

/// `out[k] = from[k * stride]` for as many values as both have: the input copy of an
/// innermost sub-FFT ([`Fft::gather`]).
fn copy_strided<T: Copy>(out: &mut [T], from: &[T], stride: usize) {
    for (o, x) in out.iter_mut().zip(from.iter().step_by(stride)) {
        *o = *x;
    }
}

/// The tables and sizes one complex FFT needs. `PACKED`: whether the packed int16 forms may
/// run ([`Sample::bfly4_packed`] and the others); without them, every butterfly and split
/// step is `_kiss_fft_guts.h`'s scalar arithmetic (the reference kernel,
/// [`signal_rfft_s16_reference`]).
struct Fft<'a, T: Sample, const PACKED: bool> {
    /// The stage-ordered twiddles ([`stage_twiddles`]).
    twiddles: &'a [Stored<T::Table>],
    n: usize,
    /// The inverse transform's state (`kiss_fftr_alloc(.., 1, ..)`): only radix 4 differs
    /// beyond the tables.
    inverse: bool,
}

impl<T: Sample, const PACKED: bool> Fft<'_, T, PACKED> {
    /// `kf_work(out, input, 1, 1, factors)`: the complex FFT of `input` (`n` values) into
    /// `out`. KISS FFT recurses: each stage `(p, m)` first runs its `p` sub-FFTs of `m`
    /// points (the innermost ones copy their inputs), then its butterflies over its `p * m`
    /// values. A butterfly reads and writes only its own block, which its sub-FFTs have
    /// finished, so running the copies first, then every block of the innermost stage, and
    /// so on outwards, computes each butterfly from the same values: the same result, without
    /// the recursion's calls.
    fn run(&self, out: &mut [Stored<T>], input: &[Stored<T>], factors: &[u32]) {
        let n = self.n;
        let out = &mut out[..n];
        let mut end = self.twiddles.len();
        for (s, f) in factors.chunks_exact(2).enumerate().rev() {
            let (p, m) = (f[0] as usize, f[1] as usize);
            let start = end - (stage_constants(p) + (p - 1) * m);
            let tw = &self.twiddles[start..end];
            end = start;
            if s + 1 == factors.len() / 2 {
                // The innermost stage (m = 1): each block right after its copies.
                let copied = |leaf: Butterflies<T>| {
                    move |b: &mut [Stored<T>], from: &[Stored<T>], stride: usize| {
                        copy_strided(b, from, stride);
                        leaf(b, 1, tw);
                    }
                };
                match (p, self.inverse) {
                    (2, _) => self.gather(out, input, factors, copied(Self::bfly2)),
                    (3, _) => self.gather(out, input, factors, copied(Self::bfly3)),
                    (4, false) => self.gather(out, input, factors, |b, from, stride| {
                        if !(PACKED && T::bfly4_leaf_packed::<false>(b, from, stride, tw)) {
                            copy_strided(b, from, stride);
                            Self::bfly4::<false>(b, 1, tw);
                        }
                    }),
                    (4, true) => self.gather(out, input, factors, |b, from, stride| {
                        if !(PACKED && T::bfly4_leaf_packed::<true>(b, from, stride, tw)) {
                            copy_strided(b, from, stride);
                            Self::bfly4::<true>(b, 1, tw);
                        }
                    }),
                    _ => self.gather(out, input, factors, copied(Self::bfly5)),
                }
                continue;
            }
            let blocks = out.chunks_exact_mut(p * m);
            match (p, self.inverse) {
                (2, _) => blocks.for_each(|b| Self::bfly2(b, m, tw)),
                (3, _) => blocks.for_each(|b| Self::bfly3(b, m, tw)),
                (4, false) => blocks.for_each(|b| Self::bfly4::<false>(b, m, tw)),
                (4, true) => blocks.for_each(|b| Self::bfly4::<true>(b, m, tw)),
                _ => blocks.for_each(|b| Self::bfly5(b, m, tw)),
            }
        }
    }

    /// The copies of the innermost sub-FFTs, each block of the innermost stage then passed
    /// to `leaf`: output value `o`, whose mixed-radix digits (most significant first, stage
    /// by stage) are `q_0, q_1, ...`, is input value `q_0 + q_1 * p_0 + q_2 * p_0 * p_1 +
    /// ...` (the sub-FFT `q_s` of stage `s` reads from `q_s * fstride_s` on, at the stride
    /// `fstride_s * p_s`). The last stage's digit runs fastest; the others are counted like
    /// an odometer.
    fn gather(
        &self,
        out: &mut [Stored<T>],
        input: &[Stored<T>],
        factors: &[u32],
        leaf: impl Fn(&mut [Stored<T>], &[Stored<T>], usize),
    ) {
        let stages = factors.len() / 2;
        let (outer, last) = factors.split_at(2 * (stages - 1));
        let p_last = last[0] as usize;
        let last_stride = self.n / p_last;
        // Per outer stage (innermost first): its radix and fstride, and its digit.
        let mut odometer = [(0usize, 0usize, 0usize); 32];
        let mut fstride = last_stride;
        for (f, o) in outer.chunks_exact(2).rev().zip(odometer.iter_mut()) {
            let p = f[0] as usize;
            fstride /= p;
            *o = (p, fstride, 0);
        }
        let odometer = &mut odometer[..stages - 1];
        // The innermost outer stage's digit runs through each group of `p0` blocks (a
        // plain loop); the odometer counts the groups (a single stage: one block, no digit).
        let ((p0, f0), odometer) = match odometer.split_first_mut() {
            Some((&mut (p, fstride, _), rest)) => ((p, fstride), rest),
            None => ((1, 0), &mut [][..]),
        };
        let mut base = 0usize;
        for group in out.chunks_exact_mut(p_last * p0) {
            let mut at = base;
            for block in group.chunks_exact_mut(p_last) {
                leaf(block, input.get(at..).unwrap_or_default(), last_stride);
                at += f0;
            }
            // The next group: increment the digits of the other outer stages, innermost
            // first.
            for (p, fstride, digit) in odometer.iter_mut() {
                *digit += 1;
                base += *fstride;
                if *digit < *p {
                    break;
                }
                *digit = 0;
                base -= *p * *fstride;
            }
        }
    }

    fn bfly2(out: &mut [Stored<T>], m: usize, tw: &[Stored<T::Table>]) {
        let (a, b) = out.split_at_mut(m);
        for ((a, b), tw) in a.iter_mut().zip(b.iter_mut()).zip(tw) {
            let x = cdiv(ld(a), 2);
            let t = cmul(cdiv(ld(b), 2), ld_table(tw));
            st(b, csub(x, t));
            st(a, cadd(x, t));
        }
    }

    /// Radix 4 over `m` butterflies: packed if allowed and the sample type has the form,
    /// else four at a time through [`Lanes`] (each lane the same operations as one
    /// butterfly alone), the rest one by one.
    fn bfly4<const INVERSE: bool>(out: &mut [Stored<T>], m: usize, tw: &[Stored<T::Table>]) {
        let (a, rest) = out.split_at_mut(m);
        let (b, rest) = rest.split_at_mut(m);
        let (c, d) = rest.split_at_mut(m);
        let tws = tw.as_chunks::<3>().0;
        if PACKED && T::bfly4_packed::<INVERSE>(a, b, c, d, tws) {
            return;
        }
        let side = if T::SIDE_BY_SIDE {
            m / LANES * LANES
        } else {
            0
        };
        let (a4, a) = a.split_at_mut(side);
        let (b4, b) = b.split_at_mut(side);
        let (c4, c) = c.split_at_mut(side);
        let (d4, d) = d.split_at_mut(side);
        let (t4, tws) = tws.split_at(side.min(tws.len()));
        let quads = a4
            .as_chunks_mut::<LANES>()
            .0
            .iter_mut()
            .zip(b4.as_chunks_mut::<LANES>().0.iter_mut())
            .zip(c4.as_chunks_mut::<LANES>().0.iter_mut())
            .zip(d4.as_chunks_mut::<LANES>().0.iter_mut());
        for ((((a, b), c), d), t) in quads.zip(t4.as_chunks::<LANES>().0) {
            let tw = |j: usize| {
                ld_table::<Lanes<T>>(&[
                    core::array::from_fn(|l| t[l][j][0]),
                    core::array::from_fn(|l| t[l][j][1]),
                ])
            };
            let y = bfly4_one::<Lanes<T>, INVERSE>(
                [lanes_ld(a), lanes_ld(b), lanes_ld(c), lanes_ld(d)],
                [tw(0), tw(1), tw(2)],
            );
            // Written out: a loop over the four would keep them in memory at opt-level s.
            let [ya, yb, yc, yd] = y;
            lanes_st(a, ya);
            lanes_st(b, yb);
            lanes_st(c, yc);
            lanes_st(d, yd);
        }
        let quads = a
            .iter_mut()
            .zip(b.iter_mut())
            .zip(c.iter_mut())
            .zip(d.iter_mut());
        for ((((a, b), c), d), t) in quads.zip(tws) {
            let y = bfly4_one::<T, INVERSE>(
                [ld(a), ld(b), ld(c), ld(d)],
                [ld_table(&t[0]), ld_table(&t[1]), ld_table(&t[2])],
            );
            let [ya, yb, yc, yd] = y;
            st(a, ya);
            st(b, yb);
            st(c, yc);
            st(d, yd);
        }
    }

    fn bfly3(out: &mut [Stored<T>], m: usize, tw: &[Stored<T::Table>]) {
        let (epi3, tw) = tw.split_at(1);
        let epi3 = ld_table::<T>(&epi3[0]);
        let (a, rest) = out.split_at_mut(m);
        let (b, c) = rest.split_at_mut(m);
        let triples = a.iter_mut().zip(b.iter_mut()).zip(c.iter_mut());
        for (((a, b), c), t) in triples.zip(tw.as_chunks::<2>().0) {
            let f0 = cdiv(ld(a), 3);
            let f1 = cdiv(ld(b), 3);
            let f2 = cdiv(ld(c), 3);
            let s1 = cmul(f1, ld_table(&t[0]));
            let s2 = cmul(f2, ld_table(&t[1]));
            let s3 = cadd(s1, s2);
            let s0 = csub(s1, s2);
            let g1 = C {
                r: T::sub(f0.r, T::half(s3.r)),
                i: T::sub(f0.i, T::half(s3.i)),
            };
            let s0 = C {
                r: T::s_mul(s0.r, epi3.i),
                i: T::s_mul(s0.i, epi3.i),
            };
            st(a, cadd(f0, s3));
            st(
                c,
                C {
                    r: T::add(g1.r, s0.i),
                    i: T::sub(g1.i, s0.r),
                },
            );
            st(
                b,
                C {
                    r: T::sub(g1.r, s0.i),
                    i: T::add(g1.i, s0.r),
                },
            );
        }
    }

    fn bfly5(out: &mut [Stored<T>], m: usize, tw: &[Stored<T::Table>]) {
        let (y, tw) = tw.split_at(2);
        let (ya, yb) = (ld_table::<T>(&y[0]), ld_table::<T>(&y[1]));
        let sm = T::s_mul;
        let (a, rest) = out.split_at_mut(m);
        let (b, rest) = rest.split_at_mut(m);
        let (c, rest) = rest.split_at_mut(m);
        let (d, e) = rest.split_at_mut(m);
        let fives = a
            .iter_mut()
            .zip(b.iter_mut())
            .zip(c.iter_mut())
            .zip(d.iter_mut())
            .zip(e.iter_mut());
        for (((((a, b), c), d), e), t) in fives.zip(tw.as_chunks::<4>().0) {
            let s0 = cdiv(ld(a), 5);
            let s1 = cmul(cdiv(ld(b), 5), ld_table(&t[0]));
            let s2 = cmul(cdiv(ld(c), 5), ld_table(&t[1]));
            let s3 = cmul(cdiv(ld(d), 5), ld_table(&t[2]));
            let s4 = cmul(cdiv(ld(e), 5), ld_table(&t[3]));
            let s7 = cadd(s1, s4);
            let s10 = csub(s1, s4);
            let s8 = cadd(s2, s3);
            let s9 = csub(s2, s3);
            st(
                a,
                C {
                    r: T::add(s0.r, T::add(s7.r, s8.r)),
                    i: T::add(s0.i, T::add(s7.i, s8.i)),
                },
            );
            let s5 = C {
                r: T::add(T::add(s0.r, sm(s7.r, ya.r)), sm(s8.r, yb.r)),
                i: T::add(T::add(s0.i, sm(s7.i, ya.r)), sm(s8.i, yb.r)),
            };
            let s6 = C {
                r: T::add(sm(s10.i, ya.i), sm(s9.i, yb.i)),
                i: T::sub(T::neg(sm(s10.r, ya.i)), sm(s9.r, yb.i)),
            };
            st(b, csub(s5, s6));
            st(e, cadd(s5, s6));
            let s11 = C {
                r: T::add(T::add(s0.r, sm(s7.r, yb.r)), sm(s8.r, ya.r)),
                i: T::add(T::add(s0.i, sm(s7.i, yb.r)), sm(s8.i, ya.r)),
            };
            let s12 = C {
                r: T::add(T::neg(sm(s10.i, yb.i)), sm(s9.i, ya.i)),
                i: T::sub(sm(s10.r, yb.i), sm(s9.r, ya.i)),
            };
            st(c, cadd(s11, s12));
            st(d, csub(s11, s12));
        }
    }
}

/// The pairs `(k, ncfft - k)` for `k` in `1..=ncfft / 2` that the real-FFT split steps
/// visit: `f(a, b, tw)` gets value `k`, value `ncfft - k` and super twiddle `k - 1` and
/// returns their new values (both read before either is written); for `k = ncfft - k`
/// (even `ncfft`), both are the same value, written second as `ncfft - k` as in the C.
fn split_pairs<V: Copy, W>(
    values: &mut [V],
    ncfft: usize,
    super_twiddles: &[W],
    f: impl Fn(V, V, &W) -> (V, V),
) {
    let pairs = (ncfft - 1) / 2;
    let (head, tail) = values[..ncfft].split_at_mut(pairs + 1);
    let (mid, back) = tail.split_at_mut(tail.len() - pairs);
    let fronts = head[1..].iter_mut().zip(back.iter_mut().rev());
    for ((a, b), tw) in fronts.zip(super_twiddles) {
        (*a, *b) = f(*a, *b, tw);
    }
    if let ([m], Some(tw)) = (mid, super_twiddles.get(pairs)) {
        (_, *m) = f(*m, *m, tw);
    }
}

/// One `kiss_fftr` of `time` (`fft_length` samples) into `freq` (`fft_length / 2 + 1`
/// complex values). `kiss_fftr` runs its complex FFT into a buffer of its own (`tmpbuf`) and
/// splits it into `freq`; here the complex FFT writes `freq`'s first `fft_length / 2`
/// values and the split runs in place: step `k` reads values `k` and `ncfft - k`, which no
/// earlier step wrote (they wrote `0`, `ncfft`, and `j`, `ncfft - j` for `j < k`), before
/// writing them, so every value it reads is `tmpbuf`'s.
fn fftr<T: Sample, const PACKED: bool>(
    fft: &Fft<'_, T, PACKED>,
    factors: &[u32],
    super_twiddles: &[Stored<T::Table>],
    time: &[Stored<T>],
    freq: &mut [Stored<T>],
) {
    let ncfft = fft.n;
    fft.run(freq, time, factors);
    let tdc = cdiv(ld(&freq[0]), 2);
    freq[0] = [T::add(tdc.r, tdc.i), T::default()];
    freq[ncfft] = [T::sub(tdc.r, tdc.i), T::default()];
    if !(PACKED && T::split_packed::<false>(freq, ncfft, super_twiddles)) {
        split_pairs(freq, ncfft, super_twiddles, split_forward::<T>);
    }
}

/// One step of `kiss_fftr`'s split: values `k` and `ncfft - k` and super twiddle `k - 1`.
fn split_forward<T: Sample>(
    k: Stored<T>,
    nk: Stored<T>,
    stw: &Stored<T::Table>,
) -> (Stored<T>, Stored<T>) {
    let (k, nk, stw) = (ld(&k), ld(&nk), ld_table(stw));
    let fpk = cdiv(k, 2);
    let fpnk = cdiv(
        C {
            r: nk.r,
            i: T::neg(nk.i),
        },
        2,
    );
    let f1k = cadd(fpk, fpnk);
    let f2k = csub(fpk, fpnk);
    let tw = cmul(f2k, stw);
    (
        [T::half_sum(f1k.r, tw.r), T::half_sum(f1k.i, tw.i)],
        [T::half_diff(f1k.r, tw.r), T::half_diff(tw.i, f1k.i)],
    )
}

/// One `kiss_fftri` of `freq` (`fft_length / 2 + 1` complex values) into `time`
/// (`fft_length` samples), with `tmp` (`fft_length` samples) as scratch: `tmp` takes the
/// inputs (value `0` and the pairs `k`, `ncfft - k`) and then the complex FFT reads it.
fn fftri<T: Sample>(
    fft: &Fft<'_, T, true>,
    factors: &[u32],
    super_twiddles: &[Stored<T::Table>],
    freq: &[Stored<T>],
    time: &mut [Stored<T>],
    tmp: &mut [Stored<T>],
) {
    let ncfft = fft.n;
    let tmp = &mut tmp[..ncfft];
    tmp.copy_from_slice(&freq[..ncfft]);
    let (f0, fn_) = (ld(&freq[0]), ld(&freq[ncfft]));
    st(
        &mut tmp[0],
        cdiv(
            C {
                r: T::add(f0.r, fn_.r),
                i: T::sub(f0.r, fn_.r),
            },
            2,
        ),
    );
    if !T::split_packed::<true>(tmp, ncfft, super_twiddles) {
        split_pairs(tmp, ncfft, super_twiddles, split_inverse::<T>);
    }
    fft.run(time, tmp, factors);
}

/// One step of `kiss_fftri`'s split: values `k` and `ncfft - k` and super twiddle `k - 1`.
fn split_inverse<T: Sample>(
    k: Stored<T>,
    nk: Stored<T>,
    stw: &Stored<T::Table>,
) -> (Stored<T>, Stored<T>) {
    let (k, nk, stw) = (ld(&k), ld(&nk), ld_table(stw));
    let fk = cdiv(k, 2);
    let fnkc = cdiv(
        C {
            r: nk.r,
            i: T::neg(nk.i),
        },
        2,
    );
    let fek = cadd(fk, fnkc);
    let fok = cmul(csub(fk, fnkc), stw);
    let d = csub(fek, fok);
    let sum = cadd(fek, fok);
    ([sum.r, sum.i], [d.r, T::neg(d.i)])
}

/// The inverse real FFT of every frame: `input` holds `frames * (fft_length + 2)` values
/// (interleaved complex), `output` `frames * fft_length`; tables as for [`signal_rfft`] but
/// of the inverse transform (positive phases); `scratch` of `fft_length` samples.
pub fn signal_irfft<T: Sample>(
    p: &Params,
    factors: &[u32],
    twiddles: &[T::Table],
    super_twiddles: &[T::Table],
    input: &[T],
    output: &mut [T],
    scratch: &mut [T],
) {
    let n = p.fft_length;
    debug_assert_eq!(input.len(), p.frames * (n + 2));
    debug_assert_eq!(output.len(), p.frames * n);
    let fft = Fft {
        twiddles: twiddles.as_chunks().0,
        n: n / 2,
        inverse: true,
    };
    let super_twiddles = super_twiddles.as_chunks().0;
    let tmp = scratch[..n].as_chunks_mut().0;
    for (x, y) in input.chunks_exact(n + 2).zip(output.chunks_exact_mut(n)) {
        fftri(
            &fft,
            factors,
            super_twiddles,
            x.as_chunks().0,
            y.as_chunks_mut().0,
            tmp,
        );
    }
}

/// [`signal_irfft`] on int16 samples.
pub fn signal_irfft_s16(
    p: &Params,
    factors: &[u32],
    twiddles: &[i16],
    super_twiddles: &[i16],
    input: &[i16],
    output: &mut [i16],
    scratch: &mut [i16],
) {
    signal_irfft(p, factors, twiddles, super_twiddles, input, output, scratch)
}

/// [`signal_irfft`] on int32 samples.
pub fn signal_irfft_s32(
    p: &Params,
    factors: &[u32],
    twiddles: &[i32],
    super_twiddles: &[i32],
    input: &[i32],
    output: &mut [i32],
    scratch: &mut [i32],
) {
    signal_irfft(p, factors, twiddles, super_twiddles, input, output, scratch)
}

/// [`signal_irfft`] on float32 samples (twiddles as `f32` bits), each output then divided
/// by `fft_length` as TFLM's `IrfftFloatApply` does (the fixed-point forms are not).
pub fn signal_irfft_f32(
    p: &Params,
    factors: &[u32],
    twiddles: &[u32],
    super_twiddles: &[u32],
    input: &[f32],
    output: &mut [f32],
    scratch: &mut [f32],
) {
    signal_irfft(p, factors, twiddles, super_twiddles, input, output, scratch);
    let n = p.fft_length as f32;
    for o in output.iter_mut() {
        *o /= n;
    }
}

/// The real FFT of every frame: `input` holds `frames * input_length` samples, `output`
/// `frames * (fft_length + 2)` (interleaved complex values); `factors`, `twiddles`
/// (`kiss_fft_alloc`'s `fft_length / 2` complex values ordered by [`stage_twiddles`]) and
/// `super_twiddles` (`fft_length / 4`) from the build-time tables; `scratch` of [`scratch_elements`].
pub fn signal_rfft<T: Sample>(
    p: &Params,
    factors: &[u32],
    twiddles: &[T::Table],
    super_twiddles: &[T::Table],
    input: &[T],
    output: &mut [T],
    scratch: &mut [T],
) {
    let tables = (factors, twiddles, super_twiddles);
    rfft_frames::<T, true, false>(p, tables, input, output, scratch)
}

/// [`signal_rfft`] without scratch, for frames of an even length
/// ([`lean_scratch_elements`]): each frame is read where it is, the values past its end
/// taken as zero (a bounds test per innermost block instead of the zero-padded copy).
pub fn signal_rfft_unpadded<T: Sample>(
    p: &Params,
    factors: &[u32],
    twiddles: &[T::Table],
    super_twiddles: &[T::Table],
    input: &[T],
    output: &mut [T],
) {
    let tables = (factors, twiddles, super_twiddles);
    rfft_frames::<T, true, true>(p, tables, input, output, &mut [])
}

/// [`signal_rfft`], with the packed int16 forms if `PACKED`; with `SHORT`, the frames (of an
/// even length) read where they are instead of from their zero-padded copy in `scratch`.
fn rfft_frames<T: Sample, const PACKED: bool, const SHORT: bool>(
    p: &Params,
    (factors, twiddles, super_twiddles): (&[u32], &[T::Table], &[T::Table]),
    input: &[T],
    output: &mut [T],
    scratch: &mut [T],
) {
    let n = p.fft_length;
    debug_assert_eq!(input.len(), p.frames * p.input_length);
    debug_assert_eq!(output.len(), p.frames * (n + 2));
    let fft = Fft::<T, PACKED> {
        twiddles: twiddles.as_chunks().0,
        n: n / 2,
        inverse: false,
    };
    let super_twiddles = super_twiddles.as_chunks().0;
    for (x, y) in input
        .chunks_exact(p.input_length)
        .zip(output.chunks_exact_mut(n + 2))
    {
        let time = if SHORT {
            // Read where it is: the innermost sub-FFTs copy the values of the frame they
            // read (`copy_strided`, and the packed radix-4 leaf declines a block reaching
            // past the frame's end), so with the output frame zeroed first, the values past
            // the end are zero, as the zero-padded copy's.
            debug_assert!(p.input_length.is_multiple_of(2));
            y.fill(T::default());
            x
        } else {
            // (`arch::copy_block`: at opt-level s, `copy_from_slice` of 2-byte samples is
            // the generic byte-aligned `memcpy`, four times the instructions.)
            let time = &mut scratch[..n];
            crate::arch::copy_block(&mut time[..p.input_length], x);
            time[p.input_length..].fill(T::default());
            time
        };
        fftr(
            &fft,
            factors,
            super_twiddles,
            time.as_chunks().0,
            y.as_chunks_mut().0,
        );
    }
}

/// [`signal_rfft`] on int16 samples.
pub fn signal_rfft_s16(
    p: &Params,
    factors: &[u32],
    twiddles: &[i16],
    super_twiddles: &[i16],
    input: &[i16],
    output: &mut [i16],
    scratch: &mut [i16],
) {
    signal_rfft(p, factors, twiddles, super_twiddles, input, output, scratch)
}

/// [`signal_rfft_s16`] as TFLM's reference kernel computes it: every butterfly and split
/// step in `_kiss_fft_guts.h`'s scalar arithmetic, one value at a time, without the packed
/// DSP forms. The same outputs; the kernel of `reference_kernels` builds, the yardstick of
/// the packed forms' instructions. (int32 and float32 have only the scalar forms.)
pub fn signal_rfft_s16_reference(
    p: &Params,
    factors: &[u32],
    twiddles: &[i16],
    super_twiddles: &[i16],
    input: &[i16],
    output: &mut [i16],
    scratch: &mut [i16],
) {
    let tables = (factors, twiddles, super_twiddles);
    rfft_frames::<i16, false, false>(p, tables, input, output, scratch)
}

/// [`signal_rfft`] on float32 samples (twiddles as `f32` bits).
pub fn signal_rfft_f32(
    p: &Params,
    factors: &[u32],
    twiddles: &[u32],
    super_twiddles: &[u32],
    input: &[f32],
    output: &mut [f32],
    scratch: &mut [f32],
) {
    signal_rfft(p, factors, twiddles, super_twiddles, input, output, scratch)
}

/// [`signal_rfft`] on int32 samples.
pub fn signal_rfft_s32(
    p: &Params,
    factors: &[u32],
    twiddles: &[i32],
    super_twiddles: &[i32],
    input: &[i32],
    output: &mut [i32],
    scratch: &mut [i32],
) {
    signal_rfft(p, factors, twiddles, super_twiddles, input, output, scratch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed int16 butterflies give [`bfly4_one`]'s values on random and extreme
    /// inputs and twiddles, both directions.
    #[test]
    #[cfg(kiln_arch = "portable")]
    fn packed_bfly4_matches_the_scalar_butterfly() {
        fn run<const INVERSE: bool>(seed: u64) {
            let mut state = seed;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let v = state as i16;
                // Extremes one time in eight.
                match state >> 61 {
                    0 => i16::MIN,
                    1 => i16::MAX,
                    _ => v,
                }
            };
            const M: usize = 37;
            let mut out: [Stored<i16>; 4 * M] = core::array::from_fn(|_| [next(), next()]);
            let tw: [[Stored<i16>; 3]; M] =
                core::array::from_fn(|_| core::array::from_fn(|_| [next(), next()]));
            let want: [[C<i16>; 4]; M] = core::array::from_fn(|u| {
                let f = [0, 1, 2, 3].map(|q| ld(&out[q * M + u]));
                bfly4_one::<i16, INVERSE>(f, tw[u].each_ref().map(ld_table::<i16>))
            });
            let (a, rest) = out.split_at_mut(M);
            let (b, rest) = rest.split_at_mut(M);
            let (c, d) = rest.split_at_mut(M);
            packed::bfly4::<INVERSE>(a, b, c, d, &tw);
            for (u, w) in want.iter().enumerate() {
                for (q, w) in w.iter().enumerate() {
                    assert_eq!(out[q * M + u], [w.r, w.i], "butterfly {u}, output {q}");
                }
            }
        }
        for seed in 1..50 {
            run::<false>(seed * 0x9E37_79B9);
            run::<true>(seed * 0x85EB_CA6B);
        }
    }

    /// The packed int16 split steps give [`split_forward`]'s and [`split_inverse`]'s values
    /// on random and extreme values and twiddles (`-32768` conjugates to itself), for an
    /// even and an odd `ncfft`.
    #[test]
    #[cfg(kiln_arch = "portable")]
    fn packed_split_matches_the_scalar_split() {
        fn run<const INVERSE: bool>(seed: u64, ncfft: usize) {
            let mut state = seed;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                match state >> 61 {
                    0 => i16::MIN,
                    1 => i16::MAX,
                    2 => -1,
                    _ => state as i16,
                }
            };
            let values: [Stored<i16>; 65] = core::array::from_fn(|_| [next(), next()]);
            let tw: [Stored<i16>; 64] = core::array::from_fn(|_| [next(), next()]);
            let (mut want, mut got) = (values, values);
            let step = if INVERSE {
                split_inverse::<i16>
            } else {
                split_forward::<i16>
            };
            split_pairs(&mut want, ncfft, &tw, step);
            packed::split::<INVERSE>(&mut got, ncfft, &tw);
            assert_eq!(got, want, "ncfft {ncfft}, inverse {INVERSE}");
            assert_ne!(got, values);
        }
        for seed in 1..50 {
            for ncfft in [64, 63] {
                run::<false>(seed * 0x9E37_79B9, ncfft);
                run::<true>(seed * 0x85EB_CA6B, ncfft);
            }
        }
    }

    /// The reference kernel (scalar steps only) and the packed one give the same frames on
    /// random samples and tables, for radix 4 and 2 (`fft_length` 512, 64: the packed
    /// leaves, butterflies and split) and with radix 3 (24), odd `ncfft` (30).
    #[test]
    fn reference_and_packed_rfft_agree() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state >> 61 {
                0 => i16::MIN,
                1 => i16::MAX,
                _ => state as i16,
            }
        };
        for (n, input_length) in [(512, 480), (64, 64), (24, 20), (30, 30), (512, 98), (24, 2)] {
            let p = prepare(n, input_length, 2).unwrap();
            let n = p.fft_length;
            let mut f = [0u32; 64];
            let len = factors(n / 2, &mut f).unwrap();
            let tw: [i16; 2048] = core::array::from_fn(|_| next());
            let stw: [i16; 1024] = core::array::from_fn(|_| next());
            let tw = &tw[..2 * stage_twiddles_len(&f[..len])];
            let stw = &stw[..n / 2];
            let input: [i16; 1024] = core::array::from_fn(|_| next());
            let input = &input[..2 * input_length];
            let (mut want, mut got) = ([0i16; 2 * 514], [0i16; 2 * 514]);
            let mut scratch = [0i16; 512];
            let out = 2 * (n + 2);
            signal_rfft_s16_reference(
                &p,
                &f[..len],
                tw,
                stw,
                input,
                &mut want[..out],
                &mut scratch,
            );
            signal_rfft_s16(&p, &f[..len], tw, stw, input, &mut got[..out], &mut scratch);
            assert_eq!(got, want, "fft_length {n}");
            assert!(want[..out].iter().any(|&x| x != 0));
            // The lean forms (frames of an even length read where they are, no scratch).
            assert_eq!(lean_scratch_elements(&p), 0);
            got.fill(0);
            signal_rfft_unpadded(&p, &f[..len], tw, stw, input, &mut got[..out]);
            assert_eq!(got, want, "fft_length {n}, lean");
            got.fill(0);
            let tables = (&f[..len], tw, stw);
            rfft_frames::<i16, false, true>(&p, tables, input, &mut got[..out], &mut []);
            assert_eq!(got, want, "fft_length {n}, lean reference");
            // Float and int32 samples, lean against the zero-padded copy, bit for bit.
            let x32: [f32; 1024] = core::array::from_fn(|i| f32::from(input[i % input.len()]));
            // (Float twiddles are passed as their bits.)
            let bits = |v: i16| (f32::from(v) / 32768.0).to_bits();
            let tw32: [u32; 2048] = core::array::from_fn(|i| bits(tw[i % tw.len()]));
            let stw32: [u32; 1024] = core::array::from_fn(|i| bits(stw[i % stw.len()]));
            let (mut a, mut b) = ([0f32; 2 * 514], [0f32; 2 * 514]);
            let mut s32 = [0f32; 512];
            let (x32, tw32, stw32) = (&x32[..2 * input_length], &tw32[..tw.len()], &stw32[..n / 2]);
            signal_rfft_f32(&p, &f[..len], tw32, stw32, x32, &mut a[..out], &mut s32);
            signal_rfft_unpadded(&p, &f[..len], tw32, stw32, x32, &mut b[..out]);
            assert!(
                a.iter().zip(&b).all(|(a, b)| a.to_bits() == b.to_bits()),
                "f32 {n}"
            );
            let xi: [i32; 1024] = core::array::from_fn(|i| i32::from(input[i % input.len()]) << 12);
            let twi: [i32; 2048] = core::array::from_fn(|i| i32::from(tw[i % tw.len()]) << 16);
            let stwi: [i32; 1024] = core::array::from_fn(|i| i32::from(stw[i % stw.len()]) << 16);
            let (mut a, mut b) = ([0i32; 2 * 514], [0i32; 2 * 514]);
            let mut si = [0i32; 512];
            let (xi, twi, stwi) = (&xi[..2 * input_length], &twi[..tw.len()], &stwi[..n / 2]);
            signal_rfft_s32(&p, &f[..len], twi, stwi, xi, &mut a[..out], &mut si);
            signal_rfft_unpadded(&p, &f[..len], twi, stwi, xi, &mut b[..out]);
            assert_eq!(a, b, "s32 {n}");
        }
    }

    #[test]
    fn kf_factor_order() {
        let mut f = [0u32; 64];
        let n = factors(256, &mut f).unwrap();
        assert_eq!(&f[..n], &[4, 64, 4, 16, 4, 4, 4, 1]);
        let n = factors(12, &mut f).unwrap();
        assert_eq!(&f[..n], &[4, 3, 3, 1]);
        let n = factors(14, &mut f).unwrap();
        assert_eq!(&f[..n], &[2, 7, 7, 1]);
        let n = factors(1, &mut f).unwrap();
        assert_eq!(&f[..n], &[1, 1]);
        assert_eq!(prepare(7, 7, 1), None);
        assert_eq!(prepare(8, 9, 1), None);
        // Radix 7 (TFLM crashes) and a one-point complex FFT.
        assert_eq!(prepare(14, 14, 1), None);
        assert_eq!(prepare(2, 2, 1), None);
        assert!(prepare(30, 30, 1).is_some());
    }

    /// The stage order of `kiss_fft_alloc(12)`'s twiddles: radix 4 (m = 3, fstride 1), then
    /// radix 3 (m = 1, fstride 4) with its constant `epi3 = twiddles[4]` first.
    #[test]
    fn stage_twiddle_order() {
        let mut f = [0u32; 64];
        let len = factors(12, &mut f).unwrap();
        let tw: [[i32; 2]; 12] = core::array::from_fn(|i| [i as i32, -(i as i32)]);
        assert_eq!(stage_twiddles_len(&f[..len]), 12);
        let mut out = [[0i32; 2]; 12];
        stage_twiddles(&tw, &f[..len], &mut out).unwrap();
        let index: [i32; 12] = core::array::from_fn(|k| out[k][0]);
        assert_eq!(index, [0, 0, 0, 1, 2, 3, 2, 4, 6, 4, 0, 0]);
        assert!(out.iter().all(|v| v[1] == -v[0]));
        assert_eq!(stage_twiddles(&tw, &f[..len], &mut out[..11]), None);
        assert_eq!(stage_twiddles(&tw[..6], &f[..len], &mut out), None);
    }
}
