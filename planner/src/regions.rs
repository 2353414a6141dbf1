//! The memory map: the arena's buffers assigned to the RAM regions the user names (e.g. DTCM
//! and AXI SRAM, or SRAM and PSRAM), fastest first.
//!
//! Without regions the arena is one block and nothing here runs. With regions, the plan made
//! for one arena (its order, aliasing and lifetimes) is kept and its buffers are split over
//! the regions:
//!
//! 1. **Heat**: every buffer gets the number of accesses per invoke of each of its bytes: for
//!    a tensor (and the tensors aliased into its buffer) one write by its producer and one
//!    read per consuming operator, plus one for a graph input (written by the application)
//!    or output (read by it); for a scratch buffer two (its operator writes and reads it).
//!    A tensor of `n` bytes read `k` times moves `(1 + k) * n` bytes, so this is the bytes
//!    moved per byte held: the buffers that repay fast memory most.
//! 2. **Assignment**: the buffers in order of heat (hottest first; ties: smaller first, so
//!    that more of them fit, then by first step and index), each into the first region (in
//!    the order given, fastest first) where it fits: at the lowest offset, aligned to the
//!    region's alignment, where each of its pieces avoids the pieces of that region's buffers
//!    live at the same steps, ending within the region's size. A buffer never straddles
//!    regions. Where the first fit fails in a region, the offset search
//!    ([`crate::offsets::place`]) over the region's buffers and this one is tried (at most
//!    [`SEARCHES`] times per pass) and its placement taken if it fits. If a buffer fits
//!    nowhere, the assignment is tried once more with the largest
//!    buffers first (TFLM's order, which packs tighter), then with the one arena's placement
//!    whole in the first region that holds it; if that fails too, the error names
//!    the last region, its size, the bytes the buffer would have needed there and the
//!    overage.
//! 3. **Placement**: each region's buffers are then placed on their own by the offset
//!    search ([`crate::offsets::place`]); its offsets are kept where its arena is no larger
//!    than the assignment's (so a region that fitted still fits).
//!
//! Both passes count their work in piece visits: past [`WORK_BUDGET`], the remaining
//! buffers of a pass go on top of the slowest region (still checked against its size).
//! Deterministic: no hashing, stable sorts with index ties.
//!
//! In the plan, a buffer's `offset` stays its place in one address space where the regions
//! lie one after another (region `r` at [`RegionPlan::base`], aligned), so every check on
//! offsets holds as for one arena; [`crate::plan::PlannedBuffer::region`] names its region
//! and `offset - base` is its offset there. The persistent state (LSTM/SVDF variables) is not
//! in a region: it keeps its own static.

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::Graph;
use crate::lifetimes::{Buffer, BufferOwner};
use crate::offsets::{self, PlacementOptions};
use crate::plan::Plan;

/// Work budget of one assignment pass, in piece visits.
pub const WORK_BUDGET: usize = 4_000_000;

/// Offset searches one assignment pass may run where a first fit fails.
pub const SEARCHES: usize = 48;

/// A RAM region the user names: where its bytes go and how many it has.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    /// The link section its static goes into (e.g. `.dtcm`).
    pub section: String,
    /// Its size in bytes: the most the region's arena may take.
    pub size: usize,
    /// Alignment of its start and of every offset in it (a power of two; the plan's
    /// alignment when smaller).
    pub align: usize,
}

impl Region {
    /// A region aligned as the plan.
    pub fn new(section: impl Into<String>, size: usize) -> Region {
        Region {
            section: section.into(),
            size,
            align: 1,
        }
    }
}

/// A region of a plan: its user's declaration and what the plan uses of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionPlan {
    /// The link section of its static.
    pub section: String,
    /// The bytes the user gave it.
    pub size: usize,
    /// Alignment of its start and of its buffers' offsets (at least the plan's).
    pub align: usize,
    /// Where it starts in the plan's single address space (aligned).
    pub base: usize,
    /// The bytes its buffers use: `max(offset + size) - base` (0 without buffers).
    pub bytes: usize,
}

