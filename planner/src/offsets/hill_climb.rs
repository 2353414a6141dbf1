//! Hill climbing on the placement order (the second stage): move the buffer ending highest
//! before, or swap it with, a buffer live with it placed before it, and keep the new order
//! if the arena is no larger; a fixed pseudo-random sequence.

use super::*;

/// A small deterministic pseudo-random sequence (xorshift64*).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Hill climbing on the placement order. Returns a strictly smaller placement, if found,
/// and the number of placements it made. Without conflict lists (`adj` empty: a dense
/// instance), the buffers live with the bottleneck are found by a scan.
#[allow(clippy::too_many_arguments)]
pub(super) fn hill_climb(
    buffers: &[Buffer],
    adj: &[Vec<u32>],
    mut order: Vec<usize>,
    align: usize,
    fit: Fit,
    start_arena: usize,
    target: usize,
    iterations: usize,
    ws: &mut Workspace,
) -> (Option<(Vec<usize>, usize)>, usize) {
    let n = buffers.len();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut passes = 1;
    let Some(mut arena) = ws.place(buffers, adj, &order, align, fit, usize::MAX) else {
        return (None, passes);
    };
    debug_assert_eq!(arena, start_arena);
    let mut offsets = ws.offsets.clone();
    let mut best: Option<(Vec<usize>, usize)> = None;
    let mut pos = vec![0usize; n];
    let mut trial: Vec<usize> = Vec::with_capacity(n);
    for _ in 0..iterations {
        if arena <= target {
            break;
        }
        for (k, &i) in order.iter().enumerate() {
            pos[i] = k;
        }
        // The bottleneck: the buffer ending highest (earliest placed on ties).
        let bottleneck = order
            .iter()
            .copied()
            .find(|&i| offsets[i] + buffers[i].size == arena)
            .expect("some buffer ends at the arena");
        // Buffers placed before it and live with it: they decided where it went.
        let below: Vec<usize> = if adj.is_empty() {
            let b = &buffers[bottleneck];
            (0..n)
                .filter(|&j| j != bottleneck && b.overlaps_in_time(&buffers[j]))
                .filter(|&j| pos[j] < pos[bottleneck])
                .collect()
        } else {
            adj[bottleneck]
                .iter()
                .map(|&j| j as usize)
                .filter(|&j| pos[j] < pos[bottleneck])
                .collect()
        };
        if below.is_empty() {
            break; // It sits at 0 with nothing under it: the arena is its size.
        }
        let other = below[rng.below(below.len())];
        let (a, b) = (pos[other], pos[bottleneck]);
        trial.clear();
        trial.extend_from_slice(&order);
        if rng.next() & 1 == 0 {
            trial.swap(a, b);
        } else {
            // Move the bottleneck just before the other buffer.
            trial[a..=b].rotate_right(1);
        }
        passes += 1;
        if let Some(new) = ws.place(buffers, adj, &trial, align, fit, arena) {
            std::mem::swap(&mut order, &mut trial);
            offsets.copy_from_slice(&ws.offsets);
            if new < arena {
                best = Some((offsets.clone(), new));
            }
            arena = new;
        }
    }
    (best, passes)
}
