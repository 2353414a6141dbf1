//! A host executor for lowered steps, for tests only (feature `exec`).
//!
//! It runs the same [`Step`]s the emitter renders, calling the same kernels with the same
//! parameters, with each tensor in its own aligned host buffer. Kernel tests use it to run
//! thousands of single-operator models against TFLM without generating code for each.
//! Generated firmware never contains it.

pub use crate::op::{Buffer, Io};
use crate::op::{Operands, Step};
use kiln_planner::ir::{Graph, TensorId};

/// Runs `steps` of `graph` with the given graph inputs; returns every tensor's bytes
/// (constants, inputs, and everything the steps wrote), indexed by tensor.
pub fn run(graph: &Graph, steps: &[Step], inputs: &[&[u8]]) -> Vec<Buffer> {
    let mut t = reset(graph);
    invoke(graph, steps, &mut t, inputs);
    t
}

/// Runs `steps` of `graph` once per input set, as consecutive `invoke()` calls after one
/// `reset()`: the variable tensors (operators' state) carry over from one to the next.
/// Returns every tensor's bytes after each invoke.
pub fn run_sequence(graph: &Graph, steps: &[Step], inputs: &[Vec<&[u8]>]) -> Vec<Vec<Buffer>> {
    let mut t = reset(graph);
    inputs
        .iter()
        .map(|xs| {
            invoke(graph, steps, &mut t, xs);
            t.clone()
        })
        .collect()
}

/// Every tensor's buffer as after `reset()`: constants, zeroed activations, variables filled
/// with their reset byte.
fn reset(graph: &Graph) -> Vec<Buffer> {
    let mut t: Vec<Buffer> = graph
        .tensors
        .iter()
        .map(|x| match x.data() {
            Some(d) => Buffer::from_bytes(d),
            None => Buffer::zeroed(x.bytes()),
        })
        .collect();
    for (i, x) in graph.tensors.iter().enumerate() {
        if x.kind == kiln_planner::ir::TensorKind::Variable {
            t[i].bytes_mut()
                .fill(crate::lower::reset_byte(graph, TensorId(i)));
        }
    }
    t
}

/// One `invoke()`: writes the graph inputs, then runs every step. A graph with a streamed
/// input (`kiln_planner::tiling::stream_input`) has no graph inputs: `inputs[0]` is then the
/// whole input, whose rows its KILN_READ_ROWS steps copy.
fn invoke(graph: &Graph, steps: &[Step], t: &mut [Buffer], inputs: &[&[u8]]) {
    for (&id, bytes) in graph.inputs.iter().zip(inputs) {
        t[id.0].bytes_mut().copy_from_slice(bytes);
    }
    for step in steps {
        let out_id = step.outputs[0];
        if let Some((first, rows)) = step.kernel.streamed_rows() {
            let out = t[out_id.0].bytes_mut();
            let row_bytes = out.len() / rows.max(1);
            let at = first * row_bytes;
            out.copy_from_slice(&inputs[0][at..at + out.len()]);
            continue;
        }
        let mut out = std::mem::take(&mut t[out_id.0]);
        let mut more: Vec<Buffer> = step.outputs[1..]
            .iter()
            .map(|o| std::mem::take(&mut t[o.0]))
            .collect();
        let mut states: Vec<Buffer> = step
            .states
            .iter()
            .map(|s| std::mem::take(&mut t[s.0]))
            .collect();
        run_step_outputs(step, t, &mut states, out.bytes_mut(), &mut more);
        for (s, b) in step.states.iter().zip(states) {
            t[s.0] = b;
        }
        for (o, b) in step.outputs[1..].iter().zip(more) {
            t[o.0] = b;
        }
        t[out_id.0] = out;
    }
}

/// Runs one lowered step: reads its inputs from `t` (indexed by tensor), updates `states`
/// (its variable tensors, in order) and writes `out`. Benchmarks time this call.
pub fn run_step(step: &Step, t: &[Buffer], states: &mut [Buffer], out: &mut [u8]) {
    run_step_outputs(step, t, states, out, &mut []);
}

/// [`run_step`] for a step with several outputs: `more` holds the outputs after the first.
pub fn run_step_outputs(
    step: &Step,
    t: &[Buffer],
    states: &mut [Buffer],
    out: &mut [u8],
    more: &mut [Buffer],
) {
    step.kernel.run(&mut Io {
        inputs: Operands {
            ops: &step.inputs,
            t,
            len: step.inputs.len(),
        },
        states,
        out,
        more,
    });
}
