//! Diagnostics: every way a model can fail to read, validate or plan, as data.
//!
//! A [`Diagnostic`] names what is wrong (its [`ErrorKind`]), where (operator index and name,
//! tensor index and name) and, when there is one, what was expected and what was found.
//! Front ends render it: the CLI prints it, the macro turns it into a spanned compile error.

use std::fmt;

/// What went wrong, broadly. Front ends may choose wording or exit codes from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The bytes are not a TensorFlow Lite flatbuffer at all.
    NotTflite,
    /// A TensorFlow Lite flatbuffer whose contents break the format's rules.
    Malformed,
    /// A well-formed model that uses something Kiln does not support.
    Unsupported,
    /// A plan failed the independent verifier: a bug in Kiln, never in the model.
    InvalidPlan,
    /// The model needs more RAM (arena + persistent state) than the user's budget.
    OverRamBudget,
    /// The model needs more flash (weights + constants) than the user's budget.
    OverFlashBudget,
}

/// An operator, as named in a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpRef {
    /// Index of the operator in the model's stored order.
    pub index: usize,
    /// Its TensorFlow Lite name, e.g. `CONV_2D`.
    pub name: String,
}

/// A tensor, as named in a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorRef {
    /// Index of the tensor in the subgraph.
    pub index: usize,
    /// The tensor's name in the model (may be empty).
    pub name: String,
}

/// One problem with a model or a plan. Its fields ([`DiagnosticData`]) are read through
/// `Deref`; it is one pointer wide so that `Result`s stay small.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic(Box<DiagnosticData>);

/// What a [`Diagnostic`] says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagnosticData {
    /// Broad category.
    pub kind: ErrorKind,
    /// What is wrong, in one sentence without a trailing period.
    pub message: String,
    /// The operator concerned, if any.
    pub op: Option<OpRef>,
    /// The tensor concerned, if any.
    pub tensor: Option<TensorRef>,
    /// What the format or Kiln expected, if that says more than the message.
    pub expected: Option<String>,
    /// What the model holds instead.
    pub found: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with a kind and a message and no location.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Diagnostic(Box::new(DiagnosticData {
            kind,
            message: message.into(),
            op: None,
            tensor: None,
            expected: None,
            found: None,
        }))
    }

    /// Shorthand for [`ErrorKind::Malformed`].
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Malformed, message)
    }

    /// Shorthand for [`ErrorKind::Unsupported`].
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }

    /// Names the operator concerned.
    pub fn at_op(mut self, index: usize, name: impl Into<String>) -> Self {
        self.op = Some(OpRef {
            index,
            name: name.into(),
        });
        self
    }

    /// Names the tensor concerned.
    pub fn at_tensor(mut self, index: usize, name: impl Into<String>) -> Self {
        self.tensor = Some(TensorRef {
            index,
            name: name.into(),
        });
        self
    }

    /// Says the diagnostic concerns the model's subgraph `index` (a control flow body; the
    /// main subgraph, 0, goes unsaid).
    pub fn in_subgraph(mut self, index: usize) -> Self {
        if index > 0 && !self.message.starts_with("in subgraph ") {
            self.message = format!("in subgraph {index}: {}", self.message);
        }
        self
    }

    /// Says what was expected and what was found.
    pub fn expected_found(mut self, expected: impl Into<String>, found: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self.found = Some(found.into());
        self
    }
}

impl std::ops::Deref for Diagnostic {
    type Target = DiagnosticData;
    fn deref(&self) -> &DiagnosticData {
        &self.0
    }
}

impl std::ops::DerefMut for Diagnostic {
    fn deref_mut(&mut self) -> &mut DiagnosticData {
        &mut self.0
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(op) = &self.op {
            write!(f, "op {} ({}): ", op.index, op.name)?;
        }
        if let Some(t) = &self.tensor {
            if t.name.is_empty() {
                write!(f, "tensor {}: ", t.index)?;
            } else {
                write!(f, "tensor {} `{}`: ", t.index, t.name)?;
            }
        }
        f.write_str(&self.message)?;
        match (&self.expected, &self.found) {
            (Some(e), Some(x)) => write!(f, " (expected {e}, found {x})"),
            (Some(e), None) => write!(f, " (expected {e})"),
            (None, Some(x)) => write!(f, " (found {x})"),
            (None, None) => Ok(()),
        }
    }
}

impl std::error::Error for Diagnostic {}

/// The result type of every planner stage.
pub type Result<T> = std::result::Result<T, Diagnostic>;
