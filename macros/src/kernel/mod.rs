//! `#[kernel]`: parse the function into a [`model::Kernel`], then emit the
//! device entry points ([`device`]) and the host launcher ([`host`]).

mod attribute;
mod device;
mod host;
mod model;
mod substitute;

use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let kernel = model::Kernel::parse(args, item)?;
    let device = device::emit(&kernel);
    let host = host::emit(&kernel);
    Ok(quote! {
        #device
        #host
    })
}

#[cfg(test)]
mod tests {
    use super::expand;
    use quote::quote;

    fn expanded(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        expand(args, item).expect("expands").to_string()
    }

    fn error(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        expand(args, item).expect_err("is rejected").to_string()
    }

    #[test]
    fn slices_become_pointer_and_length_on_the_device() {
        let out = expanded(
            quote!(),
            quote!(
                pub fn k(a: &[f32], n: u32, mut c: DisjointSlice<f32>) {}
            ),
        );
        assert!(out.contains(r#"extern "ptx-kernel" fn k (a__ptr : * const f32 , a__len : usize , n : u32 , c__ptr : * mut f32 , c__len : usize)"#), "{out}");
        assert!(out.contains("no_mangle"));
        // The twin for one-dimensional launches takes the same parameters.
        assert!(
            out.contains(r#"extern "ptx-kernel" fn k__1d (a__ptr : * const f32"#),
            "{out}"
        );
        assert!(
            out.contains(
                "__gpu_kernel_body_k :: < { :: gpu_device :: __private :: ONE_DIMENSIONAL } >"
            ),
            "{out}"
        );
        assert!(
            out.contains("__gpu_kernel_body_k :: < { :: gpu_device :: __private :: GENERAL } >"),
            "{out}"
        );
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
            out.contains(r#"extern "ptx-kernel" fn k__2d (a__ptr : * const f32"#),
            "{out}"
        );
        assert!(
            out.contains(
                "__gpu_kernel_body_k :: < { :: gpu_device :: __private :: Z_EXTENT_ONE } >"
            ),
            "{out}"
        );
        assert!(out.contains(r#"with_entry_2d ("k__2d")"#), "{out}");
        assert!(
            out.contains("call_2d : :: core :: option :: Option :: Some (__host_entry_2d)"),
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
        // knows it: evaluated in each PTX entry point, and once on the host.
        assert_eq!(out.matches("assume_block_shape").count(), 4, "{out}");
        assert_eq!(out.matches(shape).count(), 3, "{out}");
        assert!(out.contains("with_block_shape (BLOCK_SHAPE)"), "{out}");
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
        assert!(!out.contains("with_block_shape"), "{out}");
    }

    #[test]
    fn bad_options_are_rejected_with_reasons() {
        assert!(error(
            quote!(blocks = (32, 8)),
            quote!(
                fn k() {}
            )
        )
        .contains("unknown #[kernel] option `blocks`"));
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
        assert!(out.contains("; 5usize]"), "{out}");
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
            out.contains("fn fill_f32 (v : f32 , o__ptr : * mut f32"),
            "{out}"
        );
        assert!(
            out.contains("fn fill_u64 (v : u64 , o__ptr : * mut u64"),
            "{out}"
        );
        assert!(out.contains("impl Instance for f32"));
        assert!(out.contains("impl Instance for u64"));
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
            out.contains(r#"extern "ptx-kernel" fn k (c__ptr : * mut f32 , c__len : usize , c__rows : usize , c__cols : usize , g__ptr : * mut u8 , g__depth : usize , g__rows : usize , g__cols : usize)"#),
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
        assert!(out.contains("; 8usize]"), "{out}");
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
            out.contains("fn __gpu_kernel_body_k_16 < const __GPU_ENTRY : u8 >"),
            "{out}"
        );
        assert!(out.contains("shared_array ! (u32 ; 32)"), "{out}");
        assert!(
            out.contains("impl Instance for :: gpu_runtime :: Const < { 16 } >"),
            "{out}"
        );
        assert!(out.contains("fn k_32 ("), "{out}");
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
            quote!(),
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
                fn k((a, b): (u32, u32)) {}
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
}
