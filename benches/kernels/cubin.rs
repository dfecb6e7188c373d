//! Kernels of a CUDA C cubin launched in this process, on a runtime
//! stream: the pieces `benches/gemm.rs` needs to run a twin's kernels beside
//! the Rust ones (the same context, stream and events), through `cust::sys`.
//! A kernel is found by its symbol's prefix in the cubin (a C++ name's full
//! mangling holds its parameter types), given its dynamic shared memory
//! limit, and launched with raw parameters ([`CubinKernel::launch`]). Tensor
//! maps for its `__grid_constant__ CUtensorMap` parameters are encoded with
//! the driver's `cuTensorMapEncodeTiled` ([`encode_tensor_map_2d`]), which
//! cust's CUDA 11 bindings lack: it is looked up in libcuda at run time.

use crate::compiled::{check, CompiledModule};
use cust::sys::{
    cuFuncGetAttribute, cuFuncSetAttribute, cuLaunchKernel, CUfunction, CUfunction_attribute,
    CUstream,
};
use gpu_runtime::Stream;
use std::ffi::{c_int, c_uint, c_void};
use std::path::Path;

/// A cubin loaded into device 0's primary context (the runtime's).
pub struct CubinModule {
    module: CompiledModule,
    /// The NUL-separated strings of the file (its symbol names among them).
    strings: Vec<String>,
}

impl CubinModule {
    /// Loads the cubin at `path`; an error names the file and why.
    pub fn load(path: &Path) -> Result<CubinModule, String> {
        let image = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let module = CompiledModule::load_cubin(path)?;
        let strings = image
            .split(|&b| b == 0)
            .filter_map(|s| std::str::from_utf8(s).ok())
            .map(str::to_string)
            .collect();
        Ok(CubinModule { module, strings })
    }

    /// The one kernel whose symbol starts with `prefix` (`_Z18gemm_bf16_mma_sync`:
    /// a mangled C++ name up to its parameter types), with its dynamic shared
    /// memory limit raised to `shared_bytes`; an error when none or several
    /// match.
    pub fn kernel(&self, prefix: &str, shared_bytes: u32) -> Result<CubinKernel<'_>, String> {
        let mut names: Vec<&str> = self
            .strings
            .iter()
            .map(String::as_str)
            .filter(|s| s.starts_with(prefix))
            .collect();
        names.sort_unstable();
        names.dedup();
        let name = match names[..] {
            [name] => name.to_string(),
            [] => return Err(format!("no symbol starting with {prefix} in the cubin")),
            _ => return Err(format!("several symbols start with {prefix}: {names:?}")),
        };
        let function = self.module.function(&name)?;
        let kernel = CubinKernel {
            function,
            name,
            _module: self,
        };
        let attribute = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        // SAFETY: `function` belongs to the loaded module; sets one int.
        let status =
            unsafe { cuFuncSetAttribute(kernel.function, attribute, shared_bytes as c_int) };
        check("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", status)?;
        Ok(kernel)
    }
}

/// A kernel of a [`CubinModule`] (which it borrows: the module outlives it).
pub struct CubinKernel<'m> {
    function: CUfunction,
    name: String,
    _module: &'m CubinModule,
}

