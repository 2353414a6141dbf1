//! The `kiln` command line: inspect how Kiln plans a model's memory.

use clap::{Parser, Subcommand};
use kiln_planner::{PlanOptions, plan, read_model, report};
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
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Plan {
            model,
            json,
            svg,
            align,
        } => {
            let shown = model.display().to_string();
            let result = std::fs::read(&model)
                .map_err(|e| format!("cannot read {shown}: {e}"))
                .and_then(|bytes| read_model(&bytes).map_err(|d| format!("{shown}: {d}")))
                .and_then(|graph| {
                    let p = plan(&graph, &PlanOptions { alignment: align })
                        .map_err(|d| format!("{shown}: {d}"))?;
                    Ok((graph, p))
                });
            let (graph, p) = match result {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let title = model
                .file_name()
                .map_or(shown.clone(), |n| n.to_string_lossy().into_owned());
            if let Some(path) = svg
                && let Err(e) = std::fs::write(&path, report::svg(&graph, &p, &title))
            {
                eprintln!("error: cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            if json {
                let r = report::json(&graph, &p);
                println!(
                    "{}",
                    serde_json::to_string_pretty(&r).expect("the report serializes")
                );
            } else {
                print!("{}", report::text(&graph, &p, &title));
            }
            ExitCode::SUCCESS
        }
    }
}
