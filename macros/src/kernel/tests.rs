//! What `#[kernel]` expands to, and what it refuses.

use super::expand;
use quote::quote;

fn expanded(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    if let Err(failure) = super::model::Kernel::parse(args.clone(), item.clone()) {
        panic!("does not expand: {}", failure.errors);
    }
    expand(args, item).to_string()
}

/// The messages of every error, in order.
fn errors(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> Vec<String> {
    match super::model::Kernel::parse(args, item) {
        Ok(_) => panic!("is accepted"),
        Err(failure) => failure.errors.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// The message of the only error.
fn error(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    let all = errors(args, item);
    assert_eq!(all.len(), 1, "{all:?}");
    all.into_iter().next().expect("one")
}

#[test]
fn slices_become_pointer_and_length_on_the_device() {
    let out = expanded(
        quote!(),
        quote!(
            pub fn k(a: &[f32], n: u32, mut c: DisjointSlice<f32>) {}
        ),
    );
    assert!(out.contains(r#"# [unsafe (export_name = "k")] # [allow (non_snake_case , clippy :: too_many_arguments)] unsafe extern "ptx-kernel" fn __gpu_entry (a__ptr : * const f32 , a__len : usize , n : u32 , c__ptr : * mut f32 , c__len : usize)"#), "{out}");
    // The twin for one-dimensional launches takes the same parameters.
    assert!(
        out.contains(r#"# [unsafe (export_name = "k__1d")] # [allow (non_snake_case , clippy :: too_many_arguments)] unsafe extern "ptx-kernel" fn __gpu_entry (a__ptr : * const f32"#),
        "{out}"
    );
    // The body is an associated function of `k::Kernel`, in no scope.
    assert!(
        out.contains(
            "k :: Kernel :: body :: < { :: gpu_device :: __private :: ONE_DIMENSIONAL } >"
        ),
        "{out}"
    );
    assert!(
        out.contains("k :: Kernel :: body :: < { :: gpu_device :: __private :: GENERAL } >"),
        "{out}"
    );
    assert!(out.contains("impl k :: Kernel { # [cfg_attr"), "{out}");
    // No 2-D witness in the body: no entry for launches of z extent 1.
    assert!(!out.contains("k__2d"), "{out}");
    // The input's pointer (parameter 0 of 5) is named for gpu-builder,
    // per entry point; the output's is not.
    assert!(
        out.contains(r#"export_name = "__gpu_inputs.k.5.0""#),
        "{out}"
    );
    assert!(
        out.contains(r#"export_name = "__gpu_inputs.k__1d.5.0""#),
        "{out}"
    );
}

#[test]
fn kernels_without_inputs_have_no_marker() {
    let out = expanded(
        quote!(),
        quote!(
            pub fn k(n: u32, mut c: DisjointSlice<f32>, h: &[DeviceAtomic<u32>]) {}
        ),
    );
    assert!(!out.contains("__gpu_inputs"), "{out}");
}

#[test]
fn the_two_dimensional_witness_gets_its_own_entry_point() {
    let out = expanded(
        quote!(),
        quote!(
            pub fn k(a: &[f32], mut c: DisjointSlice2d<f32>) {
                c.set(thread_index_2d(), 1.0);
            }
        ),
    );
    assert!(
        out.contains(r#"# [unsafe (export_name = "k__2d")] # [allow (non_snake_case , clippy :: too_many_arguments)] unsafe extern "ptx-kernel" fn __gpu_entry (a__ptr : * const f32"#),
        "{out}"
    );
    assert!(
        out.contains("k :: Kernel :: body :: < { :: gpu_device :: __private :: Z_EXTENT_ONE } >"),
        "{out}"
    );
    assert!(
        out.contains(r#"["k" , "k__1d"] , :: core :: option :: Option :: Some ("k__2d")"#),
        "{out}"
    );
    assert!(
        out.contains(
            ":: core :: option :: Option :: Some (k :: Kernel :: host_entry_0_2d as unsafe fn"
        ),
        "{out}"
    );
    assert!(
        out.contains(r#"export_name = "__gpu_inputs.k__2d.6.0""#),
        "{out}"
    );
}

#[test]
fn a_declared_block_shape_is_assumed_on_the_device_and_checked_by_the_launcher() {
    let out = expanded(
        quote!(block = (32, 8)),
        quote!(
            pub fn k(mut c: DisjointSlice<f32>) {}
        ),
    );
    let shape = "declared_block_shape (32 , 8 , 1)";
    // Every entry point (and host entry) assumes it, and the launcher
    // knows it: evaluated once per target, in the instance's constant,
    // which the description holds.
    assert_eq!(out.matches("assume_block_shape").count(), 4, "{out}");
    assert_eq!(
        out.matches("assume_block_shape (k :: Kernel :: BLOCK_0)")
            .count(),
        4,
        "{out}"
    );
    assert_eq!(out.matches(shape).count(), 1, "{out}");
    assert!(
        out.contains("block : :: core :: option :: Option :: Some (Self :: BLOCK_0)"),
        "{out}"
    );
    assert!(
        out.contains("runs only in blocks of `(32, 8, 1)` threads"),
        "{out}"
    );
    // One extent, as a plain expression, and after the instances of a
    // const-generic kernel, substituted per instance.
    let out = expanded(
        quote!(block = B),
        quote!(
            pub fn k() {}
        ),
    );
    assert!(out.contains("declared_block_shape (B , 1 , 1)"), "{out}");
    let out = expanded(
        quote!(16, 32, block = (T, T)),
        quote!(
            pub fn k<const T: usize>() {}
        ),
    );
    assert!(out.contains("declared_block_shape (16 , 16 , 1)"), "{out}");
    assert!(out.contains("declared_block_shape (32 , 32 , 1)"), "{out}");
    // Kernels without the option assume nothing.
    let out = expanded(
        quote!(),
        quote!(
            pub fn k() {}
        ),
    );
    assert!(!out.contains("assume_block_shape"), "{out}");
    assert!(!out.contains("BLOCK_0"), "{out}");
}

#[test]
fn bad_options_are_rejected_with_reasons() {
    assert!(error(
        quote!(blocks = (32, 8)),
        quote!(
            fn k() {}
        )
    )
    .contains("unknown option `blocks`: expected `block = (x, y, z)`"));
    assert!(error(
        quote!(block = (1, 2, 3, 4)),
        quote!(
            fn k() {}
        )
    )
    .contains("one to three extents"));
    assert!(error(
        quote!(block = 32, block = 64),
        quote!(
            fn k() {}
        )
    )
    .contains("`block` is given twice"));
    assert!(error(
        quote!(arch = "sm_91"),
        quote!(
            fn k() {}
        )
    )
    .contains("`arch` names the architecture the kernel needs, one of sm_70, sm_72"));
    assert!(error(
        quote!(arch = "sm_80", arch = "sm_90"),
        quote!(
            fn k() {}
        )
    )
    .contains("`arch` is given twice"));
}

#[test]
fn a_kernel_that_needs_an_architecture_is_left_out_of_older_ones() {
    let out = expanded(
        quote!(arch = "sm_90a"),
        quote!(
            pub fn k(mut c: DisjointSlice<f32>) {}
        ),
    );
    // The entry points, the body and the device's description, on the
    // device only with sm_90a's features; the description says what the
    // runtime checks.
    let gate = r#"# [cfg (any (not (target_arch = "nvptx64") , target_feature = "sm_90a"))]"#;
    assert_eq!(out.matches(gate).count(), 4, "{out}");
    assert!(
        out.contains(r#"arch : :: core :: option :: Option :: Some ("sm_90a")"#),
        "{out}"
    );
}

#[test]
fn the_host_launcher_takes_typed_buffers() {
    let out = expanded(
        quote!(),
        quote!(
            pub fn k(a: &[f32], n: u32, mut c: DisjointSlice<f32>) {}
        ),
    );
    assert!(out.contains("pub mod k"), "{out}");
    assert!(
        out.contains("a : impl :: gpu_runtime :: DeviceInput < f32 >"),
        "{out}"
    );
    assert!(
        out.contains("mut c : impl :: gpu_runtime :: DeviceOutput < f32 >"),
        "{out}"
    );
    assert!(out.contains("n : u32"));
    // Five PTX parameters: two per slice, one per scalar.
    assert!(out.contains("LaunchArgs :: < '_ , 5usize >"), "{out}");
    assert!(out.contains(". input (\"a\" , & a) ?"), "{out}");
    assert!(out.contains(". value (& n) ;"), "{out}");
    assert!(out.contains(". output (\"c\" , & mut c) ?"), "{out}");
}

#[test]
fn generic_kernels_get_one_entry_per_listed_type() {
    let out = expanded(
        quote!(f32, u64),
        quote!(
            pub fn fill<T: Copy>(v: T, mut o: DisjointSlice<T>) {}
        ),
    );
    assert!(
        out.contains(r#"# [unsafe (export_name = "fill_f32")] # [allow (non_snake_case , clippy :: too_many_arguments)] unsafe extern "ptx-kernel" fn __gpu_entry (v : f32 , o__ptr : * mut f32"#),
        "{out}"
    );
    assert!(
        out.contains(r#"# [unsafe (export_name = "fill_u64")] # [allow (non_snake_case , clippy :: too_many_arguments)] unsafe extern "ptx-kernel" fn __gpu_entry (v : u64 , o__ptr : * mut u64"#),
        "{out}"
    );
    // The instance types are named at the kernel's scope, and the sealed
    // trait implemented for them in the launcher's module.
    assert!(
        out.contains(
            "impl fill :: Instances for fill :: Kernel { type Of0 = f32 ; type Of1 = u64 ; }"
        ),
        "{out}"
    );
    assert!(out.contains("impl fill :: Instance for f32"), "{out}");
    assert!(out.contains("impl fill :: Instance for u64"), "{out}");
    assert!(
        out.contains("impl sealed :: Sealed for < Kernel as Instances > :: Of1"),
        "{out}"
    );
}

#[test]
fn atomics_are_rebuilt_as_atomic_cells() {
    let out = expanded(
        quote!(),
        quote!(
            fn h(bins: &[DeviceAtomic<u32>]) {}
        ),
    );
    assert!(
        out.contains("cast :: < :: gpu_device :: DeviceAtomic < u32 >> ()"),
        "{out}"
    );
    assert!(out.contains("DeviceOutput < u32 >"), "{out}");
}

#[test]
fn matrix_outputs_pass_their_extents_and_device_built_parameters_none() {
    let out = expanded(
        quote!(),
        quote!(
            pub fn k(
                mut c: DisjointSlice2d<f32, 4>,
                g: DisjointSlice3d<u8>,
                block: Block,
                smem: DynamicShared<u32>,
            ) {
            }
        ),
    );
    assert!(
        out.contains(r#"unsafe extern "ptx-kernel" fn __gpu_entry (c__ptr : * mut f32 , c__len : usize , c__rows : usize , c__cols : usize , g__ptr : * mut u8 , g__depth : usize , g__rows : usize , g__cols : usize)"#),
        "{out}"
    );
    assert!(out.contains("DisjointSlice2d :: < f32 , { 4 } >"), "{out}");
    assert!(out.contains("Block :: for_kernel_entry ()"), "{out}");
    assert!(
        out.contains("DynamicShared :: < u32 > :: for_kernel_entry ()"),
        "{out}"
    );
    assert!(out.contains("DeviceView2dMut < '_ , f32 >"), "{out}");
    assert!(
        out.contains("DeviceView3dMut < '_ , u8 >) ->"),
        "the token and the dynamic array are not launcher arguments: {out}"
    );
    assert!(out.contains("LaunchArgs :: < '_ , 8usize >"), "{out}");
    assert!(out.contains(". matrix (\"c\" , & mut c) ?"), "{out}");
    assert!(out.contains(". grid_3d (\"g\" , & mut g) ?"), "{out}");
}

#[test]
fn const_generic_kernels_get_one_substituted_body_per_value() {
    let out = expanded(
        quote!(16, 32),
        quote!(
            pub fn k<const TILE: usize>(mut o: DisjointSlice<u32>, block: Block) {
                let t = shared_array!(u32; TILE);
            }
        ),
    );
    assert!(
        out.contains("fn body_16 < const __GPU_ENTRY : u8 >"),
        "{out}"
    );
    assert!(out.contains("shared_array ! (u32 ; 32)"), "{out}");
    assert!(
        out.contains("impl k :: Instance for :: gpu_runtime :: Const < { 16 } >"),
        "{out}"
    );
    assert!(
        out.contains("impl sealed :: Sealed for :: gpu_runtime :: Const < { 16 } >"),
        "{out}"
    );
    assert!(out.contains(r#"export_name = "k_32""#), "{out}");
    assert!(
        out.contains(
            "instance : :: gpu_device :: __private :: interface :: Instance :: Value (\"32\")"
        ),
        "{out}"
    );
}

#[test]
fn bad_kernels_are_rejected_with_reasons() {
    assert!(error(
        quote!(),
        quote!(
            fn k(a: Block, b: Block) {}
        )
    )
    .contains("at most one `Block`"));
    assert!(error(
        quote!(),
        quote!(
            fn k(a: DynamicShared<u32>, b: DynamicShared<f32>) {}
        )
    )
    .contains("at most one `DynamicShared<T>`"));
    assert!(error(
        quote!(),
        quote!(
            fn k(a: Block<Reading>) {}
        )
    )
    .contains("starts in the Writing phase"));
    assert!(error(
        quote!(1.5),
        quote!(
            fn k<const N: usize>() {}
        )
    )
    .contains("integer or `bool` literals"));
    assert!(error(
        quote!(),
        quote!(
            fn k(x: &mut [f32]) {}
        )
    )
    .contains("DisjointSlice"));
    assert!(error(
        quote!(),
        quote!(
            fn k(x: &f32) {}
        )
    )
    .contains("references must be to slices"));
    assert!(error(
        quote!(),
        quote!(
            fn k<T>(x: T) {}
        )
    )
    .contains("must list the types"));
    assert!(error(
        quote!(f32),
        quote!(
            fn k(x: f32) {}
        )
    )
    .contains("is not generic"));
    assert!(error(
        quote!(f32, f32),
        quote!(
            fn k<T>(x: T) {}
        )
    )
    .contains("listed twice"));
    assert!(error(
        quote!(f32),
        quote!(
            fn k<T, U>(x: T, y: U) {}
        )
    )
    .contains("at most one generic parameter"));
    assert!(error(
        quote!(),
        quote!(
            async fn k() {}
        )
    )
    .contains("`async`"));
    assert!(error(
        quote!(),
        quote!(
            fn k(Pair { a, b }: Pair) {}
        )
    )
    .contains("plain names"));
    assert!(error(
        quote!(),
        quote!(
            fn k(x: (u32, u32)) {}
        )
    )
    .contains("unsupported kernel parameter type `(u32, u32)`"));
}

#[test]
fn a_parameter_under_cfg_is_refused() {
    for attr in [
        quote!(#[cfg(target_arch = "nvptx64")]),
        quote!(#[cfg_attr(target_arch = "nvptx64", cfg(any()))]),
    ] {
        let message = error(
            quote!(),
            quote!(
                fn k(#attr extra: u32, mut out: DisjointSlice<u32>) {}
            ),
        );
        assert!(
            message.contains("a kernel parameter cannot be conditional"),
            "{message}"
        );
    }
}

#[test]
fn every_bad_parameter_is_reported_at_once() {
    let all = errors(
        quote!(),
        quote!(
            fn k(a: Vec<f32>, n: u32, b: &mut [f32], c: *const f32, block: Block, again: Block) {}
        ),
    );
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(all[0].contains("`Vec<f32>`"), "{all:?}");
    assert!(all[1].contains("`&mut [T]`"), "{all:?}");
    assert!(all[2].contains("raw pointers"), "{all:?}");
    assert!(all[3].contains("at most one `Block`"), "{all:?}");
}

#[test]
fn errors_of_the_attribute_signature_and_parameters_come_together() {
    let all = errors(
        quote!(colour = "red", unsafe(runtime_crate = "not a path")),
        quote!(
            const fn k((a, b): Vec<u32>) -> f32 {}
        ),
    );
    assert_eq!(all.len(), 6, "{all:?}");
    assert!(all[0].contains("cannot be `const`"), "{all:?}");
    assert!(all[1].contains("returns nothing"), "{all:?}");
    assert!(all[2].contains("unknown option `colour`"), "{all:?}");
    assert!(all[3].contains("`runtime_crate` must be a path"), "{all:?}");
    assert!(all[4].contains("plain names"), "{all:?}");
    assert!(all[5].contains("`Vec<u32>`"), "{all:?}");
    assert!(error(
        quote!(crate = "gpu"),
        quote!(
            fn k() {}
        )
    )
    .contains("ambiguous"));
}

#[test]
fn the_crate_paths_are_written_unsafe_and_the_module_is_not() {
    let all = errors(
        quote!(
            device_crate = "crate::fake",
            f32,
            runtime_crate = "rt",
            unsafe(module = "crate::M"),
            unsafe(block = (32, 1))
        ),
        quote!(
            fn k<T: Copy>(x: T) {}
        ),
    );
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(
        all[0].starts_with("write `unsafe(device_crate = \"crate::fake\")`: the generated code calls `unsafe` functions of `gpu_device`"),
        "{all:?}"
    );
    assert!(
        all[1].starts_with("write `unsafe(runtime_crate = \"rt\")`: the generated code calls `unsafe` functions of `gpu_runtime`"),
        "{all:?}"
    );
    assert!(
        all[2].starts_with("`module` needs no `unsafe(...)`: write `module = \"crate::M\"`"),
        "{all:?}"
    );
    assert!(all[3].starts_with("unknown option `block`"), "{all:?}");
    assert!(error(
        quote!(unsafe(crate = "gpu")),
        quote!(
            fn k() {}
        )
    )
    .contains("ambiguous"));
}

#[test]
fn overridden_paths_replace_every_default_path() {
    let out = expanded(
        quote!(
            unsafe(device_crate = "dev"),
            f32,
            unsafe(runtime_crate = "crate::re::rt"),
            module = "self::M",
            u64,
            block = (8, 8)
        ),
        quote!(
            pub fn k<T: Copy>(
                v: T,
                a: &[T],
                atomics: &[DeviceAtomic<u32>],
                mut o: DisjointSlice<T>,
                m: DisjointSlice2d<T>,
                m32: DisjointSlice2dU32<T>,
                c: DisjointSlice3d<T>,
                p: Params,
                block: Block,
                smem: DynamicShared<u32>,
            ) {
                let s = shared_array!(T; 4);
                m.set(thread_index_2d(), v);
            }
        ),
    );
    // Every entry point (the `__2d` one too), the declared block shape
    // and the launcher's checks go through the overridden paths.
    assert!(out.contains(r#"export_name = "k_f32__2d""#), "{out}");
    assert!(
        out.contains("dev :: __private :: assume_block_shape"),
        "{out}"
    );
    assert!(out.contains("dev :: __private :: Z_EXTENT_ONE"), "{out}");
    assert!(out.contains("dev :: __private :: LaunchScope"), "{out}");
    assert!(
        out.contains("crate :: re :: rt :: __private :: LaunchArgs"),
        "{out}"
    );
    for default in ["gpu_runtime", "gpu_device", "KERNEL_MODULE"] {
        assert!(!out.contains(default), "`{default}` in {out}");
    }
    // Everything is written at the kernel's scope but the launcher's
    // module, one module down.
    assert!(out.contains("dev :: __private :: EntryShape"), "{out}");
    assert!(out.contains("crate :: re :: rt :: DeviceInput"), "{out}");
    assert!(
        out.contains(". matrix_u32 (\"m32\" , & mut m32) ?"),
        "{out}"
    );
    assert!(out.contains("dev :: DisjointSlice2dU32 ::"), "{out}");
    assert!(out.contains("KernelFunction :: new (& self :: M"), "{out}");
    assert!(
        out.contains("pub config : crate :: re :: rt :: LaunchConfig < 's >"),
        "{out}"
    );
    // The launcher's crate, which the module's must be.
    assert!(
        out.contains(
            "& k :: Kernel :: DESCRIPTION_0 , crate :: re :: rt :: crate_identity ! () ,)"
        ),
        "{out}"
    );
    assert!(
        out.contains(r#"export_name = "k_f32""#) && out.contains(r#"export_name = "k_u64""#),
        "{out}"
    );
}

#[test]
fn a_kernel_with_errors_keeps_its_function_and_launcher() {
    let out = expand(
        quote!(unsafe(runtime_crate = "rt")),
        quote!(
            /// Docs.
            pub const fn k(a: &[f32], v: Vec<f32>, (x, y): (u8, u8), b: Block<Reading>) {
                body();
            }
        ),
    )
    .to_string();
    assert!(out.contains("compile_error"), "{out}");
    // The function, on the host, without what cannot compile.
    assert!(
        out.contains("pub fn k (a : & [f32] , v : Vec < f32 > , (x , y) : (u8 , u8) , b : Block < Reading >) { body () ; }"),
        "{out}"
    );
    assert!(!out.contains("const fn"), "{out}");
    // The launcher: typed where the parameter is good, any value where
    // not, nothing for the device-built token.
    assert!(out.contains("pub mod k"), "{out}");
    assert!(
        out.contains("pub fn launch (self , a : impl rt :: DeviceInput < f32 > , v : impl :: core :: marker :: Sized , __argument_2 : impl :: core :: marker :: Sized) -> rt :: Result < () >"),
        "{out}"
    );
    assert!(out.contains("pub fn arguments"), "{out}");
    // Nothing for the device.
    assert!(!out.contains("ptx-kernel"), "{out}");
}

#[test]
fn a_generic_kernel_with_errors_keeps_its_generic_launcher() {
    let out = expand(
        quote!(),
        quote!(
            pub fn k<'a, const N: usize>(o: DisjointSlice<u32>) {
                let s = shared_array!(u32; N);
            }
        ),
    )
    .to_string();
    assert!(out.contains("must list the values"), "{out}");
    assert!(
        out.contains("pub fn launch < const N : usize > (self"),
        "{out}"
    );
    // `shared_array!` in a generic function would be another error.
    assert!(!out.contains("shared_array"), "{out}");
    assert!(out.contains("unimplemented"), "{out}");
}

#[test]
fn an_item_that_is_not_a_function_is_kept() {
    let out = expand(
        quote!(),
        quote!(
            struct S;
        ),
    )
    .to_string();
    assert!(out.contains("applies to a function"), "{out}");
    assert!(out.ends_with("struct S ;"), "{out}");
}

/// `cluster = ...`: the declaration is in the description (checked shape),
/// the `Cluster` witness is built on the device, and each thread ends with
/// the cluster's last pairs after the body; the refusals: a `Cluster`
/// without `cluster`, `cluster` without `arch` of sm_90 or later, with
/// `cooperative`, twice, with four extents, and two `Cluster`s.
#[test]
fn cluster_kernels_declare_their_shape_and_sm_90() {
    let out = expanded(
        quote!(arch = "sm_90", block = 64, cluster = (2, 2)),
        quote!(
            pub fn k(mut o: DisjointSlice<u32>, c: Cluster) {}
        ),
    );
    assert!(out.contains("declared_cluster_shape (2 , 2 , 1)"), "{out}");
    assert!(
        out.contains("Cluster :: for_kernel_entry (& __gpu_cluster_state)"),
        "{out}"
    );
    // Each thread ends with the cluster's last pairs, after the body.
    let finish = out
        .find("__gpu_cluster_state . finish ()")
        .expect("the cluster's end");
    let body = out.find(":: body :: <").expect("the body's call");
    assert!(body < finish, "{out}");
    // No launcher argument for the witness.
    let item = quote!(
        pub fn k(mut o: DisjointSlice<u32>, c: Cluster) {}
    );
    assert!(error(quote!(), item.clone()).contains("a `Cluster` needs a cluster launch"));
    let no_arch = error(quote!(cluster = 2), item.clone());
    assert!(
        no_arch.contains("thread-block clusters need sm_90 or later, and it declares no `arch`"),
        "{no_arch}"
    );
    let old = error(quote!(arch = "sm_80", cluster = 2), item.clone());
    assert!(old.contains("it declares `arch = \"sm_80\"`"), "{old}");
    // sm_90a and later are accepted.
    expanded(quote!(arch = "sm_90a", cluster = 2), item.clone());
    expanded(quote!(arch = "sm_100", cluster = 4), item.clone());
    let both = error(
        quote!(arch = "sm_90", cluster = 2, cooperative),
        item.clone(),
    );
    assert!(both.contains("both `cooperative` and `cluster`"), "{both}");
    let twice = error(
        quote!(arch = "sm_90", cluster = 2, cluster = 4),
        item.clone(),
    );
    assert!(twice.contains("`cluster` is given twice"), "{twice}");
    let four = errors(quote!(arch = "sm_90", cluster = (1, 2, 3, 4)), item);
    assert!(
        four[0].contains("`cluster` takes one to three extents"),
        "{four:?}"
    );
    let two = error(
        quote!(arch = "sm_90", cluster = 2),
        quote!(
            pub fn k(mut o: DisjointSlice<u32>, c: Cluster, d: Cluster) {}
        ),
    );
    assert!(two.contains("at most one `Cluster`"), "{two}");
}
