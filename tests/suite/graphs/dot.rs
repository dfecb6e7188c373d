//! A captured graph rendered in Graphviz's dot language (`Graph::to_dot`,
//! CuPy's `graph.debug_dot_str()`): the driver's text on CUDA, the
//! simulator's equivalent there. The tests read its structure (nodes, edges,
//! kernel names), not its exact text.

use crate::common;

use common::{blocks, filled};
use gpu_kernels::{add_kernel, fill, saxpy};
use gpu_runtime::{launch, Graph, GraphNodeKind, Stream};
use std::collections::BTreeSet;

/// The nodes (`"graph_G_node_N"` followed by `[`) and edges (`a -> b`) of a
/// dot text as CUDA and the simulator write it.
fn structure(dot: &str) -> (BTreeSet<String>, Vec<(String, String)>) {
    let mut nodes = BTreeSet::new();
    let mut edges = Vec::new();
    let mut pending: Option<String> = None;
    let mut rest = dot;
    while let Some(start) = rest.find("\"graph_") {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let name = after[..end].to_string();
        let tail = after[end + 1..].trim_start();
        rest = &after[end + 1..];
        if !name.contains("_node_") {
            continue; // the cluster's label
        }
        if let Some(from) = pending.take() {
            edges.push((from, name));
        } else if tail.starts_with("->") {
            pending = Some(name);
        } else if tail.starts_with('[') {
            nodes.insert(name);
        }
    }
    (nodes, edges)
}

/// A fork and join: `fill` on the origin, then `saxpy` on a forked stream
/// and `add_kernel` on the origin, both after `fill`.
fn forked_graph() -> Graph {
    let (s, branch) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = 1024;
    let mut x = filled(n, 0.0, &s);
    let mut y = filled(n, 0.0, &s);
    let mut z = filled(n, 0.0, &s);
    s.capture(|s| {
        launch!(fill[blocks(n), 256, s](1.0f32, &mut x))?;
        branch.wait_event(&s.record()?)?;
        launch!(saxpy[blocks(n), 256, branch](2.0, &x, &x, &mut y))?;
        launch!(add_kernel[blocks(n), 256, s](&x, &x, &mut z))?;
        s.wait_event(&branch.record()?)
    })
    .unwrap()
}

#[test]
fn the_dot_of_a_forked_graph_has_its_nodes_and_edges() {
    let graph = forked_graph();
    let kinds = graph.node_kinds().unwrap();
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == GraphNodeKind::Kernel)
            .count(),
        3
    );
    for dot in [graph.to_dot().unwrap(), graph.to_dot_verbose().unwrap()] {
        assert!(dot.trim_start().starts_with("digraph"), "{dot}");
        let (nodes, edges) = structure(&dot);
        assert_eq!(nodes.len(), kinds.len(), "{dot}");
        // fill -> saxpy and fill -> add_kernel: the two kernels after the
        // fork depend on the first, not on each other.
        assert_eq!(edges.len(), 2, "{dot}");
        assert_eq!(edges[0].0, edges[1].0, "{dot}");
        assert_ne!(edges[0].1, edges[1].1, "{dot}");
        for (from, to) in &edges {
            assert!(nodes.contains(from) && nodes.contains(to), "{dot}");
        }
    }
}

#[test]
fn the_verbose_dot_names_each_kernel() {
    let graph = forked_graph();
    let dot = graph.to_dot_verbose().unwrap();
    for node in graph.kernel_nodes() {
        assert!(
            dot.contains(node.kernel_name()),
            "`{}` missing from:\n{dot}",
            node.kernel_name()
        );
    }
}

#[test]
fn the_dot_of_a_chain_has_one_edge_per_step() {
    let s = Stream::new().unwrap();
    let n = 256;
    let mut x = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| {
            for i in 0..4 {
                launch!(fill[blocks(n), 256, s](i as f32, &mut x))?;
            }
            Ok(())
        })
        .unwrap();
    let (nodes, edges) = structure(&graph.to_dot().unwrap());
    assert_eq!(nodes.len(), 4);
    assert_eq!(edges.len(), 3);
    // Each node but the first has exactly one incoming edge.
    let targets: BTreeSet<_> = edges.iter().map(|(_, to)| to.clone()).collect();
    assert_eq!(targets.len(), 3);
}
