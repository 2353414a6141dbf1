//! SignalFilterBank (TFLM's Signal library, `signal/src/filter_bank.cc`): a bank of
//! triangular (mel) filters over a uint32 power spectrum, accumulated in uint64.
//!
//! Channel `i` of `0..=num_channels` sums `weights[ws + j] · input[fs + j]` over its
//! `widths[i]` bins (`fs`, `ws`: its frequency and weight starts) and passes the sum of
//! `unweights[ws + j] · input[fs + j]` on to channel `i + 1`; channel 0 is scratch (its
//! weighted sum is dropped) and channel `i >= 1` is output `i - 1`. As in the C++, each int16
//! weight is converted to uint64 (sign-extended) and every product and sum wraps modulo 2^64.

use crate::arch;

/// Constant parameters of a SignalFilterBank node (the tables are constant operands,
/// checked at build time by [`check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Output channels (`num_channels`); the tables hold `num_channels + 1` entries.
    pub num_channels: usize,
    /// `Some(k)` when no weight is negative and `unweights[j] = k - weights[j]` for every
    /// entry (TFLM's generator writes weights in `0..=4096` and `k = 4096`; [`complement`]
    /// decides at build time): the kernel then sums `weights[j] · x` and `x` per channel, one
    /// 32 x 32 -> 64-bit multiply-accumulate per bin, and gets the unweighted sum as
    /// `k · sum(x) - sum(weights · x)`, equal modulo 2^64.
    pub unweights_complement: Option<i64>,
    /// No weight and no unweight is negative (TFLM's generator writes them in `0..=4096`;
    /// [`unsigned`] decides at build time): each int16 entry is then its value as uint16 and
    /// every product an unsigned 32 x 32 -> 64-bit multiply-accumulate (UMLAL on Arm) instead
    /// of a 64 x 64-bit one.
    pub unsigned_tables: bool,
}

/// Whether no entry of `weights` and `unweights` is negative ([`Params::unsigned_tables`]).
pub fn unsigned(weights: &[i16], unweights: &[i16]) -> bool {
    weights.iter().chain(unweights).all(|&v| v >= 0)
}

/// `Some(k)` if the tables have one length, no weight is negative and
/// `unweights[j] + weights[j] = k` for every `j` (the form [`signal_filter_bank`] computes
/// with one unsigned multiply per bin).
pub fn complement(weights: &[i16], unweights: &[i16]) -> Option<i64> {
    let k = *weights.first()? as i64 + *unweights.first()? as i64;
    (weights.len() == unweights.len()
        && weights
            .iter()
            .zip(unweights)
            .all(|(&w, &u)| w >= 0 && w as i64 + u as i64 == k))
    .then_some(k)
}

/// The kernel needs no scratch memory (TFLM's work area is not needed: each channel's sum
/// is written as soon as it is complete).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Why [`check`] refuses a filter bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A table holds fewer than `num_channels + 1` entries.
    ShortTable,
    /// Channel `channel`'s bins `start..start + width` lie outside the input.
    Frequencies {
        channel: usize,
        start: i16,
        width: i16,
    },
    /// Channel `channel`'s weights `start..start + width` lie outside the weights or the
    /// unweights.
    Weights {
        channel: usize,
        start: i16,
        width: i16,
    },
}

/// Checks the constant tables against an input of `input_len` bins: every read TFLM makes
/// must lie inside its array (channels with a width <= 0 read nothing).
pub fn check(
    p: &Params,
    input_len: usize,
    weights_len: usize,
    frequency_starts: &[i16],
    weight_starts: &[i16],
    widths: &[i16],
) -> Result<(), Refusal> {
    let n = p.num_channels + 1;
    if frequency_starts.len() < n || weight_starts.len() < n || widths.len() < n {
        return Err(Refusal::ShortTable);
    }
    let inside =
        |start: i16, width: i16, len: usize| start >= 0 && start as usize + width as usize <= len;
    for channel in 0..n {
        let (fs, ws, width) = (
            frequency_starts[channel],
            weight_starts[channel],
            widths[channel],
        );
        if width <= 0 {
            continue;
        }
        if !inside(fs, width, input_len) {
            return Err(Refusal::Frequencies {
                channel,
                start: fs,
                width,
            });
        }
        if !inside(ws, width, weights_len) {
            return Err(Refusal::Weights {
                channel,
                start: ws,
                width,
            });
        }
    }
    Ok(())
}

