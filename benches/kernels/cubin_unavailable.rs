//! Without the `bare-cust` feature (`cubin.rs` loads and launches a cubin
//! through `cust::sys`, which links libcuda): no cubin loads, and the table
//! of the twin in this process says why.

use std::convert::Infallible;
use std::ffi::{c_uint, c_void};
use std::marker::PhantomData;
use std::path::Path;

/// Never made: [`CubinModule::load`] always fails.
pub enum CubinModule {}

impl CubinModule {
    pub fn load(_path: &Path) -> Result<CubinModule, String> {
        Err(crate::common::BARE_CUST_NOT_BUILT.into())
    }
    pub fn kernel(&self, _prefix: &str, _shared_bytes: u32) -> Result<CubinKernel<'_>, String> {
        match *self {}
    }
}

/// Never made (there is no module to take it from).
pub struct CubinKernel<'m>(Infallible, PhantomData<&'m ()>);

impl CubinKernel<'_> {
    pub fn name(&self) -> &str {
        match self.0 {}
    }
    pub fn max_threads(&self) -> Result<u32, String> {
        match self.0 {}
    }
    /// # Safety
    /// Never callable: no value exists.
    pub unsafe fn launch(
        &self,
        _grid: u32,
        _block: u32,
        _shared_bytes: u32,
        _stream: &gpu_runtime::Stream,
        _params: &mut [*mut c_void],
    ) -> Result<(), String> {
        match self.0 {}
    }
}

/// A `CUtensorMap`'s 128 bytes, as `cubin.rs`'s.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct TensorMapBytes(pub [u64; 16]);

pub const DATA_TYPE_BFLOAT16: c_uint = 9;
pub const SWIZZLE_128B: c_uint = 3;
pub const L2_PROMOTION_256B: c_uint = 3;

pub fn encode_tensor_map_2d(
    _data_type: c_uint,
    _base: u64,
    _dims: (u64, u64, u64),
    _boxes: (u32, u32),
    _swizzle: c_uint,
    _l2_promotion: c_uint,
) -> Result<TensorMapBytes, String> {
    Err(crate::common::BARE_CUST_NOT_BUILT.into())
}
