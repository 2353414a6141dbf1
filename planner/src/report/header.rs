//! The reproducibility header: what makes a compiled model reproducible (the model's bytes,
//! the compiler, the options, the plan variant and the kernel functions called), filled in
//! by `kiln-build` and added to each report.

use serde::Serialize;

/// The options a model was compiled with, as the reproducibility header records them.
/// Budgets are the text the user gave: bytes, or a constant expression (`crate::BUDGET`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecordedOptions {
    pub ram_budget: Option<String>,
    pub flash_budget: Option<String>,
    /// Bytes of RAM the firmware needs besides Kiln, counted against `ram_budget`.
    pub reserved_ram: Option<String>,
    pub align: usize,
    /// `false`: planned as TFLM does (its greedy offsets).
    pub optimize: bool,
    pub reorder: bool,
    /// `true`, `false`, or the kinds of aliasing allowed (`views+in_place`).
    pub alias: String,
    pub preserve_all_tensors: bool,
    pub preserve_inputs: bool,
    pub link_section: Option<String>,
    /// The memory map, fastest first: `section:size[:align]` each, separated by spaces
    /// (absent without regions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regions: Option<String>,
    /// The tiling options that differ from the defaults, separated by spaces (`tile = false`
    /// as `off`, `max_extra_macs:N`, `min_ram`, `streamed_input`; absent with the defaults).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiling: Option<String>,
}

impl RecordedOptions {
    /// `name = value` pairs in a fixed order (`none` for an option not given).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "none".to_string());
        let mut pairs = vec![
            ("ram_budget", opt(&self.ram_budget)),
            ("flash_budget", opt(&self.flash_budget)),
            ("reserved_ram", opt(&self.reserved_ram)),
            ("align", self.align.to_string()),
            ("optimize", self.optimize.to_string()),
            ("reorder", self.reorder.to_string()),
            ("alias", self.alias.clone()),
            (
                "preserve_all_tensors",
                self.preserve_all_tensors.to_string(),
            ),
            ("preserve_inputs", self.preserve_inputs.to_string()),
            (
                "link_section",
                self.link_section
                    .as_ref()
                    .map_or_else(|| "none".to_string(), |s| format!("{s:?}")),
            ),
        ];
        // Recorded only when given, so that headers without a memory map or tiling options
        // stay as they were.
        if let Some(r) = &self.regions {
            pairs.push(("regions", r.clone()));
        }
        if let Some(t) = &self.tiling {
            pairs.push(("tiling", t.clone()));
        }
        pairs
    }

    /// The options on one line: `ram_budget = 98304, flash_budget = none, ...`.
    pub fn line(&self) -> String {
        self.pairs()
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One kernel function the generated code calls, and the operators that call it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelUse {
    /// `module::function` in `kiln::kernels`, e.g. `conv_2d::conv_2d_s8_fast`.
    pub kernel: String,
    /// Operator indices in the model, in execution order.
    pub ops: Vec<usize>,
}

/// The model's flash, as the flash budget counts it: the weights the kernels read as
/// stored and the constants Kiln prepares from the other buffers at build time (the code
/// of `invoke()` and its kernels is the compiler's, not counted here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Flash {
    /// The model's constant buffers the kernels read as they are stored (`WEIGHTS_BYTES`).
    pub weights: usize,
    /// The tables Kiln prepares at build time: requantization multipliers and shifts,
    /// folded biases, reordered or padded filters, lookup tables (they replace the model's
    /// buffers they are made from, so nothing is stored twice).
    pub prepared_constants: usize,
}

impl Flash {
    /// Weights and prepared constants: the figure the flash budget checks.
    pub fn total(&self) -> usize {
        self.weights + self.prepared_constants
    }

    /// `weights W B + prepared constants C B`.
    pub fn parts(&self) -> String {
        format!(
            "weights {} B + prepared constants {} B",
            self.weights, self.prepared_constants
        )
    }
}

/// What makes a compiled model reproducible: the model's bytes, the compiler, the options
/// and the choices made from them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Header {
    /// sha256 of the `.tflite` file, lowercase hex.
    pub model_sha256: String,
    /// The version of Kiln that compiled it.
    pub kiln_version: String,
    pub options: RecordedOptions,
    /// Alignment of the arena and of its offsets, in bytes.
    pub alignment: usize,
    /// Which of the plans (fastest first) was taken, in the emitter's words: the declared
    /// scratch, the lean scratch, the lean scratch with slow in-place convolutions, or the
    /// reference convolutions without scratch (`as given` for a plan handed in whole).
    pub plan_variant: String,
    /// The kernel functions called, each with its operators, in order of first call.
    pub kernel_variants: Vec<KernelUse>,
    /// The model's flash (filled in with the kernel functions; not one of the header's
    /// lines: the reports print it in their summaries).
    #[serde(skip)]
    pub flash: Flash,
}

impl Header {
    /// The header as `key: value` lines, for the text report and the generated docs.
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        vec![
            ("model sha256", self.model_sha256.clone()),
            ("kiln version", self.kiln_version.clone()),
            ("options", self.options.line()),
            ("alignment", format!("{} bytes", self.alignment)),
            ("plan variant", self.plan_variant.clone()),
            ("kernels", self.kernels_line()),
        ]
    }

    /// The kernels on one line: `conv_2d::conv_2d_s8_fast x14, ...`.
    pub fn kernels_line(&self) -> String {
        if self.kernel_variants.is_empty() {
            return "none".to_string();
        }
        self.kernel_variants
            .iter()
            .map(|k| format!("{} x{}", k.kernel, k.ops.len()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