/// The filter bank; the tables passed [`check`] (`weights` and `unweights` of the length
/// checked). `output` holds at most `num_channels` values (TFLM copies that many).
#[allow(clippy::too_many_arguments)]
pub fn signal_filter_bank(
    p: &Params,
    input: &[u32],
    weights: &[i16],
    unweights: &[i16],
    frequency_starts: &[i16],
    weight_starts: &[i16],
    widths: &[i16],
    output: &mut [u64],
) {
    let (mut weighted, mut unweighted) = (0u64, 0u64);
    let channels = frequency_starts
        .iter()
        .zip(weight_starts)
        .zip(widths)
        .take(p.num_channels + 1);
    // Channel 0's sum is dropped; channel `i >= 1` writes output `i - 1`.
    let mut outs = core::iter::once(None).chain(output.iter_mut().map(Some));
    for ((&fs, &ws), &width) in channels {
        if width > 0
            && let Some(k) = p.unweights_complement
        {
            // (k - w) x summed is k sum(x) - sum(w x), modulo 2^64 (`unweights[j]` as u64
            // is `k - weights[j]` modulo 2^64).
            let (fs, ws, width) = (fs as usize, ws as usize, width as usize);
            let (Some(x), Some(w)) = (input.get(fs..fs + width), weights.get(ws..ws + width))
            else {
                return;
            };
            // No weight is negative here: `w as u16` is its value, and each product is an
            // unsigned 32 x 32 -> 64-bit multiply (UMLAL on Arm).
            let (mut products, mut sum) = (0u64, 0u64);
            for (&x, &w) in x.iter().zip(w) {
                products = arch::umlal(products, u32::from(w as u16), x);
                sum = sum.wrapping_add(u64::from(x));
            }
            weighted = weighted.wrapping_add(products);
            unweighted = (k as u64).wrapping_mul(sum).wrapping_sub(products);
        } else if width > 0 {
            let (fs, ws, width) = (fs as usize, ws as usize, width as usize);
            let (Some(x), Some(w), Some(u)) = (
                input.get(fs..fs + width),
                weights.get(ws..ws + width),
                unweights.get(ws..ws + width),
            ) else {
                return;
            };
            if p.unsigned_tables {
                // No entry is negative: `as u16` is its value.
                for ((&x, &w), &u) in x.iter().zip(w).zip(u) {
                    weighted = arch::umlal(weighted, u32::from(w as u16), x);
                    unweighted = arch::umlal(unweighted, u32::from(u as u16), x);
                }
            } else {
                for ((&x, &w), &u) in x.iter().zip(w).zip(u) {
                    let (w, u, x) = (w as i64 as u64, u as i64 as u64, u64::from(x));
                    weighted = weighted.wrapping_add(w.wrapping_mul(x));
                    unweighted = unweighted.wrapping_add(u.wrapping_mul(x));
                }
            }
        }
        if let Some(Some(o)) = outs.next() {
            *o = weighted;
        }
        weighted = unweighted;
        unweighted = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-worked bank of two channels (and the scratch channel 0).
    #[test]
    fn two_channels_and_wrapping() {
        // Channel 0 (scratch) over bins 0..2, channel 1 over 1..3, channel 2 over 3..4.
        let p = Params {
            num_channels: 2,
            unweights_complement: None,
            unsigned_tables: false,
        };
        let (fs, ws, widths) = ([0i16, 1, 3], [0i16, 2, 4], [2i16, 2, 1]);
        check(&p, 4, 5, &fs, &ws, &widths).unwrap();
        let weights = [1i16, 2, 3, 4, 5];
        let unweights = [10i16, 20, 30, 40, -1];
        let input = [1u32, 2, 3, u32::MAX];
        let mut out = [0u64; 2];
        signal_filter_bank(
            &p, &input, &weights, &unweights, &fs, &ws, &widths, &mut out,
        );
        // Channel 1: unweights of channel 0 (10·1 + 20·2) + weights 3·2 + 4·3.
        assert_eq!(out[0], 50 + 18);
        // Channel 2: unweights of channel 1 (30·2 + 40·3) + 5·(2^32 - 1).
        assert_eq!(out[1], 180 + 5 * u32::MAX as u64);
        // A negative weight wraps modulo 2^64.
        let unweights = [10i16, 20, 30, -1, -1];
        signal_filter_bank(
            &p, &input, &weights, &unweights, &fs, &ws, &widths, &mut out,
        );
        assert_eq!(
            out[1],
            60u64.wrapping_sub(3).wrapping_add(5 * u32::MAX as u64)
        );
    }

    #[test]
    fn refuses_reads_outside() {
        let p = Params {
            num_channels: 1,
            unweights_complement: None,
            unsigned_tables: false,
        };
        assert_eq!(
            check(&p, 4, 4, &[0, 3], &[0, 0], &[1, 2]),
            Err(Refusal::Frequencies {
                channel: 1,
                start: 3,
                width: 2
            })
        );
        assert_eq!(
            check(&p, 4, 2, &[0, 0], &[0, 1], &[1, 2]),
            Err(Refusal::Weights {
                channel: 1,
                start: 1,
                width: 2
            })
        );
        assert_eq!(check(&p, 4, 4, &[0], &[0], &[1]), Err(Refusal::ShortTable));
        assert_eq!(check(&p, 4, 4, &[-5, 0], &[-7, 0], &[0, 1]), Ok(()));
    }

    /// Complementary tables (`unweights = k - weights`) give the same outputs in the
    /// one-multiply form as in the general one, with wrapping sums (bins near 2^32,
    /// negative weights), overlapping channels and empty ones.
    #[test]
    fn complementary_form_equals_the_general_form() {
        let mut seed = 11u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            seed
        };
        for k in [4096i64, 0, -7, 16000, 32767] {
            let weights: [i16; 40] = core::array::from_fn(|_| (next() >> 17) as i16);
            let unweights: [i16; 40] = core::array::from_fn(|j| (k - weights[j] as i64) as i16);
            assert_eq!(complement(&weights, &unweights), Some(k));
            let input: [u32; 64] = core::array::from_fn(|j| match j % 5 {
                0 => u32::MAX - (next() >> 20),
                _ => next(),
            });
            let fs = [0i16, 3, 10, 10, 30, 50, 60];
            let ws = [0i16, 5, 12, 0, 20, 28, 35];
            let widths = [4i16, 9, 0, 17, 8, 7, 4];
            let general = Params {
                num_channels: 6,
                unweights_complement: None,
                unsigned_tables: false,
            };
            let fast = Params {
                unweights_complement: Some(k),
                ..general
            };
            check(&general, input.len(), weights.len(), &fs, &ws, &widths).unwrap();
            let (mut a, mut b) = ([0u64; 6], [1u64; 6]);
            signal_filter_bank(
                &general, &input, &weights, &unweights, &fs, &ws, &widths, &mut a,
            );
            signal_filter_bank(
                &fast, &input, &weights, &unweights, &fs, &ws, &widths, &mut b,
            );
            assert_eq!(a, b, "k = {k}");
            // Tables without negative entries (not complementary: one is off by one) give
            // the same outputs through the unsigned multiplies.
            let weights = weights.map(|w| w & 0x0fff);
            let unweights: [i16; 40] = core::array::from_fn(|j| 4095 - weights[j] + (j % 2) as i16);
            assert!(unsigned(&weights, &unweights));
            let unsigned = Params {
                unsigned_tables: true,
                ..general
            };
            signal_filter_bank(
                &general, &input, &weights, &unweights, &fs, &ws, &widths, &mut a,
            );
            signal_filter_bank(
                &unsigned, &input, &weights, &unweights, &fs, &ws, &widths, &mut b,
            );
            assert_eq!(a, b, "unsigned tables");
            assert_ne!(a, [0; 6]);
        }
        let (w, u) = ([1i16, 2, 3], [9i16, 8, 6]);
        assert!(unsigned(&w, &u));
        assert!(!unsigned(&w, &[9, -8, 6]));
        assert_eq!(complement(&w, &u), None);
        // A negative weight keeps the general form.
        assert_eq!(complement(&[4, -1, 0], &[0, 5, 4]), None);
        assert_eq!(complement(&w, &u[..2]), None);
        assert_eq!(complement(&[], &[]), None);
    }
}