/// Checks the regions the user names: at least one byte each, a section name, an alignment
/// that is a power of two of at most 64 bytes, no section twice.
pub fn check(regions: &[Region]) -> Result<()> {
    for (i, r) in regions.iter().enumerate() {
        if r.section.trim().is_empty() || r.section.contains(char::is_whitespace) {
            return Err(
                Diagnostic::unsupported(format!("region {i} must name a link section"))
                    .expected_found("a section name such as `.dtcm`", format!("{:?}", r.section)),
            );
        }
        if r.align == 0 || !r.align.is_power_of_two() || r.align > 64 {
            return Err(Diagnostic::unsupported(format!(
                "the alignment of region `{}` must be a power of two of at most 64",
                r.section
            ))
            .expected_found("1, 2, 4, ..., 64", r.align.to_string()));
        }
        if regions[..i].iter().any(|q| q.section == r.section) {
            return Err(Diagnostic::unsupported(format!(
                "region `{}` is named twice",
                r.section
            )));
        }
    }
    Ok(())
}

/// Bytes of each buffer moved per invoke, per byte held (see the module docs).
fn heat(graph: &Graph, plan: &Plan) -> Vec<usize> {
    let mut uses = vec![0usize; graph.tensors.len()];
    for op in &graph.ops {
        for t in op.present_inputs().chain(op.outputs.iter().copied()) {
            uses[t.0] += 1;
        }
    }
    for &t in graph.inputs.iter().chain(&graph.outputs) {
        uses[t.0] += 1;
    }
    let mut group = uses.clone();
    for a in &plan.aliases {
        group[a.buffer.0] += uses[a.tensor.0];
    }
    plan.buffers
        .iter()
        .map(|b| match b.owner {
            BufferOwner::Tensor(t) => group[t.0],
            BufferOwner::Scratch(_) => 2,
        })
        .collect()
}

/// One region while buffers are assigned to it: its buffers and their offsets, and their
/// pieces placed so far, `(first, last, start, end)` in the region.
struct Filling {
    capacity: usize,
    align: usize,
    members: Vec<(usize, usize)>,
    pieces: Vec<(usize, usize, usize, usize)>,
    end: usize,
}

impl Filling {
    /// The lowest aligned offset where `b`'s pieces avoid the placed pieces live at their
    /// steps; `None` past the budget (`work` counts piece visits).
    fn first_fit(&self, b: &Buffer, work: &mut usize) -> Option<usize> {
        // The placed pieces `b` must avoid, as forbidden offset intervals for `b`'s start.
        let mut forbidden: Vec<(usize, usize)> = Vec::new();
        for p in &b.pieces {
            for &(f, l, s, e) in &self.pieces {
                *work += 1;
                if f <= p.last && p.first <= l {
                    // b.offset + p.offset in (s - p.size, e) clashes.
                    let lo = (s + 1).saturating_sub(p.offset + p.size);
                    let hi = e.saturating_sub(p.offset);
                    if lo < hi {
                        forbidden.push((lo, hi));
                    }
                }
            }
        }
        if *work > WORK_BUDGET {
            return None;
        }
        forbidden.sort_unstable();
        let mut at = 0usize;
        for (lo, hi) in forbidden {
            if at < lo {
                break;
            }
            at = at.max(hi.div_ceil(self.align) * self.align);
        }
        Some(at)
    }

    fn add(&mut self, i: usize, b: &Buffer, at: usize) {
        self.members.push((i, at));
        for p in &b.pieces {
            let s = at + p.offset;
            self.pieces.push((p.first, p.last, s, s + p.size));
        }
        self.end = self.end.max(at + b.size);
    }

