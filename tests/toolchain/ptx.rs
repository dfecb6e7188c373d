//! The PTX that `cargo build` made for the three kernel crates (gpu-ops,
//! gpu-kernels, gpu-test-kernels): the entry points and their
//! parameters, and `ptxas` accepting each module for sm_70, sm_80 and sm_90.
//! Runs without a GPU; `scripts/setup.sh` installs the two `ptxas`.

use gpu_runtime::EmbeddedModule;
use std::path::PathBuf;
use std::process::Command;

/// Each kernel crate's package name and module.
const MODULES: [(&str, &EmbeddedModule); 3] = [
    ("gpu-ops", &gpu_ops::KERNEL_MODULE),
    ("gpu-kernels", &gpu_kernels::KERNEL_MODULE),
    ("gpu-test-kernels", &gpu_test_kernels::KERNEL_MODULE),
];

/// The PTX of the module with the entry point `name`.
fn ptx_with(name: &str) -> &'static str {
    let entry = format!(".visible .entry {name}(");
    MODULES
        .iter()
        .map(|(_, module)| module.ptx())
        .find(|ptx| ptx.contains(&entry))
        .unwrap_or_else(|| panic!("no entry point `{name}` in the PTX of any kernel crate"))
}

/// `ptx` from entry point `name`'s declaration on.
fn entry_text<'p>(ptx: &'p str, name: &str) -> &'p str {
    let start = ptx
        .find(&format!(".visible .entry {name}("))
        .unwrap_or_else(|| panic!("no entry point `{name}` in the PTX"));
    &ptx[start..]
}

/// The body of entry point `name` in `ptx`.
fn body_in<'p>(ptx: &'p str, name: &str) -> &'p str {
    let text = entry_text(ptx, name);
    &text[..text.find("\n}").expect("the entry's body closes")]
}

