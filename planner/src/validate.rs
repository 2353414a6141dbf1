//! Graph-level validation: data flow rules the flatbuffer format cannot express.
//!
//! Runs on every graph the reader builds. Operator-specific checks (shapes, dtypes a kernel
//! takes) belong to code generation, which knows the kernels.

use crate::diag::{Diagnostic, Result};
use crate::ir::{Graph, TensorKind};

/// Checks that data flows forward: every tensor an operator reads is a constant, a variable,
/// a graph input or the output of an earlier operator; every tensor is written at most once
/// and never written if it is a constant, a graph input or a variable; graph outputs are
/// produced.
pub fn validate(graph: &Graph) -> Result<()> {
    let n = graph.tensors.len();
    let mut available = vec![false; n];
    let mut produced_by: Vec<Option<usize>> = vec![None; n];
    for t in &graph.tensors {
        if !matches!(t.kind, TensorKind::Activation) {
            available[t.id.0] = true;
        }
    }
    for &i in &graph.inputs {
        let t = graph.tensor(i);
        if t.is_constant() {
            return Err(
                Diagnostic::malformed("a graph input is a constant").at_tensor(i.0, t.name.clone())
            );
        }
        available[i.0] = true;
    }
    for op in &graph.ops {
        let name = op.kind.name();
        for t in op.present_inputs() {
            if !available[t.0] {
                let tensor = graph.tensor(t);
                let why = match produced_by[t.0] {
                    Some(_) => "reads a tensor before the operator that writes it",
                    None => {
                        "reads a tensor that no operator produces and that is not a graph input"
                    }
                };
                return Err(Diagnostic::malformed(why)
                    .at_op(op.id.0, name)
                    .at_tensor(t.0, tensor.name.clone()));
            }
        }
        for &t in &op.outputs {
            let tensor = graph.tensor(t);
            let at = |d: Diagnostic| d.at_op(op.id.0, name).at_tensor(t.0, tensor.name.clone());
            if tensor.is_constant() {
                return Err(at(Diagnostic::malformed("writes a constant tensor")));
            }
            if graph.inputs.contains(&t) {
                return Err(at(Diagnostic::malformed("writes a graph input")));
            }
            // TFLM would keep such a tensor in its persistent memory; Kiln keeps variables
            // only as kernels' state (an input of theirs) and resource variables.
            if tensor.kind == TensorKind::Variable {
                return Err(at(Diagnostic::unsupported(
                    "writes a variable tensor (is_variable): Kiln supports variables as the \
                     state inputs of stateful kernels and as resource variables, not as an \
                     operator's output",
                )));
            }
            if let Some(prev) = produced_by[t.0] {
                return Err(at(Diagnostic::malformed(
                    "writes a tensor another operator also writes",
                )
                .expected_found("one producer", format!("also op {prev}"))));
            }
            produced_by[t.0] = Some(op.id.0);
            available[t.0] = true;
        }
    }
    for &o in &graph.outputs {
        if !available[o.0] {
            let t = graph.tensor(o);
            return Err(Diagnostic::malformed("a graph output is never produced")
                .at_tensor(o.0, t.name.clone()));
        }
    }
    Ok(())
}
