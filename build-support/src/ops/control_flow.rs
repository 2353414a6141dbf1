//! IF, WHILE and CALL_ONCE (control flow over the model's other subgraphs) and VAR_HANDLE,
//! READ_VARIABLE and ASSIGN_VARIABLE (resource variables).
//!
//! These lower to [`Control`] steps, which the emitter writes itself (`emit::control`): a
//! call runs another subgraph's steps, planned on their own (`crate::control`) inside this
//! step's scratch. Here are the checks of the operands that need only this subgraph; the
//! checks against the called subgraphs' inputs and outputs are in `crate::control`.
//!
//! The reader appends to each of these operators the variable tensors of the resource
//! variables it (or a subgraph it calls) reads or writes: they become the step's `states`,
//! so that the planner keeps the operators touching a variable in their stored order.

use crate::op::{Control, Cx, Operand, Step, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, TensorId, TensorKind};

/// The operator's inputs split into operands (in order) and variable tensors (the reader's).
fn operands(cx: &Cx<'_>) -> Result<(Vec<Operand>, Vec<TensorId>)> {
    let mut inputs = Vec::new();
    let mut states = Vec::new();
    for (slot, t) in cx.op.inputs.iter().enumerate() {
        let Some(t) = *t else {
            return Err(unsupported(format!("input {slot} is missing")));
        };
        if cx.tensor(t).kind == TensorKind::Variable {
            states.push(t);
        } else if states.is_empty() {
            inputs.push(Operand::Tensor(t));
        } else {
            return Err(unsupported(
                "operands after the variables are not supported",
            ));
        }
    }
    Ok((inputs, states))
}

/// IF: input 0 is the condition, a BOOL scalar (or one-element tensor).
pub fn lower_if(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::If {
        then_subgraph,
        else_subgraph,
    } = cx.op.kind
    else {
        return Err(unsupported("IF options are missing"));
    };
    let (inputs, states) = operands(cx)?;
    let Some(cond) = inputs.first().and_then(|o| o.tensor()) else {
        return Err(unsupported("IF needs its condition as input 0")
            .expected_found("a BOOL condition, then the branch inputs", "0 inputs"));
    };
    let c = cx.tensor(cond);
    if c.dtype != DType::Bool || c.elements() != 1 {
        return Err(unsupported("IF's condition must be one BOOL")
            .at_tensor(cond.0, c.name.clone())
            .expected_found(
                "BOOL, 1 element",
                format!("{} of shape {:?}", c.dtype, c.shape),
            ));
    }
    Ok(cx.control_step(
        Control::If {
            then_subgraph,
            else_subgraph,
        },
        inputs,
        states,
        cx.op.outputs.clone(),
    ))
}

/// WHILE: inputs and outputs are the loop variables.
pub fn lower_while(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::While {
        cond_subgraph,
        body_subgraph,
    } = cx.op.kind
    else {
        return Err(unsupported("WHILE options are missing"));
    };
    let (inputs, states) = operands(cx)?;
    if inputs.len() != cx.op.outputs.len() {
        return Err(
            unsupported("WHILE must have as many outputs as loop variables (inputs)")
                .expected_found(
                    format!("{} outputs", inputs.len()),
                    format!("{} outputs", cx.op.outputs.len()),
                ),
        );
    }
    for (i, (o, &out)) in inputs.iter().zip(&cx.op.outputs).enumerate() {
        let t = o.tensor().expect("operands are present");
        let (a, b) = (cx.tensor(t), cx.tensor(out));
        if a.dtype != b.dtype || a.shape != b.shape {
            return Err(unsupported(format!(
                "WHILE's loop variable {i} changes its type or shape"
            ))
            .at_tensor(out.0, b.name.clone())
            .expected_found(
                format!("{} {:?}", a.dtype, a.shape),
                format!("{} {:?}", b.dtype, b.shape),
            ));
        }
    }
    Ok(cx.control_step(
        Control::While {
            cond: cond_subgraph,
            body: body_subgraph,
        },
        inputs,
        states,
        cx.op.outputs.clone(),
    ))
}

/// CALL_ONCE: no operands.
pub fn lower_call_once(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::CallOnce { init_subgraph } = cx.op.kind else {
        return Err(unsupported("CALL_ONCE options are missing"));
    };
    let (inputs, states) = operands(cx)?;
    if !inputs.is_empty() || !cx.op.outputs.is_empty() {
        return Err(
            unsupported("CALL_ONCE takes no inputs and has no outputs").expected_found(
                "0 inputs, 0 outputs",
                format!("{} inputs, {} outputs", inputs.len(), cx.op.outputs.len()),
            ),
        );
    }
    Ok(cx.control_step(
        Control::CallOnce {
            init: init_subgraph,
        },
        inputs,
        states,
        Vec::new(),
    ))
}

/// VAR_HANDLE: its output (a RESOURCE handle) has no bytes; nothing runs.
pub fn lower_var_handle(cx: &Cx<'_>) -> Result<Step> {
    let out = cx.output()?;
    if cx.dtype(out) != DType::Resource || !cx.op.inputs.is_empty() {
        return Err(unsupported(
            "VAR_HANDLE takes no inputs and makes one RESOURCE",
        ));
    }
    Ok(cx.control_step(Control::VarHandle, Vec::new(), Vec::new(), vec![out]))
}

/// READ_VARIABLE: handle (input 0), the variable (input 1, the reader's) -> its value.
pub fn lower_read_variable(cx: &Cx<'_>) -> Result<Step> {
    let out = cx.output()?;
    let var = cx.variable(1)?;
    let (v, o) = (cx.tensor(var), cx.tensor(out));
    if v.dtype != o.dtype || v.shape != o.shape {
        return Err(
            unsupported("the value read has another type or shape than the variable")
                .at_tensor(out.0, o.name.clone()),
        );
    }
    Ok(cx.control_step(Control::ReadVariable, Vec::new(), vec![var], vec![out]))
}

/// ASSIGN_VARIABLE: handle (input 0), value (input 1), the variable (input 2, the reader's).
pub fn lower_assign_variable(cx: &Cx<'_>) -> Result<Step> {
    let value = cx.input(1)?;
    let var = cx.variable(2)?;
    let (v, x) = (cx.tensor(var), cx.tensor(value));
    if v.dtype != x.dtype || v.shape != x.shape {
        return Err(
            unsupported("the value assigned has another type or shape than the variable")
                .at_tensor(value.0, x.name.clone()),
        );
    }
    Ok(cx.control_step(
        Control::AssignVariable,
        vec![Operand::Tensor(value)],
        vec![var],
        Vec::new(),
    ))
}
