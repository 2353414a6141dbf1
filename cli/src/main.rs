//! The `kiln` command line: inspect how Kiln plans a model's memory.
//!
//! `kiln plan` runs the whole compile path of `include_model!` (read, plan, verify, lower,
//! emit, budgets) and reports the plan, so "does this model compile?" has one answer: it
//! exits non-zero with the macro's diagnostic when the macro would refuse the model.
//! `--layers` adds a row per layer (MACs, bytes moved, estimated Cortex-M4 and M55 instructions,
//! kernel functions), `--clock-mhz` an estimated time.

use clap::{Parser, Subcommand};
use kiln_build::{Budget, Options};
use kiln_planner::PlanOptions;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "kiln",
    version,
    about = "Kiln: TensorFlow Lite models compiled into firmware"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read a .tflite model, plan its tensor arena, verify the plan and report it.
    Plan {
        /// The model file.
        model: PathBuf,
        /// Print the plan as JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also draw the arena over time into this SVG file.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Alignment of buffer offsets in bytes (a power of two).
        #[arg(long, default_value_t = 16)]
        align: usize,
        /// Keep the model's stored operator order (no order search).
        #[arg(long)]
        no_reorder: bool,
        /// Order search without the exact dynamic programming (heuristics and beam only).
        #[arg(long)]
        no_exact_order: bool,
        /// Place offsets with TFLM's greedy rule only (no portfolio of assigners).
        #[arg(long)]
        no_portfolio: bool,
        /// No hill climbing on the placement order.
        #[arg(long)]
        no_hill_climb: bool,
        /// No branch and bound on offsets.
        #[arg(long)]
        no_exact_offsets: bool,
        /// No aliasing at all: a buffer per tensor.
        #[arg(long)]
        no_alias: bool,
        /// RESHAPE, SQUEEZE and EXPAND_DIMS copy instead of sharing their input's bytes.
        #[arg(long)]
        no_views: bool,
        /// No operator overwrites its input (elementwise, narrowing, convolutions).
        #[arg(long)]
        no_in_place: bool,
        /// CONCATENATION inputs are never placed as slices of the output.
        #[arg(long)]
        no_concat_slices: bool,
        /// Every optimisation off: the stored order placed by TFLM's greedy rule, as TFLM.
        #[arg(long)]
        unoptimised: bool,
        /// Fail if arena + persistent state (+ --reserved-ram) exceed this many bytes
        /// (`ram_budget`).
        #[arg(long, value_name = "BYTES")]
        ram_budget: Option<usize>,
        /// RAM the firmware needs besides Kiln (stack, buffers), counted against
        /// --ram-budget, which then is the device's whole RAM (`reserved_ram`).
        #[arg(long, value_name = "BYTES", requires = "ram_budget")]
        reserved_ram: Option<usize>,
        /// Fail if weights + prepared constants (the report's `flash bytes`) exceed this
        /// many bytes (`flash_budget`).
        #[arg(long, value_name = "BYTES")]
        flash_budget: Option<usize>,
        /// A RAM region of the memory map, `SECTION:BYTES[:ALIGN]` (e.g. `.dtcm:16384`);
        /// repeat it for each region, fastest first (`regions`).
        #[arg(long = "region", value_name = "SECTION:BYTES[:ALIGN]", value_parser = parse_region)]
        regions: Vec<kiln_build::Region>,
        /// Plan for the smallest arena Kiln can reach: the smallest plan, with the first
        /// operators run in strips of rows where that is smaller (within --max-extra-macs).
        #[arg(long)]
        min_ram: bool,
        /// Never run the first operators in strips of rows (patch-based execution).
        #[arg(long, conflicts_with = "min_ram")]
        no_tile: bool,
        /// The most recomputation a tiling may cost, in percent of the model's MACs.
        #[arg(long, value_name = "PERCENT", default_value_t = 20)]
        max_extra_macs: u32,
        /// Stream the input (`streamed_input`): the first operators run in strips of rows
        /// that read their rows of the input from a row source, never the whole input.
        #[arg(long, conflicts_with = "no_tile")]
        streamed_input: bool,
        /// Tile in strips of rows only, never in patches of rows and columns.
        #[arg(long, conflicts_with = "no_tile")]
        strips_only: bool,
        /// After the report, one row per layer: its MACs, bytes moved and kernel (the
        /// JSON always has them, under `layers`).
        #[arg(long)]
        layers: bool,
        /// With --layers: the estimated time of one invoke() at this clock (MHz), from the
        /// estimated instructions at one per cycle.
        #[arg(long, value_name = "MHZ", requires = "layers")]
        clock_mhz: Option<u32>,
    },
}