    /// Whether the offset search places the region's buffers and `buffers[i]` together
    /// within its size (where the first fit did not); if so, takes that placement.
    fn replace_with(&mut self, buffers: &[Buffer], i: usize, placement: &PlacementOptions) -> bool {
        let mut ids: Vec<usize> = self.members.iter().map(|&(j, _)| j).collect();
        ids.push(i);
        let set: Vec<Buffer> = ids.iter().map(|&j| buffers[j].clone()).collect();
        let p = offsets::place(&set, self.align, placement);
        if p.arena_bytes > self.capacity {
            return false;
        }
        self.members.clear();
        self.pieces.clear();
        self.end = 0;
        for (&j, &o) in ids.iter().zip(&p.offsets) {
            self.add(j, &buffers[j], o);
        }
        true
    }
}

/// A buffer that fits no region: which one, and what the last region would have needed.
struct Misfit {
    buffer: usize,
    needed: usize,
}

/// One assignment pass over the buffers in `order`: per buffer its region and offset in it.
fn assign_pass(
    buffers: &[Buffer],
    order: &[usize],
    regions: &[(usize, usize)],
    placement: &PlacementOptions,
) -> std::result::Result<Vec<(usize, usize)>, Misfit> {
    let mut fills: Vec<Filling> = regions
        .iter()
        .map(|&(capacity, align)| Filling {
            capacity,
            align,
            members: Vec::new(),
            pieces: Vec::new(),
            end: 0,
        })
        .collect();
    let mut work = 0usize;
    let mut searches = 0usize;
    let last = regions.len() - 1;
    for &i in order {
        let b = &buffers[i];
        let mut placed = false;
        for (r, fill) in fills.iter_mut().enumerate() {
            // Past the budget: on top of the slowest region.
            let offset = if work > WORK_BUDGET {
                if r < last {
                    continue;
                }
                fill.end.div_ceil(fill.align) * fill.align
            } else {
                match fill.first_fit(b, &mut work) {
                    Some(o) => o,
                    None if r < last => continue,
                    None => fill.end.div_ceil(fill.align) * fill.align,
                }
            };
            if offset + b.size <= fill.capacity {
                fill.add(i, b, offset);
                placed = true;
                break;
            }
            // The first fit is no packing: the offset search over the region's buffers and
            // this one may hold them (a bounded number of times per pass).
            if work <= WORK_BUDGET && searches < SEARCHES {
                searches += 1;
                work += fill.pieces.len() + b.pieces.len();
                if fill.replace_with(buffers, i, placement) {
                    placed = true;
                    break;
                }
            }
            if r == last {
                return Err(Misfit {
                    buffer: i,
                    needed: offset + b.size,
                });
            }
        }
        debug_assert!(placed);
    }
    let mut at = vec![(0usize, 0usize); buffers.len()];
    for (r, fill) in fills.iter().enumerate() {
        for &(i, o) in &fill.members {
            at[i] = (r, o);
        }
    }
    Ok(at)
}

