//! Scheduling: the order in which operators run.
//!
//! Today Kiln runs operators in the model's stored order, which the reader has checked is a
//! valid topological order. The minimum-memory search over orders comes with the
//! min-memory issue and plugs in here.

use crate::ir::{Graph, OpId};

/// The model's stored order.
pub fn stored_order(graph: &Graph) -> Vec<OpId> {
    graph.ops.iter().map(|op| op.id).collect()
}