fn entry_params(name: &str) -> Vec<String> {
    let text = entry_text(ptx_with(name), name);
    let end = text.find(')').expect("parameter list closes");
    text[..end]
        .lines()
        .skip(1)
        .map(|l| l.trim().trim_end_matches(',').to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn every_kernel_is_an_entry_point_and_nothing_else_is() {
    let kernels: [(&str, &[&str]); 3] = [
        (
            "gpu-ops",
            &[
                "elementwise_f32",
                "elementwise_f64",
                "elementwise_i32",
                "elementwise_i64",
                "elementwise_u32",
                "elementwise_u64",
                "scan_tiles_MaxF32",
                "scan_tiles_MaxF32Inclusive",
                "scan_tiles_MaxI32",
                "scan_tiles_MaxI32Inclusive",
                "scan_tiles_MaxU32",
                "scan_tiles_MaxU32Inclusive",
                "scan_tiles_MinF32",
                "scan_tiles_MinF32Inclusive",
                "scan_tiles_MinI32",
                "scan_tiles_MinI32Inclusive",
                "scan_tiles_MinU32",
                "scan_tiles_MinU32Inclusive",
                "scan_tiles_SumF32",
                "scan_tiles_SumF32Inclusive",
                "scan_tiles_SumI32",
                "scan_tiles_SumI32Inclusive",
                "scan_tiles_SumU32",
                "scan_tiles_SumU32Inclusive",
                "sum_partials_f32",
                "sum_partials_f64",
                "sum_partials_i16",
                "sum_partials_i32",
                "sum_partials_i64",
                "sum_partials_i8",
                "sum_partials_u16",
                "sum_partials_u32",
                "sum_partials_u64",
                "sum_partials_u8",
                "init_xoroshiro128p_states",
                // matmul: its packing, the SGEMMs, the mma.sync GEMM and
                // the wgmma GEMM (sm_90a's module).
                "pack_k_major_bf16",
                "pack_k_major_f16",
                "pack_k_major_f32",
                "pad_rows_k_major_bf16",
                "pad_rows_k_major_f16",
                "transpose_k_major_bf16",
                "transpose_k_major_f16",
                "transpose_k_major_f32",
                "sgemm_4x4",
                "sgemm_8x8",
                "gemm_bf16_mma_sync",
                "gemm_f16_mma_sync",
                "gemm_bf16_wgmma",
                "gemm_f16_wgmma",
                "gemm_bf16_wgmma_tma",
                "gemm_f16_wgmma_tma",
                "gemm_bf16_wgmma_tma_kn",
                "gemm_f16_wgmma_tma_kn",
            ],
        ),
        (
            "gpu-kernels",
            &[
                "add_kernel",
                "busy",
                "fill_f32",
                "fill_f64",
                "fill_i32",
                "fill_u32",
                "fill_u64",
                "saxpy",
                "smooth_and_count",
                // The tensor-core example's (sm_80).
                "mma_bf16_warp_tiles",
                // #[vectorize] functions' kernels, and the Numba ports'.
                "black_scholes_call_elementwise",
                "black_scholes_put_elementwise",
                "count_inside",
                "jacobi_relax_core",
                "largest_reduce",
                "total_reduce",
            ],
        ),
        (
            "gpu-test-kernels",
            &[
                "add_unchecked",
                "active_after_return",
                "affine",
                "affine_compositions",
                "alignment_of_lines",
                "assert_below",
                "assert_lane_is_not",
                "bf16_arithmetic",
                "alias_by_cfg",
                "atomics_f32",
                "atomics_f64",
                "atomics_i32",
                "atomics_u32",
                "atomics_u64",
                "block_scan",
                "claim_in_a_branch",
                "grid_rounds",
                "grid_sync_skipped_by_a_block",
                "grid_total",
                "claim_twice",
                // features/cluster.rs (sm_90a's module).
                "cluster_counts",
                "cluster_out_of_step",
                "cluster_rank_out_of_range",
                "cluster_ring_2",
                "cluster_ring_4",
                "cluster_ring_8",
                "cluster_square",
                "not_a_cluster_kernel",
                "attribute_by_cfg_attr",
                "block_by_cfg",
                "block_collectives_f32",
                "block_collectives_f64",
                "block_collectives_i32",
                "block_collectives_i64",
                "block_collectives_u32",
                "block_collectives_u64",
                "block_of_a_use",
                "block_of_self",
                "block_of_super",
                "block_sum_shuffles",
                "block_sum_static",
                "block_votes",
                "busy_loop",
                "unaligned_runs_bf16",
                "unaligned_runs_f32",
                "unaligned_runs_u16",
                "unaligned_runs_u8",
                "coordinates",
                "coordinates_2d",
                "convolve5",
                "copy_of_super_Elem",
                "count_owners_3d",
                "count_owners_rows4",
                "divergent_barrier",
                "dynamic_alignment",
                "element_grown_by_cfg",
                "empty",
                "global_block_results",
                "global_same_block",
                "f16_arithmetic",
                "half_conversions",
                "half_pairs",
                "field_type_by_cfg",
                "histogram",
                "histogram256",
                "instance_by_cfg_Real",
                "jacobi5",
                "keep_the_witness_maker",
                "large_local_array",
                "launch_shape",
                "layout_differs",
                "length_bound_by_cfg_attr",
                "math_f32",
                "math_f64",
                "matmul_tiled",
                "matrix_read",
                "named_like_generated",
                "mma_in_a_divergent_branch",
                "mma_shared_bf16",
                "mma_shared_trans_bf16",
                "mma_stage_steps_misuse",
                "mma_tile_bf16",
                "mma_tile_f16",
                "mma_tile_tf32",
                "mma_tiled_bf16",
                "mma_with_overlapping_rows",
                "ring_made_differently",
                "ring_misuse",
                "ring_rows",
                "matrix_misuse",
                "matrix_tile",
                "mbarrier_count",
                "mbarrier_divergent_init",
                "mbarrier_extra_arrival",
                "mbarrier_init_again",
                "mbarrier_phases",
                "mbarrier_two",
                "tma_boxes",
                "tma_boxes_swizzled",
                "tma_box_f32",
                "tma_tile_in_a_loop",
                "tma_tile_nested",
                "tma_two_tiles_crossed",
                // features/tma_multicast.rs (sm_90a's module).
                "tma_multicast_2",
                "tma_multicast_4",
                "tma_multicast_out_of_step",
                "tma_multicast_peer_panics",
                "tma_box_1d",
                "tma_box_3d",
                "tma_box_3d_swizzled",
                "tma_box_5d",
                "tma_scale_3d",
                "tma_scale_2d_swizzled",
                "tma_store_thrice",
                "wgmma_bf16_128b_n64",
                "wgmma_bf16_128b_n128",
                "wgmma_bf16_128b_n256",
                "wgmma_bf16_64b_n128",
                "wgmma_bf16_32b_n64",
                "wgmma_f16_128b_n128",
                "wgmma_bf16_128b_n64_mn",
                "wgmma_bf16_128b_n256_mn",
                "wgmma_bf16_64b_n128_mn",
                "wgmma_bf16_32b_n64_mn",
                "wgmma_f16_128b_n128_mn",
                "wgmma_in_a_divergent_branch",
                "wgmma_warps_disagree",
                "wgmma_roles",
                "wgmma_tile_of_a_stage",
                "wgmma_carried_across_waits",
                "needs_any_arch",
                "needs_sm_80",
                "needs_sm_90a",
                "one_dimensional_witness",
                "panic_at",
                "panic_if",
                "phase_and_threads_barriers",
                "phase_token_taken_by_another_thread",
                "print_divergent",
                "print_values",
                "read_at",
                "read_taps_after",
                "reverse_in_blocks",
                "reverse_tiles_16",
                "reverse_tiles_32",
                "scale_float4",
                "select",
                "shadowed_names",
                "shaped_fill",
                "shared_2d_transpose",
                "shared_counter",
                "shared_counters",
                "shared_handle_kept_by_a_later_block",
                "shared_neighbour",
                "shared_read_at",
                "shared_write_write",
                "shuffle_after_exit",
                "shuffles_by",
                "sleep_until_flag",
                "spin_on_flag",
                "stencil1d_r4",
                "swap_pairs_f32",
                "swap_pairs_u64",
                "take_turns",
                "transpose_32x32",
                "transpose_32x8",
                "transposed_row_sums",
                "use_a_kept_witness_maker",
                "warp_call_with_mask",
                "warp_collectives_f32",
                "warp_collectives_f64",
                "warp_collectives_i32",
                "warp_collectives_i64",
                "warp_collectives_u32",
                "warp_collectives_u64",
                "warp_handoff",
                "vote_beside_sync_threads",
                "warp_matching",
                "warp_order",
                "warp_shuffles",
                "witness_from_helper",
                "witness_kept_for_the_next_launch",
                "witness_shared_by_blocks",
                "witness_shared_by_threads",
                "zero_sized",
                // ownership.rs
                "block_sums_by_leader",
                "warp_sums_by_lane_0",
                "warp_sums_by_lane_31",
                "block_sums_by_warp_slots",
                "broadcast_by_block_leader",
                "count_grid_stride",
                "count_blocked_1",
                "count_blocked_3",
                "count_blocked_4",
                "count_blocked_16",
                "count_striped_1",
                "count_striped_3",
                "count_striped_4",
                "count_leaders",
                "blocked_runs_of_16",
                "mark_rows_1",
                "mark_rows_4",
                "mark_tiles_8x8",
                "mark_tiles_8x8_any_block",
                "halo_sum5",
                "transpose_by_tiles",
                "ping_pong",
                "ping_pong_alternating",
                "leaders_in_divergent_code",
                "halo_in_any_block",
                "shared_tiles_in_any_block",
                "warp_slots_too_few",
                "leader_shared_by_threads",
                "items_shared_by_threads",
                "bounded_copy",
                "taps_unrolled",
                "window_sum_unrolled_by_4",
                "softmax_rows_vec4",
                "scan_tiles_local",
                "scan_tile_sums",
                "add_tile_offsets",
                "softmax_rows_strided",
                "conv2d_5x5",
                "layer_norm_rows_256x17",
                "layer_norm_rows_128x8",
                // #[vectorize] functions' kernels, and the random draws.
                "difference_elementwise",
                "hostile_names_elementwise",
                "larger_reduce",
                "lerp_elementwise",
                "norm_squared_elementwise",
                "private_square_elementwise",
                "shifted_elementwise",
                "sum_reduce_reduce",
                "vector_add_by_hand",
                "vector_add_elementwise",
                "wrapping_sum_reduce",
                "xoroshiro_draws",
            ],
        ),
    ];
    // Each kernel has a general entry point and one for one-dimensional
    // launches; those that call `thread_index_2d` one for launches whose z
    // extents are 1.
    let two_dimensional = [
        "cluster_square",
        "conv2d_5x5",
        "coordinates_2d",
        "count_owners_rows4",
        "jacobi5",
        "jacobi_relax_core",
        "matmul_tiled",
        "matrix_read",
        "shaped_fill",
        "shared_2d_transpose",
        "transpose_32x32",
        "transpose_32x8",
        "transposed_row_sums",
        "transpose_k_major_bf16",
        "transpose_k_major_f16",
        "transpose_k_major_f32",
        "witness_shared_by_blocks",
    ];
    for ((crate_name, module), (listed, kernels)) in MODULES.iter().zip(kernels) {
        assert_eq!(*crate_name, listed);
        let mut entries = module.entry_points();
        entries.sort();
        let mut expected: Vec<String> = kernels
            .iter()
            .flat_map(|k| [k.to_string(), format!("{k}__1d")])
            .chain(
                two_dimensional
                    .iter()
                    .filter(|k| kernels.contains(k))
                    .map(|k| format!("{k}__2d")),
            )
            .collect();
        expected.sort();
        assert_eq!(entries, expected, "the entry points of {crate_name}");
        // Helper functions are internal: no other visible functions.
        assert!(
            !module.ptx().contains(".visible .func"),
            "{crate_name} has a visible function"
        );
    }
}

/// Each kernel instance keeps its interface description in the PTX, which
/// the runtime compares with the host's before the first launch
/// (`gpu_device::__private::interface`): one global per instance, named for
/// its general entry point, and no other visible global but those the
/// runtime sets (`gpu_builder::HOST_SET_GLOBALS`).
#[test]
fn every_instance_keeps_its_interface_description() {
    // In the module of each architecture (an instance's description is
    // where its entry points are).
    let variants = MODULES.iter().flat_map(|(crate_name, module)| {
        module
            .ptx_variants()
            .into_iter()
            .map(move |(_, ptx)| (*crate_name, ptx))
    });
    for (crate_name, ptx) in variants {
        let instances: Vec<&str> = ptx
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
            .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
            .filter(|e| !e.ends_with("__1d") && !e.ends_with("__2d"))
            .collect();
        for entry in &instances {
            assert!(
                ptx.contains(&format!(".visible .global .align 1 .b8 __gpu_abi${entry}[")),
                "no interface description of `{entry}` in {crate_name}"
            );
        }
        assert_eq!(
            ptx.matches(" __gpu_abi$").count(),
            instances.len(),
            "the descriptions of {crate_name}"
        );
        // Besides the descriptions, only the globals the runtime sets stay
        // visible (the assertion record, constant arrays).
        let set_by_the_runtime = ptx
            .lines()
            .filter(|l| l.starts_with(".visible .global"))
            .filter(|l| {
                gpu_builder::HOST_SET_GLOBALS
                    .iter()
                    .any(|g| match g.strip_suffix('*') {
                        Some(prefix) => l.contains(&format!(" {prefix}")),
                        None => l.contains(&format!(" {g}")) || l.contains(&format!(" {g}[")),
                    })
            })
            .count();
        assert_eq!(
            ptx.matches(".visible .global").count() - set_by_the_runtime,
            instances.len(),
            "the visible globals of {crate_name}"
        );
    }
}

#[test]
fn slices_pass_as_pointer_and_length_and_values_by_value() {
    let add = entry_params("add_kernel");
    assert_eq!(add.len(), 6, "{add:?}");
    for (i, p) in add.iter().enumerate() {
        assert!(
            p.starts_with(".param .u64"),
            "parameter {i} of add_kernel: {p}"
        );
    }
    let saxpy = entry_params("saxpy");
    assert!(saxpy[0].starts_with(".param .f32"), "{saxpy:?}");
    assert_eq!(saxpy.len(), 7);
    // The #[repr(C)] struct Affine { f32, f32, bool } travels as 12 aligned bytes.
    let affine = entry_params("affine");
    assert!(
        affine[0].contains(".align 4 .b8") && affine[0].ends_with("[12]"),
        "{affine:?}"
    );
    assert!(entry_params("empty").is_empty());
    assert_eq!(entry_params("add_kernel__1d").len(), 6);
    let fill = entry_params("fill_f64");
    assert!(fill[0].starts_with(".param .f64"), "{fill:?}");
}

/// The body of entry point `name` in the PTX.
fn entry_body(name: &str) -> &'static str {
    body_in(ptx_with(name), name)
}

#[test]
fn shared_memory_is_in_the_shared_state_space() {
    let ptx = gpu_test_kernels::KERNEL_MODULE.ptx();
    assert!(ptx.contains(".extern .shared .align 16 .b8 __gpu_shared_dynamic[];"));
    assert!(
        ptx.contains(".shared .align 16 .b8 __gpu_shared_gpu_test_kernels_"),
        "static shared arrays are .shared variables"
    );
    // Shared accesses are ld.shared/st.shared/atom.shared, never generic.
    let matmul = entry_body("matmul_tiled");
    assert_eq!(matmul.matches("ld.shared.b32").count(), 32, "{matmul}");
    assert_eq!(matmul.matches("st.shared.b32").count(), 2, "{matmul}");
    assert!(
        !matmul.contains("ld.b32") && !matmul.contains("st.b32"),
        "{matmul}"
    );
    assert!(entry_body("histogram256").contains("atom.shared.add.u32"));
    assert!(entry_body("histogram256").contains("atom.global.add.u32"));
    let reverse = entry_body("reverse_in_blocks__1d");
    assert!(
        reverse.contains("st.shared") && reverse.contains("ld.shared"),
        "{reverse}"
    );
}

#[test]
fn barriers_count_threads_and_phases_use_their_own_barrier() {
    // `bar.sync` is `barrier.sync.aligned`, undefined in divergent code.
    for (crate_name, module) in MODULES {
        assert!(
            !module.ptx().contains("bar.sync"),
            "{crate_name}: an aligned barrier is emitted"
        );
    }
    assert!(entry_body("divergent_barrier__1d").contains("barrier.sync \t0;"));
    let matmul = entry_body("matmul_tiled");
    assert_eq!(matmul.matches("barrier.sync 	1;").count(), 2, "{matmul}");
}

#[test]
fn block_votes_reduce_on_a_barrier_of_their_own() {
    // The form without `.aligned` (defined in divergent code), on barrier
    // 2: never paired with `sync_threads()` (0) or a phase change (1).
    let votes = entry_body("block_votes__1d");
    // The count, then the count of evens in each branch of an `if`.
    assert_eq!(votes.matches("barrier.red.popc.u32").count(), 3, "{votes}");
    assert!(votes.contains("barrier.red.and.pred"), "{votes}");
    assert!(votes.contains("barrier.red.or.pred"), "{votes}");
    for line in votes.lines().filter(|l| l.contains("barrier.red")) {
        assert!(line.contains(", 2, "), "{line}");
    }
    let matching = entry_body("warp_matching__1d");
    for instruction in [
        "match.any.sync.b32",
        "match.any.sync.b64",
        "match.all.sync.b64",
        "activemask.b32",
    ] {
        assert!(matching.contains(instruction), "{instruction}: {matching}");
    }
    assert!(entry_body("sleep_until_flag__1d").contains("nanosleep.u32"));
    // `activemask` needs PTX 6.2 and `nanosleep` 6.3, above LLVM's 6.0 for
    // sm_70: the builder asks for 6.3.
    for (crate_name, module) in MODULES {
        assert!(
            module.ptx().contains(".version 6.3\n.target sm_70"),
            "{crate_name}"
        );
    }
}

#[test]
fn a_failed_assertion_writes_the_record_the_runtime_sets() {
    // Every module keeps the global the runtime writes the record's address
    // into: visible (the driver finds it by name) and not folded to 0.
    let symbol = gpu_device::assert::RECORD_SYMBOL;
    for (crate_name, module) in MODULES {
        assert!(
            module
                .ptx()
                .contains(&format!(".visible .global .align 8 .b8 {symbol}[8];")),
            "{crate_name}"
        );
    }
    let ptx = gpu_test_kernels::KERNEL_MODULE.ptx();
    let fail = ptx
        .split(".func ")
        .find(|f| f.contains("6assert4fail") && f.contains(&format!("[{symbol}]")))
        .expect("the assertion's failure path reads the record's address");
    // Claimed with a system-scope compare-and-swap (the record is host
    // memory), written, fenced for the host, then the trap.
    for step in ["atom.relaxed.sys.cas.b32", "membar.sys", "trap"] {
        assert!(fail.contains(step), "{step}:\n{fail}");
    }
}

#[test]
fn constants_are_in_the_const_space_and_read_with_ld_const() {
    let ptx = gpu_test_kernels::KERNEL_MODULE.ptx();
    // Visible, so the runtime finds them by name (`cuModuleGetGlobal`).
    for global in [
        ".visible .const .align 4 .b8 __gpu_const_gpu_test_kernels_TAPS[20];",
        ".visible .const .align 8 .b8 __gpu_const_gpu_test_kernels_AFFINE[16];",
    ] {
        assert!(ptx.contains(global), "{global}");
    }
    let convolve = entry_body("convolve5__1d");
    assert_eq!(convolve.matches("ld.const.b32").count(), 5, "{convolve}");
    assert_eq!(convolve.matches("ld.const.b64").count(), 2, "{convolve}");
    // An index known only at run time: still the constant space.
    assert!(entry_body("read_taps_after__1d").contains("ld.const.b32"));
}

#[test]
fn half_precision_uses_the_gpus_instructions() {
    let f16 = entry_body("f16_arithmetic__1d");
    for instruction in [
        "add.rn.f16",
        "sub.rn.f16",
        "mul.rn.f16",
        "fma.rn.f16",
        "cvt.rn.f16.f32",
        "cvt.f32.f16",
    ] {
        assert!(f16.contains(instruction), "{instruction}:\n{f16}");
    }
    let pairs = entry_body("half_pairs__1d");
    for instruction in ["add.rn.f16x2", "mul.rn.f16x2", "fma.rn.f16x2"] {
        assert!(pairs.contains(instruction), "{instruction}:\n{pairs}");
    }
    assert!(entry_body("half_conversions__1d").contains("cvt.rn.f16.f64"));
    // bf16 instructions are sm_80's: below it (this build's sm_70), bf16 is
    // computed in software, as on the simulator.
    assert!(!entry_body("bf16_arithmetic__1d").contains(".bf16"));
}

#[test]
fn line_tables_name_the_rust_source_lines() {
    // gpu-test-kernels is built with line tables (its build.rs), the
    // others without; the runtime reads the first line to ask the JIT
    // compiler to keep them (the literal is the runtime's copy of it).
    let ptx = gpu_test_kernels::KERNEL_MODULE.ptx();
    let marker = format!("{}line-tables\n", gpu_builder::DEBUG_MARKER);
    assert!(ptx.starts_with(&marker), "{}", &ptx[..200]);
    assert_eq!(marker, "// gpu-builder debug-info: line-tables\n");
    let has_loc = |ptx: &str| ptx.lines().any(|l| l.trim_start().starts_with(".loc\t"));
    assert!(!has_loc(gpu_ops::KERNEL_MODULE.ptx()));
    assert!(has_loc(ptx));
    // The kernels' own file, and a `.loc` naming the line of a statement
    // in it: `read_at`'s read, in faults.rs (where compute-sanitizer's
    // report of `examples/sanitizer_names_rust_lines.rs` points).
    let faults = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/src/faults.rs");
    let file_line = ptx
        .lines()
        .find(|l| l.trim_start().starts_with(".file") && l.contains(faults.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no .file for {}", faults.display()));
    let number = file_line.split_whitespace().nth(1).unwrap();
    let source = std::fs::read_to_string(&faults).unwrap();
    let read_line = source
        .lines()
        .position(|l| l.contains("out.set(thread_index(), x[index]);"))
        .expect("read_at's read")
        + 1;
    let body = entry_body("read_at__1d");
    assert!(
        body.lines().any(|l| l
            .trim_start()
            .starts_with(&format!(".loc\t{number} {read_line} "))),
        "no .loc for faults.rs:{read_line} in:\n{body}"
    );
    // Only the line tables: no DWARF sections, no `debug` target (which
    // CUDA 12's assembler rejects).
    assert!(!ptx.contains(".section"));
    assert!(ptx.contains(".target sm_70\n"));
}

#[test]
fn multiplies_and_adds_are_fused() {
    let matmul = entry_body("matmul_tiled");
    assert_eq!(matmul.matches("fma.rn.f32").count(), 16, "{matmul}");
    // The general entry of a kernel using `thread_index()` is launched only
    // in 2-D and 3-D launches, where it fails at once: look at the 1-D one.
    assert_eq!(
        entry_body("stencil1d_r4__1d").matches("fma.rn.f32").count(),
        8
    );
}

#[test]
fn inputs_load_through_the_read_only_path_and_nothing_else_does() {
    // `&[T]` inputs are `noalias readonly` parameters (gpu-builder), so their
    // loads are `ld.global.nc`. (The general entry of a kernel calling
    // `thread_index()` only fails: look at the 1-D one.)
    let add = entry_body("add_kernel__1d");
    assert_eq!(add.matches("ld.global.nc.b32").count(), 2, "{add}");
    assert!(add.contains("st.global.b32"), "{add}");
    // In every entry point (in the 1-D one, which the declared 2-D block
    // leaves unused, y = 0: only boundary points).
    for (entry, loads) in [("jacobi5", 5), ("jacobi5__1d", 1), ("jacobi5__2d", 5)] {
        let jacobi = entry_body(entry);
        assert_eq!(
            jacobi.matches("ld.global.nc.b32").count(),
            loads,
            "{jacobi}"
        );
        assert!(!jacobi.contains("ld.global.b32"), "{jacobi}");
    }
    let transpose = entry_body("transpose_32x32__2d");
    assert_eq!(transpose.matches("ld.global.nc").count(), 1, "{transpose}");
    // Nothing else goes through the non-coherent path: atomics and outputs
    // are written during the launch. `spin_on_flag` reads an atomic flag that
    // another thread sets, and has no input.
    let spin = entry_body("spin_on_flag__1d");
    assert!(spin.contains("ld.relaxed.sys.global.b32"), "{spin}");
    assert!(!spin.contains(".nc"), "{spin}");
    for entry in ["take_turns__1d", "coordinates_2d__2d", "histogram__1d"] {
        let body = entry_body(entry);
        let nc = body.matches("ld.global.nc").count();
        // `histogram` reads its input (`values`); the others have none.
        assert_eq!(nc > 0, entry == "histogram__1d", "{entry}:\n{body}");
    }
}

#[test]
fn declared_block_shapes_and_the_2d_entry_leave_no_shape_test() {
    // `#[kernel(block = ...)]`: the block size is a constant, never read.
    for entry in [
        "stencil1d_r4__1d",
        "jacobi5__2d",
        "transpose_32x32__2d",
        "transpose_32x8__2d",
        "matmul_tiled__2d",
    ] {
        let body = entry_body(entry);
        assert!(!body.contains("%ntid"), "{entry} reads blockDim:\n{body}");
    }
    // The z-extent-one entry's 2-D witness does not read the z extents;
    // the general entry's does.
    assert!(!entry_body("jacobi5__2d").contains("%nctaid.z"));
    assert!(entry_body("jacobi5").contains("%nctaid.z"));
}

#[test]
fn a_matrix_passes_its_element_count_so_an_input_of_its_shape_costs_no_multiply() {
    // `DisjointSlice2dU32`: pointer, then element count, rows and columns
    // as `u32`s.
    let params = entry_params("transpose_32x32__2d");
    assert_eq!(params.len(), 6, "{params:?}");
    assert!(params[0].starts_with(".param .u64"), "{params:?}");
    for p in &params[3..] {
        assert!(p.starts_with(".param .u32"), "{params:?}");
    }
    // Its first test comes before any multiply.
    let body = entry_body("transpose_32x32__2d");
    let first_test = body.find("setp").expect("a test");
    assert!(!body[..first_test].contains("mul"), "{body}");
}

#[test]
fn a_declared_length_bound_leaves_no_length_test_on_the_device() {
    // `#[kernel(len(input >= out))]`: the launcher checks the input's length
    // against the output's element count, and the entry point assumes it,
    // so `Slice2dU32::with_shape(input, out.shape())` folds: no 64-bit
    // compare and no call of its panic (`too_short`) is left. Everything
    // else compares in 32 bits.
    for entry in ["jacobi5__2d", "transpose_32x32__2d"] {
        let body = entry_body(entry);
        assert!(!body.contains("too_short"), "{entry}:\n{body}");
        assert!(!body.contains("setp.lt.u64"), "{entry}:\n{body}");
        assert!(!body.contains("call"), "{entry}:\n{body}");
    }
    // Without the option (the stencil's `input` covers nothing declared),
    // a kernel's own length tests stay: the check is the option's, not a
    // side effect of the views.
    let transpose_32x8 = entry_body("transpose_32x8__2d");
    assert!(transpose_32x8.contains("call"), "{transpose_32x8}");
}

#[test]
fn a_matrix_bounds_test_is_one_branch() {
    // `Shape2dU32::contains` makes both compares: the transpose's tile fill
    // (`if input.shape().contains(..) { input[..] } else { 0.0 }`) branches
    // once around its load, which ptxas predicates, and the output's `set`
    // once around its store. With a short-circuit `&&` the fill was two
    // nested branches (three in all), which ptxas kept as branches.
    let body = entry_body("transpose_32x32__2d");
    let branches = body
        .lines()
        .filter(|l| l.trim_start().starts_with("@%p") && l.contains("bra"))
        .count();
    assert_eq!(branches, 2, "{body}");
    assert_eq!(body.matches("or.pred").count(), 2, "{body}");
}

fn ptxas(dir: &str, sub: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = root.join(".tools").join(dir).join(sub);
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup.sh, which installs ptxas from PyPI",
        path.display()
    );
    path
}

/// Assembles every kernel crate's module for `arch`.
fn assemble(ptxas: &PathBuf, arch: &str) {
    for (crate_name, module) in MODULES {
        let dir =
            std::env::temp_dir().join(format!("{crate_name}-ptx-{arch}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("kernels.ptx");
        std::fs::write(&input, module.ptx()).unwrap();
        let out = Command::new(ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&input)
            .arg("-o")
            .arg(dir.join("kernels.cubin"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ptxas -arch={arch} rejected the PTX of {crate_name}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(dir.join("kernels.cubin").metadata().unwrap().len() > 0);
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// A cluster kernel (`#[kernel(cluster = ...)]`) declares its cluster
/// shape to the driver (`.reqnctapercluster`, on each entry point of the
/// instance), syncs with `barrier.cluster` and maps peers' shared addresses
/// with `mapa`; ptxas accepts the module for sm_90a.
#[test]
fn cluster_kernels_declare_their_shape_and_use_the_cluster_barrier() {
    let module = &gpu_test_kernels::KERNEL_MODULE;
    let (_, ptx) = module
        .ptx_variants()
        .into_iter()
        .find(|(arch, _)| *arch == "sm_90a")
        .expect("an sm_90a module");
    for (entry, shape) in [
        ("cluster_ring_2", "2, 1, 1"),
        ("cluster_ring_2__1d", "2, 1, 1"),
        ("cluster_ring_4__1d", "4, 1, 1"),
        ("cluster_ring_8__1d", "8, 1, 1"),
        ("cluster_square__2d", "2, 2, 1"),
        ("cluster_counts__1d", "2, 1, 1"),
        ("cluster_out_of_step__1d", "2, 1, 1"),
        ("tma_multicast_2__1d", "2, 1, 1"),
        ("tma_multicast_4__1d", "4, 1, 1"),
        ("tma_multicast_out_of_step__1d", "2, 1, 1"),
        ("tma_multicast_peer_panics__1d", "8, 1, 1"),
    ] {
        let text = entry_text(ptx, entry);
        let head = &text[..text.find('{').expect("a body")];
        assert!(
            head.contains(&format!(".reqnctapercluster {shape}")),
            "{entry}:\n{head}"
        );
    }
    // The cluster barriers are the forms defined in divergent code (safe
    // code reaches them from any branch), and every thread ends with the
    // cluster's last barrier pairs (`ClusterState::finish`, a call).
    let ring = body_in(ptx, "cluster_ring_2__1d");
    for instruction in [
        "barrier.cluster.arrive;",
        "barrier.cluster.wait;",
        "mapa.u64",
        "%cluster_ctarank",
        "ClusterState6finish",
    ] {
        assert!(ring.contains(instruction), "no {instruction}:\n{ring}");
    }
    for entry in ["cluster_ring_2__1d", "cluster_counts__1d"] {
        let body = body_in(ptx, entry);
        assert!(body.contains("barrier.cluster.wait;"), "{entry}:\n{body}");
        assert!(
            !body.contains("barrier.cluster.arrive.aligned"),
            "{entry}:\n{body}"
        );
        assert!(
            !body.contains("barrier.cluster.wait.aligned"),
            "{entry}:\n{body}"
        );
    }
    // A multicast load: each block's thread 0 arrives on rank 0's barrier
    // (release at cluster scope), rank 0's waits for them (acquire at
    // cluster scope) and copies into every block's tile.
    let multicast = body_in(ptx, "tma_multicast_2__1d");
    for instruction in [
        "mbarrier.arrive.release.cluster.shared::cluster.b64",
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
    ] {
        assert!(
            multicast.contains(instruction),
            "no {instruction}:\n{multicast}"
        );
    }
    // A kernel that declares no cluster has no cluster directive.
    let plain = entry_text(ptx, "not_a_cluster_kernel");
    assert!(!plain[..plain.find('{').unwrap()].contains("reqnctapercluster"));
    let dir = std::env::temp_dir().join(format!("cluster-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("kernels.ptx");
    std::fs::write(&input, ptx).unwrap();
    let out = Command::new(ptxas("ptxas", "nvidia/cu13/bin/ptxas"))
        .arg("-arch=sm_90a")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("kernels.cubin"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ptxas -arch=sm_90a rejected the sm_90a module:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ptxas_accepts_the_modules_for_sm_70() {
    // CUDA 13's ptxas no longer targets sm_70; CUDA 12's does.
    assemble(&ptxas("ptxas12", "nvidia/cuda_nvcc/bin/ptxas"), "sm_70");
}

#[test]
fn ptxas_accepts_the_modules_for_sm_80() {
    assemble(&ptxas("ptxas", "nvidia/cu13/bin/ptxas"), "sm_80");
}

#[test]
fn ptxas_accepts_the_modules_for_sm_90() {
    assemble(&ptxas("ptxas", "nvidia/cu13/bin/ptxas"), "sm_90");
}

/// The `rerun-if-changed` lines of each kernel crate's build script: the
/// kernel crate's and its local dependencies' sources, nothing from the
/// registry or the toolchain, so the PTX is rebuilt when kernel code changes
/// and not otherwise.
#[test]
fn the_ptx_build_reruns_only_for_local_kernel_sources() {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.ancestors().nth(2).unwrap().to_path_buf();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for (crate_name, _) in MODULES {
        let mut outputs: Vec<_> = std::fs::read_dir(profile_dir.join("build"))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                // `<package>-<hash>`: the hash is all hexadecimal digits.
                name.strip_prefix(crate_name)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|hash| hash.chars().all(|c| c.is_ascii_hexdigit()))
            })
            .map(|p| p.join("output"))
            .filter(|p| p.is_file())
            .collect();
        outputs.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        let output = std::fs::read_to_string(
            outputs
                .last()
                .unwrap_or_else(|| panic!("{crate_name}'s build script ran")),
        )
        .unwrap();
        let watched: Vec<PathBuf> = output
            .lines()
            .filter_map(|l| l.strip_prefix("cargo:rerun-if-changed="))
            .map(PathBuf::from)
            .collect();
        let crate_dir = match crate_name {
            "gpu-ops" => "ops",
            "gpu-kernels" => "gpu-kernels",
            _ => "tests/kernels",
        };
        for required in [
            format!("{crate_dir}/src"),
            format!("{crate_dir}/build.rs"),
            format!("{crate_dir}/Cargo.toml"),
            "device/src".into(),
            "macros/src".into(),
        ] {
            assert!(
                watched.contains(&root.join(&required)),
                "{crate_name}: {required} is not watched: {watched:?}"
            );
        }
        for path in &watched {
            assert!(
                path.starts_with(&root),
                "{crate_name}: {} is outside the workspace",
                path.display()
            );
            assert!(
                !path.starts_with(root.join("target")),
                "{crate_name}: {} is a build output",
                path.display()
            );
        }
        assert!(output.contains("cargo:rerun-if-env-changed=GPU_PTX_ARCH"));
    }
}

/// The stand-in PTX that gpu-builder writes for a module it did not build
/// (docs.rs, a failed GPU build), as the runtime reads it: the two agree on
/// the marker and the message, and a launch from such a module is refused,
/// naming the reason, before anything reaches a device.
mod not_built {
    use gpu_builder::not_built::{not_built_ptx, NotBuilt};
    use gpu_device::prelude::*;
    use gpu_runtime::{launch, DeviceBuffer, EmbeddedModule, Error, Stream};

    const REASON: &str = "the dependency `rand` needs `std`\n    move it";

    // SAFETY: the text is a stand-in with no entry point: the runtime
    // refuses to load it (the test below), so no kernel of it runs.
    static NOT_BUILT: EmbeddedModule = unsafe {
        EmbeddedModule::new(
            "not-built",
            "// gpu-builder: not built (device-only)\n// the dependency `rand` needs `std`\n//     move it\n",
        )
    };

    #[kernel(module = "self::NOT_BUILT")]
    pub fn never_built(mut out: DisjointSlice<f32>) {
        out.set(thread_index(), 1.0);
    }

    #[test]
    fn the_runtime_reads_the_builders_stand_in() {
        for why in [
            NotBuilt::Documentation,
            NotBuilt::HostReports,
            NotBuilt::DeviceOnly,
        ] {
            let text: &'static str = Box::leak(not_built_ptx(why, REASON).into_boxed_str());
            // SAFETY: never loaded (a stand-in is refused before any driver call).
            let module = unsafe { EmbeddedModule::new("not-built", text) };
            assert_eq!(module.not_built().as_deref(), Some(REASON), "{text}");
        }
        assert_eq!(
            NOT_BUILT.ptx(),
            not_built_ptx(NotBuilt::DeviceOnly, REASON),
            "the literal above is what the builder writes"
        );
        for (name, module) in super::MODULES {
            assert_eq!(module.not_built(), None, "{name} was built");
        }
    }

    #[test]
    fn a_launch_from_a_module_not_built_is_refused_with_the_reason() {
        let stream = Stream::new().unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed_on(32, &stream).unwrap();
        let error = launch!(never_built[1, 32, stream](&mut out)).unwrap_err();
        assert_eq!(
            error,
            Error::KernelsNotBuilt {
                crate_name: "not-built",
                reason: REASON.to_string()
            }
        );
        assert!(
            error
                .to_string()
                .starts_with("the kernels of crate `not-built` were not built to PTX, so they cannot run: the dependency `rand`"),
            "{error}"
        );
    }
}

#[test]
fn sgemm_loops_are_written_once_and_read_inputs_with_non_coherent_vectors() {
    // One loop body (a `DoubleBuffer2d` with an `Alternating` token, as the
    // twin's `buf ^= 1`): 16 x 16 FFMA in the 4 x 4 kernel's k-tile, 8 x 64
    // in the 8 x 8's, not twice that (the typed-phase form wrote the body
    // once per phase, and ptxas gave it three times the twin's register
    // bank conflicts). The inputs' 16-byte loads are `ld.global.nc.v4`
    // (`LDG.E.128.CONSTANT`, the twin's `__ldg`), not generic `ld.v4`: two
    // before the loop, two in it. The element loads are those of the
    // partial-run path only, four for each of the four guarded loads: a
    // misaligned whole run of its own (16 more) put four predicated
    // `LDG.E.CONSTANT` beside each `LDG.E.128` in the k-tile loop's hot
    // path, 8 of its 616 instructions a k-tile in the 8 x 8 kernel (595
    // without, the twin 598: `benches/NOTES.md`, issue 20).
    for (name, fma) in [("sgemm_4x4", 256), ("sgemm_8x8", 512)] {
        let body = entry_body(name);
        assert_eq!(body.matches("fma.rn.f32").count(), fma, "{name}");
        assert_eq!(body.matches("ld.shared.v4").count(), 32, "{name}");
        assert_eq!(body.matches("ld.global.nc.v4").count(), 4, "{name}");
        assert_eq!(body.matches("ld.global.nc.b32").count(), 16, "{name}");
        assert!(!body.contains("\tld.v4"), "{name}: a generic vector load");
        assert_eq!(body.matches("barrier.sync").count(), 2, "{name}");
    }
}

/// The `mma.sync` GEMMs (bf16, f16) keep their accumulators in registers
/// through the epilogue: no local memory in the modules that run them
/// (sm_80, sm_90a).
/// `set_accumulator`'s loop over a tile's two row pairs, left rolled by
/// LLVM, put them in a 112-byte local array (379 `st.local`, 128
/// `ld.local` a thread at the end of every block: a fixed cost a tile that
/// made the Rust kernel 0.81x its twin at 4096³ against 0.90x at 8192³).
#[test]
fn the_mma_sync_gemm_uses_no_local_memory() {
    // gpu-ops' modules: sm_70, sm_80, sm_90a (its build.rs).
    let variants = gpu_ops::KERNEL_MODULE.ptx_variants();
    for (arch, ptx) in &variants[1..] {
        for entry in [
            "gemm_bf16_mma_sync",
            "gemm_bf16_mma_sync__1d",
            "gemm_f16_mma_sync",
            "gemm_f16_mma_sync__1d",
        ] {
            let body = body_in(ptx, entry);
            assert_eq!(
                body.matches("mma.sync.aligned").count(),
                128,
                "{arch} {entry}"
            );
            assert!(!body.contains(".local"), "{arch} {entry}: local memory");
        }
    }
}

/// The GEMMs' checks branch on values ptxas knows to be the same in every
/// thread of a warp, so their k-loops stay convergent: a branch to a panic
/// on a value it cannot prove so (each thread's own comparison, an address
/// made from the warpgroup's index) makes it guard the loop's barrier with a
/// divergence check and move the loop's uniform address arithmetic to
/// vector registers (`benches/NOTES.md`, issue 22). The `mma.sync` GEMM:
/// 245 registers (252 with the ring agreement's report on each thread's
/// comparison; 0.92 to 0.97 of the CUDA C twin on an H100 then, 0.96 to
/// 1.03 before); the wgmma GEMM: 226 (234 with `KMajorTile::from_stage`
/// checking the tile's address, 277 SASS instructions a k-step against
/// 268). ptxas 13.5, sm_90a.
#[test]
fn the_gemms_k_loops_stay_convergent() {
    let (arch, ptx) = gpu_ops_sm_90a();
    for (entries, most) in [
        (["gemm_bf16_mma_sync", "gemm_f16_mma_sync"], 245),
        (["gemm_bf16_wgmma", "gemm_f16_wgmma"], 226),
    ] {
        for (entry, count) in registers(ptx, arch, &entries) {
            assert!(
                count <= most,
                "{entry}: {count} registers, more than {most}"
            );
        }
    }
}

/// gpu-ops' sm_90a module: its architecture's name and its PTX.
fn gpu_ops_sm_90a() -> (&'static str, &'static str) {
    gpu_ops::KERNEL_MODULE
        .ptx_variants()
        .into_iter()
        .find(|(arch, _)| *arch == "sm_90a")
        .expect("an sm_90a module")
}

/// `ptxas -O3 -v` (CUDA 13's, from `.tools`) of the given entry points of
/// `ptx` for `arch`: per entry, its stack frame and spill-store bytes. The
/// `, debug` of the `.target` line is removed (the modules carry line
/// tables; ptxas refuses `-O3` with it).
fn frames_and_spills(ptx: &str, arch: &str, entries: &[&str]) -> Vec<(String, u32, u32)> {
    let log = ptxas_log(ptx, arch, entries);
    // "Function properties for NAME" then "N bytes stack frame, N bytes
    // spill stores, N bytes spill loads".
    let mut lines = log.lines();
    let mut found = Vec::new();
    while let Some(line) = lines.next() {
        if let Some(name) = line.split("Function properties for ").nth(1) {
            let figures: Vec<u32> = lines
                .next()
                .unwrap_or("")
                .split(',')
                .map(|f| f.split_whitespace().next().unwrap_or("").parse().unwrap())
                .collect();
            found.push((name.trim().to_string(), figures[0], figures[1]));
        }
    }
    for entry in entries {
        assert!(
            found.iter().any(|(name, ..)| name == entry),
            "ptxas reported nothing of `{entry}`:\n{log}"
        );
    }
    found.retain(|(name, ..)| entries.contains(&name.as_str()));
    found
}

/// Per entry point, the registers `ptxas -O3 -v` gives it ("Compiling
/// entry function 'NAME'", then "Used N registers").
fn registers(ptx: &str, arch: &str, entries: &[&str]) -> Vec<(String, u32)> {
    let log = ptxas_log(ptx, arch, entries);
    let mut found = Vec::new();
    let mut entry = None;
    for line in log.lines() {
        if let Some(name) = line.split("Compiling entry function '").nth(1) {
            entry = name.split('\'').next().map(str::to_string);
        } else if let (Some(name), Some(used)) = (&entry, line.split("Used ").nth(1)) {
            let count = used.split_whitespace().next().unwrap().parse().unwrap();
            found.push((name.clone(), count));
            entry = None;
        }
    }
    for entry in entries {
        assert!(
            found.iter().any(|(name, _)| name == entry),
            "ptxas reported no registers of `{entry}`:\n{log}"
        );
    }
    found
}

/// The stderr of `ptxas -O3 -v` (CUDA 13's) of `entries` of `ptx` for
/// `arch`, which must succeed.
fn ptxas_log(ptx: &str, arch: &str, entries: &[&str]) -> String {
    // A directory of each call's own: the tests run in parallel in one
    // process, and each removes its directory when done.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ptx-spills-{arch}-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("kernels.ptx");
    let ptx: String = ptx
        .lines()
        .map(|l| match l.strip_prefix(".target ") {
            Some(t) => format!(".target {}\n", t.trim_end_matches(", debug")),
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&input, ptx).unwrap();
    let mut cmd = Command::new(ptxas("ptxas", "nvidia/cu13/bin/ptxas"));
    cmd.arg(format!("-arch={arch}")).args(["-O3", "-v"]);
    for entry in entries {
        cmd.arg("-e").arg(entry);
    }
    let out = cmd
        .arg(&input)
        .arg("-o")
        .arg(dir.join("kernels.cubin"))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "ptxas -arch={arch} -O3:\n{log}");
    log
}

/// The SGEMM kernels fit their register caps (128 for 8 x 8 at two blocks
/// an SM, 64 for 4 x 4) with no spill: with the `Alternating` phase as a
/// `bool`, `sgemm_8x8` spilled 8 bytes and reloaded them in its k-tile
/// loop (`benches/NOTES.md`, issue 20). ptxas 13 at `-O3` stands in for
/// the driver's JIT, which compiles the same PTX on the GPU.
#[test]
fn the_sgemm_kernels_do_not_spill_at_their_register_caps() {
    let (arch, ptx) = gpu_ops_sm_90a();
    let entries = ["sgemm_4x4", "sgemm_4x4__1d", "sgemm_8x8", "sgemm_8x8__1d"];
    for (entry, frame, spills) in frames_and_spills(ptx, arch, &entries) {
        assert_eq!(
            (frame, spills),
            (0, 0),
            "{entry}: stack frame and spill bytes"
        );
    }
}

/// The `wgmma` GEMMs (bf16, f16) keep their 128-float accumulator in
/// registers: no stack frame and no spill at sm_90a (`gemm_bf16_wgmma`'s
/// first version had a 1032-byte frame, `benches/NOTES.md`), and four
/// `wgmma.mma_async` of m64n256k16 a k-block, of the element type.
#[test]
fn the_wgmma_gemms_do_not_spill() {
    let (arch, ptx) = gpu_ops_sm_90a();
    for (entry, ty) in [
        ("gemm_bf16_wgmma__1d", "bf16"),
        ("gemm_f16_wgmma__1d", "f16"),
    ] {
        let body = body_in(ptx, entry);
        let products = format!("wgmma.mma_async.sync.aligned.m64n256k16.f32.{ty}.{ty}");
        assert_eq!(body.matches(&products).count(), 4, "{entry}: {products}");
    }
    let entries = ["gemm_bf16_wgmma__1d", "gemm_f16_wgmma__1d"];
    for (entry, frame, spills) in frames_and_spills(ptx, arch, &entries) {
        assert_eq!(
            (frame, spills),
            (0, 0),
            "{entry}: stack frame and spill bytes"
        );
    }
}

/// The TMA-fed `wgmma` GEMMs (bf16, f16; B K-major, and B row-major read
/// MN-major by the `_kn` kernels): four m64n256k16 products a k-block,
/// their B's major in `imm-trans-b`, their issue not serialised by a call
/// (the ring's closure inlined: shared by the two entry points it stayed a
/// call, and ptxas serialised the products across it with a 1280-byte
/// frame), the `setmaxnreg` pair and the bulk copies (one of B a stage,
/// or four).
#[test]
fn the_tma_fed_wgmma_gemms_inline_their_ring() {
    let (arch, ptx) = gpu_ops_sm_90a();
    let entries = [
        "gemm_bf16_wgmma_tma__1d",
        "gemm_f16_wgmma_tma__1d",
        "gemm_bf16_wgmma_tma_kn__1d",
        "gemm_f16_wgmma_tma_kn__1d",
    ];
    for (entry, ty) in entries.iter().zip(["bf16", "f16", "bf16", "f16"]) {
        let body = body_in(ptx, entry);
        let products = format!("wgmma.mma_async.sync.aligned.m64n256k16.f32.{ty}.{ty}");
        assert_eq!(body.matches(&products).count(), 4, "{entry}: {products}");
        // `p, 1, 1, 0, 1;`: scale-a, scale-b, A K-major, B MN-major.
        let trans_b = if entry.contains("_kn") { "1" } else { "0" };
        let issues: Vec<&str> = body.lines().filter(|l| l.contains(&products)).collect();
        assert!(
            issues
                .iter()
                .all(|l| l.contains(&format!("p, 1, 1, 0, {trans_b};"))),
            "{entry}: imm-trans-b {trans_b}\n{issues:#?}"
        );
        assert!(
            body.contains("setmaxnreg.dec.sync.aligned.u32 40"),
            "{entry}"
        );
        assert!(
            body.contains("setmaxnreg.inc.sync.aligned.u32 232"),
            "{entry}"
        );
        assert!(body.contains("cp.async.bulk.tensor.2d"), "{entry}");
    }
    // At the twin's 24 the producer spilled its 64-bit tile walk (80
    // bytes); at 40 nothing spills, the consumers' 232 included. The `_kn`
    // producers, which issue four copies of B a stage, keep two words of
    // the tile walk in local memory: stored before the walk, loaded once a
    // tile, outside the k-loop (SASS: the `STL`/`LDL` pair after
    // `USETMAXREG.DEALLOC`, no local access among the `UTMALDG`s).
    for (entry, _frame, spills) in frames_and_spills(ptx, arch, &entries) {
        let allowed = if entry.contains("_kn") { 8 } else { 0 };
        assert!(spills <= allowed, "{entry}: {spills} bytes of spill stores");
    }
    let log = ptxas_log(ptx, arch, &entries);
    assert!(!log.contains("serialized"), "{log}");
}

/// The tensor-core GEMMs' epilogues round a lane's two adjacent
/// accumulators with one packed conversion (`cvt.rn.bf16x2.f32`, SASS
/// `F2FP.PACK_AB` on the ALU pipe), as CUDA C's `__floats2bfloat162_rn`:
/// the scalar `cvt.rn.bf16.f32` is an `F2F` on the quarter-rate XU pipe,
/// and two of them a pair cost the TMA GEMM 3.5 % at 4096³ (benches/NOTES.md,
/// 2026-11-28 afternoon). And the ring's `mbarrier` initialisation digest is
/// a constant: no hashing loop over local memory at each block's start.
#[test]
fn the_gemm_epilogues_round_pairs_with_one_conversion() {
    let (_, ptx) = gpu_ops_sm_90a();
    for (entry, ty) in [
        ("gemm_bf16_wgmma_tma__1d", "bf16"),
        ("gemm_f16_wgmma_tma__1d", "f16"),
        ("gemm_bf16_wgmma_tma_kn__1d", "bf16"),
        ("gemm_bf16_mma_sync__1d", "bf16"),
        ("gemm_f16_mma_sync__1d", "f16"),
        ("gemm_bf16_wgmma__1d", "bf16"),
    ] {
        let body = body_in(ptx, entry);
        let pair = format!("cvt.rn.{ty}x2.f32");
        let single = format!("cvt.rn.{ty}.f32");
        assert!(body.contains(&pair), "{entry}: no {pair}");
        assert!(!body.contains(&single), "{entry}: a scalar {single}");
    }
    let body = body_in(ptx, "gemm_bf16_wgmma_tma__1d");
    assert!(
        !body.contains("ld.local"),
        "gemm_bf16_wgmma_tma__1d: local loads"
    );
}

/// gpu-ops' scans, all eighteen instances (exclusive and inclusive), run
/// ten blocks of 128 threads an SM, as their CUDA C twin: `scan_tiles`
/// asks for it (`launch_bounds = (128, 10)`, `.minnctapersm 10`), and at
/// the 48 registers that leaves ptxas neither spills nor needs a stack
/// frame (sm_90, the benchmark's GPU). Before issue 20's changes the
/// exclusive sum needed 64 (8 blocks) and spilled 44 bytes at 48; the
/// inclusive instances 56 to 96 (`benches/NOTES.md`).
#[test]
fn the_scans_run_ten_blocks_an_sm_without_spilling() {
    let ptx = ptx_with("scan_tiles_SumU32__1d");
    let entries: Vec<String> = ["", "Inclusive"]
        .iter()
        .flat_map(|kind| {
            ["Sum", "Min", "Max"].iter().flat_map(move |op| {
                ["U32", "I32", "F32"].map(|t| format!("scan_tiles_{op}{t}{kind}__1d"))
            })
        })
        .collect();
    let entries: Vec<&str> = entries.iter().map(String::as_str).collect();
    for entry in &entries {
        let head = entry_text(ptx, entry);
        let head = &head[..head.find('{').expect("the entry's body opens")];
        assert!(
            head.contains(".maxntid 128, 1, 1") || head.contains(".reqntid 128, 1, 1"),
            "{entry}: blocks of 128 threads\n{head}"
        );
        assert!(
            head.contains(".minnctapersm 10"),
            "{entry}: ten blocks an SM\n{head}"
        );
    }
    for (entry, frame, spills) in frames_and_spills(ptx, "sm_90", &entries) {
        assert_eq!(
            (frame, spills),
            (0, 0),
            "{entry}: stack frame and spill bytes"
        );
    }
    for (entry, count) in registers(ptx, "sm_90", &entries) {
        assert!(count <= 48, "{entry}: {count} registers, more than 48");
    }
}

/// gpu-test-kernels is built for sm_70, sm_80 and sm_90a (its build.rs):
/// three modules, split where the builder joined them, each assembling for
/// its own architecture; a `#[kernel(arch = ...)]` only in the modules of
/// its architecture and later; sm_90a's own instructions in no other module.
#[test]
fn each_architecture_gets_its_own_module() {
    let module = &gpu_test_kernels::KERNEL_MODULE;
    let variants = module.ptx_variants();
    let archs: Vec<&str> = variants.iter().map(|(arch, _)| *arch).collect();
    assert_eq!(archs, ["sm_70", "sm_80", "sm_90a"]);
    assert_eq!(module.ptx(), variants[0].1);
    let has = |ptx: &str, entry: &str| ptx.contains(&format!(".visible .entry {entry}("));
    for (arch, ptx) in &variants {
        assert_eq!(
            ptx.lines().filter(|l| l.starts_with(".target ")).count(),
            1,
            "{arch}: one module"
        );
        assert!(
            !ptx.contains(gpu_builder::ARCH_VARIANT_MARKER),
            "{arch}: the runtime split the modules where the builder joined them"
        );
        assert!(ptx.starts_with(gpu_builder::DEBUG_MARKER), "{arch}");
        assert!(has(ptx, "needs_any_arch"), "{arch}");
        assert_eq!(has(ptx, "needs_sm_80"), *arch != "sm_70", "{arch}");
        assert_eq!(has(ptx, "needs_sm_90a"), *arch == "sm_90a", "{arch}");
        // Tensor cores' warp-level MMA (`gpu_device::mma`) from sm_80 on:
        // bf16 and f16 m16n8k16, tf32 m16n8k8 with its operands rounded.
        for instruction in [
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
            "cvt.rna.tf32.f32",
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
        ] {
            assert_eq!(
                ptx.contains(instruction),
                *arch != "sm_70",
                "{arch}: {instruction}"
            );
        }
        // `mbarrier`'s transaction counts (`gpu_device::mbarrier`) from
        // sm_90 on: here in the sm_90a module only.
        for instruction in [
            "mbarrier.init.shared::cta.b64",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "mbarrier.try_wait.parity.shared::cta.b64",
            "fence.mbarrier_init.release.cluster",
            // The bulk tensor copy (`gpu_device::tma`), its map a kernel
            // parameter's generic address.
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            // Its map acquired for the copy engine (a descriptor cached for
            // the address of an earlier map is not used).
            "fence.proxy.tensormap::generic.acquire.sys",
            "fence.proxy.async.shared::cta",
            ".shared .align 1024",
        ] {
            assert_eq!(
                ptx.contains(instruction),
                *arch == "sm_90a",
                "{arch}: {instruction}"
            );
        }
        // Hopper's architecture-specific instructions (wgmma, setmaxnreg)
        // stay out of every module but sm_90a's.
        if *arch != "sm_90a" {
            for instruction in ["wgmma.", "setmaxnreg."] {
                assert!(!ptx.contains(instruction), "{arch}: {instruction}");
            }
        }
    }
    // PTX ISA 8.0 is the first with sm_90a; the builder asks for 8.3, the
    // TMA copies' `fence.proxy.tensormap`.
    assert!(variants[2].1.contains(".version 8.3\n.target sm_90a"));
    let ptxas = ptxas("ptxas", "nvidia/cu13/bin/ptxas");
    for (arch, ptx) in &variants[1..] {
        let dir = std::env::temp_dir().join(format!("arch-variant-{arch}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("kernels.ptx");
        std::fs::write(&input, ptx).unwrap();
        let out = Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&input)
            .arg("-o")
            .arg(dir.join("kernels.cubin"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ptxas -arch={arch} rejected the {arch} module of gpu-test-kernels:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