/// Splits `plan`'s buffers over `regions` (see the module docs); its offsets become places
/// in the regions laid one after another. `graph` is the graph planned, for heat and names.
pub fn assign(
    graph: &Graph,
    plan: &mut Plan,
    regions: &[Region],
    placement: &PlacementOptions,
) -> Result<()> {
    check(regions)?;
    if regions.is_empty() {
        return Ok(());
    }
    if !graph.subgraphs.is_empty() {
        return Err(Diagnostic::unsupported(
            "regions (a memory map) are not supported for models with control flow (IF, \
             WHILE, CALL_ONCE) yet: plan them as one arena (`link_section` places it)",
        ));
    }
    let buffers: Vec<Buffer> = plan
        .buffers
        .iter()
        .map(|b| Buffer {
            owner: b.owner,
            size: b.size,
            first: b.first,
            last: b.last,
            pieces: b.pieces.clone(),
        })
        .collect();
    let aligns: Vec<usize> = regions
        .iter()
        .map(|r| r.align.max(plan.alignment))
        .collect();
    let caps: Vec<(usize, usize)> = regions
        .iter()
        .zip(&aligns)
        .map(|(r, &a)| (r.size, a))
        .collect();
    let hot = heat(graph, plan);
    let mut by_heat: Vec<usize> = (0..buffers.len()).collect();
    by_heat.sort_by_key(|&i| {
        (
            std::cmp::Reverse(hot[i]),
            buffers[i].size,
            buffers[i].first,
            i,
        )
    });
    let mut by_size: Vec<usize> = (0..buffers.len()).collect();
    by_size.sort_by_key(|&i| (std::cmp::Reverse(buffers[i].size), buffers[i].first, i));
    let at = match assign_pass(&buffers, &by_heat, &caps, placement) {
        Ok(at) => at,
        Err(first) => match assign_pass(&buffers, &by_size, &caps, placement) {
            Ok(at) => at,
            // Last, the one-arena placement whole in the first region that holds it.
            Err(_) => match caps.iter().position(|&(size, align)| {
                size >= plan.arena_bytes && plan.buffers.iter().all(|b| b.offset % align == 0)
            }) {
                Some(r) => plan.buffers.iter().map(|b| (r, b.offset)).collect(),
                None => return Err(misfit(graph, plan, regions, &first)),
            },
        },
    };
    // Each region on its own by the offset search; kept where no larger.
    let mut local: Vec<usize> = at.iter().map(|&(_, o)| o).collect();
    let mut used = vec![0usize; regions.len()];
    for (r, &align) in aligns.iter().enumerate() {
        let members: Vec<usize> = (0..buffers.len()).filter(|&i| at[i].0 == r).collect();
        let mine: Vec<Buffer> = members.iter().map(|&i| buffers[i].clone()).collect();
        let greedy_end = members
            .iter()
            .map(|&i| at[i].1 + buffers[i].size)
            .max()
            .unwrap_or(0);
        let searched = offsets::place(&mine, align, placement);
        if searched.arena_bytes <= greedy_end {
            for (&i, &o) in members.iter().zip(&searched.offsets) {
                local[i] = o;
            }
            used[r] = searched.arena_bytes;
        } else {
            used[r] = greedy_end;
        }
    }
    // The regions one after another.
    let mut base = 0usize;
    let mut region_plans = Vec::with_capacity(regions.len());
    for ((r, &align), &bytes) in regions.iter().zip(&aligns).zip(&used) {
        base = base.div_ceil(align) * align;
        region_plans.push(RegionPlan {
            section: r.section.clone(),
            size: r.size,
            align,
            base,
            bytes,
        });
        base += bytes;
    }
    for (i, b) in plan.buffers.iter_mut().enumerate() {
        b.region = at[i].0;
        b.offset = region_plans[at[i].0].base + local[i];
    }
    plan.arena_bytes = plan
        .buffers
        .iter()
        .map(|b| b.offset + b.size)
        .max()
        .unwrap_or(0);
    plan.placement_optimal = plan.arena_bytes <= plan.aligned_bound_bytes;
    plan.strategy = "memory map: hottest buffers first into the fastest region";
    plan.regions = region_plans;
    Ok(())
}

