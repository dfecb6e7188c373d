//! What the CUDA driver made of the Rust kernels' PTX on this GPU: registers
//! per thread, local memory per thread (spills) and resident blocks per SM,
//! read with `cuFuncGetAttribute` and the occupancy calculator through
//! `cust::sys`, from a second copy of the module loaded into the device's
//! primary context (the one the runtime uses). The driver compiles the PTX
//! for the GPU at load time, so these are the figures of the code that runs.
//! A cubin (nvcc's machine code, the CUDA C twins') loads the same way
//! ([`CompiledModule::load_cubin`]), for `cubin.rs` to launch its kernels.

use cust::sys::{
    cuCtxPopCurrent_v2, cuCtxPushCurrent_v2, cuDeviceGet, cuDevicePrimaryCtxRelease_v2,
    cuDevicePrimaryCtxRetain, cuFuncGetAttribute, cuGetErrorName, cuInit, cuModuleGetFunction,
    cuModuleLoadData, cuModuleUnload, cuOccupancyMaxActiveBlocksPerMultiprocessor, CUcontext,
    CUdevice, CUfunction, CUfunction_attribute, CUmodule, CUresult,
};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::ptr;

/// `Ok` for `CUDA_SUCCESS`, otherwise an error naming the call and the code.
pub fn check(call: &str, result: CUresult) -> Result<(), String> {
    if result == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name: *const c_char = ptr::null();
    // SAFETY: writes a pointer to a static string (or leaves it null).
    unsafe { cuGetErrorName(result, &mut name) };
    let name = if name.is_null() {
        format!("{result:?}")
    } else {
        // SAFETY: the driver's static, NUL-terminated error name.
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    };
    Err(format!("{call} failed: {name}"))
}

/// A module loaded from PTX into device 0's primary context, which stays
/// current on this thread while the value lives.
pub struct CompiledModule {
    device: CUdevice,
    module: CUmodule,
}

impl CompiledModule {
    /// Loads the newest of `variants` (a crate's PTX per architecture,
    /// oldest first, as `EmbeddedModule::ptx_variants` lists them) that the
    /// driver accepts: the text the runtime runs on the device.
    pub fn load_newest(variants: &[(&str, &str)]) -> Result<CompiledModule, String> {
        let mut last_error = "the module has no PTX".to_string();
        for (_, ptx) in variants.iter().rev() {
            match CompiledModule::load(ptx) {
                Ok(module) => return Ok(module),
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    /// Loads `ptx` (the driver compiles it for the GPU).
    fn load(ptx: &str) -> Result<CompiledModule, String> {
        let text = CString::new(ptx).map_err(|_| "the PTX contains a NUL byte".to_string())?;
        // SAFETY: `text` is NUL-terminated PTX that outlives the call.
        unsafe { CompiledModule::load_image(text.as_ptr().cast()) }
    }

    /// Loads the cubin file at `path` (machine code: the driver loads it as
    /// it is, or refuses it when it is not this GPU's architecture).
    #[allow(dead_code)] // the kernels benchmark, which shares this file, loads none
    pub fn load_cubin(path: &Path) -> Result<CompiledModule, String> {
        let image = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // An ELF file starts with 0x7f 'E' 'L' 'F': anything else (a PTX
        // text, which the driver would also take, or a truncated file) is
        // refused here, by name.
        if !image.starts_with(b"\x7fELF") {
            return Err(format!("{} is not a cubin (no ELF header)", path.display()));
        }
        // SAFETY: `image` is a whole ELF file that outlives the call; the
        // driver copies what it keeps.
        unsafe { CompiledModule::load_image(image.as_ptr().cast()) }
    }

    /// Loads `image` (PTX or a cubin) into device 0's primary context.
    ///
    /// # Safety
    /// `image` points to a whole module image the driver can read: a
    /// NUL-terminated PTX text or a complete cubin, valid for the call.
    unsafe fn load_image(image: *const c_void) -> Result<CompiledModule, String> {
        let mut device: CUdevice = 0;
        let mut context: CUcontext = ptr::null_mut();
        // SAFETY: plain driver calls with valid out-pointers; the context
        // retained here is pushed, and popped and released in `drop` (or
        // below, on failure).
        unsafe {
            check("cuInit", cuInit(0))?;
            check("cuDeviceGet", cuDeviceGet(&mut device, 0))?;
            check(
                "cuDevicePrimaryCtxRetain",
                cuDevicePrimaryCtxRetain(&mut context, device),
            )?;
            if let Err(e) = check("cuCtxPushCurrent", cuCtxPushCurrent_v2(context)) {
                cuDevicePrimaryCtxRelease_v2(device);
                return Err(e);
            }
        }
        let mut module: CUmodule = ptr::null_mut();
        // SAFETY: `image` is a whole module image (the caller's promise);
        // the primary context is current.
        let loaded = check("cuModuleLoadData", unsafe {
            cuModuleLoadData(&mut module, image)
        });
        let compiled = CompiledModule { device, module };
        loaded.map(|()| compiled)
    }

    /// The kernel `entry` of the module (valid while the module lives).
    pub fn function(&self, entry: &str) -> Result<CUfunction, String> {
        let name = CString::new(entry).map_err(|_| format!("bad entry name {entry:?}"))?;
        let mut function: CUfunction = ptr::null_mut();
        // SAFETY: the module is loaded; `name` is NUL-terminated.
        check(&format!("cuModuleGetFunction({entry})"), unsafe {
            cuModuleGetFunction(&mut function, self.module, name.as_ptr())
        })?;
        Ok(function)
    }

    fn attribute(&self, entry: &str, attribute: CUfunction_attribute) -> Result<u32, String> {
        let function = self.function(entry)?;
        let mut value: c_int = 0;
        // SAFETY: `function` belongs to the loaded module; writes one int.
        check("cuFuncGetAttribute", unsafe {
            cuFuncGetAttribute(&mut value, attribute, function)
        })?;
        Ok(value.max(0) as u32)
    }

    /// Registers per thread of entry point `entry`.
    pub fn registers(&self, entry: &str) -> Result<u32, String> {
        self.attribute(entry, CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
    }

    /// Local memory per thread of `entry`, in bytes (stack frame and spills).
    pub fn local_bytes(&self, entry: &str) -> Result<u32, String> {
        self.attribute(
            entry,
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
        )
    }

    /// Blocks of `block` threads of `entry` (no dynamic shared memory) that
    /// one SM holds at once.
    pub fn max_blocks_per_sm(&self, entry: &str, block: u32) -> Result<u32, String> {
        let function = self.function(entry)?;
        let mut blocks: c_int = 0;
        // SAFETY: `function` belongs to the loaded module; writes one int.
        check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut blocks, function, block as c_int, 0)
        })?;
        Ok(blocks.max(0) as u32)
    }
}

impl Drop for CompiledModule {
    fn drop(&mut self) {
        let mut popped: CUcontext = ptr::null_mut();
        // SAFETY: the module (if loaded) is unloaded once, in the context
        // pushed in `load`, which is then popped and released once. Failures
        // leave only a module or a context reference behind.
        unsafe {
            if !self.module.is_null() {
                cuModuleUnload(self.module);
            }
            cuCtxPopCurrent_v2(&mut popped);
            cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}