/// `--region .dtcm:16384` or `--region .sram:65536:32`.
fn parse_region(text: &str) -> Result<kiln_build::Region, String> {
    let usage = || format!("expected SECTION:BYTES[:ALIGN] such as `.dtcm:16384`, found `{text}`");
    let mut parts = text.split(':');
    let (Some(section), Some(bytes)) = (parts.next(), parts.next()) else {
        return Err(usage());
    };
    let number = |s: &str| s.trim().parse::<usize>().map_err(|_| usage());
    let mut region = kiln_build::Region::new(section, number(bytes)?);
    if let Some(a) = parts.next() {
        region.align = number(a)?;
    }
    if parts.next().is_some() || section.is_empty() || region.size == 0 {
        return Err(usage());
    }
    Ok(region)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Plan {
            model,
            json,
            svg,
            align,
            no_reorder,
            no_exact_order,
            no_portfolio,
            no_hill_climb,
            no_exact_offsets,
            no_alias,
            no_views,
            no_in_place,
            no_concat_slices,
            unoptimised,
            ram_budget,
            reserved_ram,
            flash_budget,
            regions,
            min_ram,
            no_tile,
            max_extra_macs,
            streamed_input,
            strips_only,
            layers,
            clock_mhz,
        } => {
            let mut options = if unoptimised {
                PlanOptions::unoptimised()
            } else {
                PlanOptions::default()
            };
            options.alignment = align;
            options.order.reorder &= !no_reorder;
            options.order.exact &= !no_exact_order;
            options.placement.portfolio &= !no_portfolio;
            if no_hill_climb {
                options.placement.hill_climb_iterations = 0;
            }
            if no_exact_offsets {
                options.placement.exact_budget = 0;
            }
            options.aliasing.views &= !(no_alias || no_views);
            options.aliasing.in_place &= !(no_alias || no_in_place);
            options.aliasing.depthwise &= !(no_alias || no_in_place);
            options.aliasing.pointwise &= !(no_alias || no_in_place);
            options.aliasing.concat &= !(no_alias || no_concat_slices);
            options.regions = regions;
            let shown = model.display().to_string();
            let options = Options {
                ram_budget: ram_budget.map(Budget::Bytes),
                reserved_ram: reserved_ram.map(Budget::Bytes),
                flash_budget: flash_budget.map(Budget::Bytes),
                plan: options,
                model_name: None,
                model_file: None,
                tiling: kiln_build::TilingOptions {
                    enabled: !no_tile && !unoptimised,
                    max_extra_macs_percent: max_extra_macs,
                    min_ram,
                    streamed_input,
                    columns: !strips_only,
                },
                search_notes: true,
                ..Options::default()
            };
            // The compile path of `include_model!`, lowering and emission included.
            let result = std::fs::read(&model)
                .map_err(|e| format!("cannot read {shown}: {e}"))
                .and_then(|bytes| {
                    kiln_build::compile_tokens(&bytes, &options)
                        .map_err(|d| format!("{shown}: {d}"))
                });
            let compiled = match result {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let title = model
                .file_name()
                .map_or(shown.clone(), |n| n.to_string_lossy().into_owned());
            if let Some(path) = svg
                && let Err(e) = std::fs::write(&path, compiled.report_svg(&title))
            {
                eprintln!("error: cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            if json {
                print!("{}", compiled.report_json());
            } else {
                print!("{}", compiled.report_text(&title));
                if layers {
                    let rows = kiln_planner::report::layers(
                        &compiled.graph,
                        &compiled.plan,
                        &compiled.header,
                    );
                    print!("{}", kiln_planner::report::layers_text(&rows, clock_mhz));
                }
            }
            ExitCode::SUCCESS
        }
    }
}