/// The error for a buffer that fits no region.
fn misfit(graph: &Graph, plan: &Plan, regions: &[Region], m: &Misfit) -> Diagnostic {
    let b = &plan.buffers[m.buffer];
    let last = &regions[regions.len() - 1];
    let total: usize = regions.iter().map(|r| r.size).sum();
    let what = match b.owner {
        // The tensor is named in front of the message.
        BufferOwner::Tensor(_) => format!("this tensor ({} bytes)", b.size),
        BufferOwner::Scratch(op) => format!(
            "the scratch of op {} ({}, {} bytes)",
            op.0,
            graph.op(op).kind.name(),
            b.size
        ),
    };
    let others = if regions.len() > 1 {
        " (the faster regions are full at its steps)"
    } else {
        ""
    };
    let mut d = Diagnostic::new(
        ErrorKind::OverRamBudget,
        format!(
            "the model does not fit the memory map: region `{}` ({} bytes) cannot hold {what}{others}: it would need {} bytes there, {} over; all regions: {total} bytes, the plan has {} bytes live at its peak",
            last.section,
            last.size,
            m.needed,
            m.needed - last.size,
            plan.lower_bound_bytes
        ),
    )
    .expected_found(
        format!("at most {} bytes in region `{}`", last.size, last.section),
        format!("{} bytes", m.needed),
    );
    if let BufferOwner::Tensor(t) = b.owner {
        d = d.at_tensor(t.0, graph.tensor(t).name.clone());
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlanOptions;
    use crate::synthetic::{self, Flavor};

    fn with_regions(regions: &[(&str, usize)]) -> PlanOptions {
        PlanOptions {
            regions: regions.iter().map(|&(s, n)| Region::new(s, n)).collect(),
            ..PlanOptions::default()
        }
    }

    fn plan_of(g: &Graph, o: &PlanOptions) -> Result<Plan> {
        crate::plan(g, &synthetic::declared(g), o)
    }

    /// Every buffer in one region, inside its used bytes, within its size; the plan verified
    /// (`plan` runs the verifier).
    fn check_split(p: &Plan, sizes: &[usize]) {
        assert_eq!(p.regions.len(), sizes.len());
        for (r, &size) in p.regions.iter().zip(sizes) {
            assert!(r.bytes <= size, "{r:?}");
            assert_eq!(r.size, size);
        }
        for b in &p.buffers {
            let r = &p.regions[b.region];
            assert!(b.offset >= r.base && b.offset + b.size <= r.base + r.bytes);
        }
    }

    #[test]
    fn a_large_first_region_takes_everything() {
        let g = synthetic::dag(40, Flavor::InPlace, 3);
        let one = plan_of(&g, &PlanOptions::default()).unwrap();
        let p = plan_of(&g, &with_regions(&[(".dtcm", 1 << 20), (".sram", 1 << 20)])).unwrap();
        check_split(&p, &[1 << 20, 1 << 20]);
        assert!(p.buffers.iter().all(|b| b.region == 0));
        assert_eq!(p.regions[1].bytes, 0);
        // The offset search over all the buffers: the one arena's size.
        assert_eq!(p.regions[0].bytes, one.arena_bytes);
        assert_eq!(p.arena_bytes, one.arena_bytes);
        assert_eq!(p.order, one.order);
    }

    #[test]
    fn buffers_are_split_when_the_first_region_is_small() {
        for (seed, flavor) in [
            (1, Flavor::InPlace),
            (2, Flavor::Plain),
            (7, Flavor::InPlace),
        ] {
            let g = synthetic::dag(60, flavor, seed);
            let one = plan_of(&g, &PlanOptions::default()).unwrap();
            let fast = one.arena_bytes / 3;
            let sizes = [fast, one.arena_bytes * 2];
            let p = plan_of(
                &g,
                &with_regions(&[(".dtcm", sizes[0]), (".sram", sizes[1])]),
            )
            .unwrap();
            check_split(&p, &sizes);
            assert!(p.buffers.iter().any(|b| b.region == 0), "seed {seed}");
            assert!(p.buffers.iter().any(|b| b.region == 1), "seed {seed}");
            // Deterministic.
            let q = plan_of(
                &g,
                &with_regions(&[(".dtcm", sizes[0]), (".sram", sizes[1])]),
            )
            .unwrap();
            assert_eq!(p, q);
        }
    }

    #[test]
    fn the_hottest_buffers_go_first() {
        // A graph input read by many operators is the hottest buffer: it goes to the fast
        // region when that one holds it.
        let g = synthetic::fan_out(12, Flavor::Plain, 5);
        let input = g.inputs[0];
        let size = g.tensor(input).bytes();
        let p = plan_of(&g, &with_regions(&[(".dtcm", size), (".sram", 1 << 24)])).unwrap();
        check_split(&p, &[size, 1 << 24]);
        let b = p
            .buffers
            .iter()
            .find(|b| b.owner == BufferOwner::Tensor(input))
            .unwrap();
        assert_eq!(b.region, 0);
    }

    #[test]
    fn three_regions_and_alignment() {
        let g = synthetic::chain(30, Flavor::Plain, 11);
        let one = plan_of(&g, &PlanOptions::default()).unwrap();
        let a = one.arena_bytes / 4;
        let mut o = with_regions(&[(".itcm", a), (".dtcm", a), (".sram", one.arena_bytes * 2)]);
        o.regions[1].align = 64;
        let p = plan_of(&g, &o).unwrap();
        check_split(&p, &[a, a, one.arena_bytes * 2]);
        assert_eq!(p.regions[1].align, 64);
        assert_eq!(p.regions[1].base % 64, 0);
        for b in p.buffers.iter().filter(|b| b.region == 1) {
            assert_eq!((b.offset - p.regions[1].base) % 64, 0);
        }
    }

    #[test]
    fn a_map_too_small_names_the_region_and_the_numbers() {
        let g = synthetic::chain(20, Flavor::Plain, 4);
        let one = plan_of(&g, &PlanOptions::default()).unwrap();
        let small = one.lower_bound_bytes / 4;
        let e = plan_of(&g, &with_regions(&[(".dtcm", small), (".sram", small)])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OverRamBudget);
        let text = e.to_string();
        assert!(
            text.contains(&format!("region `.sram` ({small} bytes)")),
            "{text}"
        );
        assert!(text.contains("over"), "{text}");
        assert!(e.tensor.is_some(), "{text}");
    }

    #[test]
    fn bad_regions_are_refused() {
        let g = synthetic::chain(3, Flavor::Plain, 1);
        for (regions, needle) in [
            (vec![Region::new(" ", 10)], "must name a link section"),
            (
                vec![Region::new(".a", 10), Region::new(".a", 10)],
                "named twice",
            ),
            (
                vec![Region {
                    align: 3,
                    ..Region::new(".a", 1 << 20)
                }],
                "power of two",
            ),
        ] {
            let o = PlanOptions {
                regions,
                ..PlanOptions::default()
            };
            let e = plan_of(&g, &o).unwrap_err();
            assert!(e.to_string().contains(needle), "{e}");
        }
    }

    #[test]
    fn a_region_that_holds_the_one_arena_always_fits() {
        let graphs = [
            synthetic::chain(5000, Flavor::Plain, 1),
            synthetic::dag(200, Flavor::InPlace, 2),
            synthetic::fan_out(100, Flavor::Plain, 3),
            synthetic::branches(150, Flavor::InPlace, 4),
        ];
        for g in &graphs {
            let one = plan_of(g, &PlanOptions::default()).unwrap();
            for fast in [16, one.arena_bytes / 3] {
                let sizes = [fast, one.arena_bytes];
                let p = plan_of(
                    g,
                    &with_regions(&[(".fast", sizes[0]), (".slow", sizes[1])]),
                )
                .unwrap();
                check_split(&p, &sizes);
            }
        }
    }

    #[test]
    fn random_graphs_fit_or_fail_cleanly() {
        let mut fitted = 0;
        for seed in 0..12u64 {
            let flavor = if seed % 2 == 0 {
                Flavor::Plain
            } else {
                Flavor::InPlace
            };
            let g = synthetic::dag(30 + seed as usize * 5, flavor, seed);
            let one = plan_of(&g, &PlanOptions::default()).unwrap();
            for frac in [2, 3, 5] {
                let fast = one.arena_bytes / frac;
                let slow = one.arena_bytes - fast + one.arena_bytes / 4;
                match plan_of(&g, &with_regions(&[(".fast", fast), (".slow", slow)])) {
                    Ok(p) => {
                        check_split(&p, &[fast, slow]);
                        fitted += 1;
                    }
                    Err(e) => assert_eq!(e.kind, ErrorKind::OverRamBudget, "{e}"),
                }
            }
        }
        assert!(fitted >= 24, "{fitted} of 36 maps fitted");
    }
}