impl CubinKernel<'_> {
    /// The kernel's symbol (its mangled name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The most threads a block may have (`__launch_bounds__`' first figure
    /// when it has one).
    pub fn max_threads(&self) -> Result<u32, String> {
        let mut value: c_int = 0;
        // SAFETY: `function` belongs to the loaded module; writes one int.
        check("cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", unsafe {
            cuFuncGetAttribute(
                &mut value,
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                self.function,
            )
        })?;
        Ok(value.max(0) as u32)
    }

    /// Queues one launch of `grid` blocks of `block` threads with
    /// `shared_bytes` of dynamic shared memory on `stream` (its CUDA handle:
    /// ordered with the runtime's work there, and timed by its events).
    /// `params` holds one pointer to each argument's value, in order.
    ///
    /// # Safety
    /// `params` matches the kernel's parameters in number, order, size and
    /// alignment; every pointer argument is valid for all the kernel reads
    /// and writes through it at these dimensions, until the launch has
    /// finished (order any reuse after it on `stream`); `shared_bytes` is
    /// at most the limit given to [`CubinModule::kernel`] and what the
    /// kernel's layout needs.
    pub unsafe fn launch(
        &self,
        grid: u32,
        block: u32,
        shared_bytes: u32,
        stream: &Stream,
        params: &mut [*mut c_void],
    ) -> Result<(), String> {
        // SAFETY: the caller's promises; the stream's handle is live while
        // `stream` is, and the driver copies the parameters' values before
        // returning.
        check(&format!("cuLaunchKernel({})", self.name), unsafe {
            cuLaunchKernel(
                self.function,
                grid,
                1,
                1,
                block,
                1,
                1,
                shared_bytes,
                stream.as_raw() as CUstream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }
}

/// A `CUtensorMap`: 128 opaque bytes, 64-byte aligned (`cuda.h`).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct TensorMapBytes(pub [u64; 16]);

/// `CU_TENSOR_MAP_DATA_TYPE_BFLOAT16` (`cuda.h`).
pub const DATA_TYPE_BFLOAT16: c_uint = 9;
/// `CU_TENSOR_MAP_SWIZZLE_128B`.
pub const SWIZZLE_128B: c_uint = 3;
/// `CU_TENSOR_MAP_L2_PROMOTION_L2_256B`.
pub const L2_PROMOTION_256B: c_uint = 3;
/// `CU_TENSOR_MAP_INTERLEAVE_NONE`, `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`
/// (out-of-bounds elements read as zeros).
const INTERLEAVE_NONE: c_uint = 0;
const OOB_FILL_NONE: c_uint = 0;

/// `cuTensorMapEncodeTiled`'s type (CUDA 12.0, `cuda.h`), its status an
/// int (cust's `CUresult` enum lacks the codes of newer drivers).
type EncodeTiled = unsafe extern "C" fn(
    map: *mut TensorMapBytes,
    data_type: c_uint,
    rank: c_uint,
    address: *mut c_void,
    dims: *const u64,
    strides: *const u64,
    boxes: *const u32,
    element_strides: *const u32,
    interleave: c_uint,
    swizzle: c_uint,
    l2_promotion: c_uint,
    oob_fill: c_uint,
) -> c_int;

/// The driver's `cuTensorMapEncodeTiled`, looked up once in the libcuda
/// the process has loaded (the runtime's and cust's).
fn encode_tiled() -> Result<EncodeTiled, String> {
    static FOUND: std::sync::OnceLock<Result<EncodeTiled, String>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            // SAFETY: opening the driver library runs its initialisers, as
            // the runtime's own opening of it did; the library is leaked
            // (never unloaded), so the function pointer stays valid.
            let library = unsafe { libloading::Library::new("libcuda.so.1") }
                .map_err(|e| format!("libcuda.so.1: {e}"))?;
            // SAFETY: the symbol is `cuda.h`'s cuTensorMapEncodeTiled, whose
            // C signature `EncodeTiled` spells out.
            let function = unsafe { library.get::<EncodeTiled>(b"cuTensorMapEncodeTiled\0") }
                .map(|symbol| *symbol)
                .map_err(|e| format!("cuTensorMapEncodeTiled (CUDA 12.0): {e}"))?;
            std::mem::forget(library);
            Ok(function)
        })
        .clone()
}

/// A 2-D tensor map of a row-major matrix at device address `base`: `cols`
/// elements a row (the inner, contiguous dimension), `rows` rows,
/// `row_bytes` between rows (a multiple of 16), read in boxes of
/// `box_cols × box_rows`, with `swizzle` and `l2_promotion` (`cuda.h`'s
/// values), out-of-bounds elements read as zeros. The driver checks every
/// figure (an error names the call and the code).
pub fn encode_tensor_map_2d(
    data_type: c_uint,
    base: u64,
    (cols, rows, row_bytes): (u64, u64, u64),
    (box_cols, box_rows): (u32, u32),
    swizzle: c_uint,
    l2_promotion: c_uint,
) -> Result<TensorMapBytes, String> {
    let encode = encode_tiled()?;
    let mut map = TensorMapBytes([0; 16]);
    let (dims, strides) = ([cols, rows], [row_bytes]);
    let (boxes, element_strides) = ([box_cols, box_rows], [1u32, 1]);
    // SAFETY: `map` is 128 writable, 64-byte aligned bytes; `dims`, `boxes`
    // and `element_strides` hold rank (2) entries and `strides` rank - 1;
    // the address is only recorded in the map, not accessed.
    let status = unsafe {
        encode(
            &mut map,
            data_type,
            2,
            base as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            INTERLEAVE_NONE,
            swizzle,
            l2_promotion,
            OOB_FILL_NONE,
        )
    };
    match status {
        0 => Ok(map),
        code => Err(format!(
            "cuTensorMapEncodeTiled({cols} x {rows}, {row_bytes} bytes a row, box {box_cols} x {box_rows}) failed: CUresult {code}"
        )),
    }
}
