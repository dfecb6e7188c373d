//! Without the `bare-cust` feature (`compiled.rs` reads the figures through
//! `cust::sys`, which links libcuda): no module loads, and the tables'
//! register columns say why.

/// Never made: [`CompiledModule::load_newest`] always fails.
pub enum CompiledModule {}

impl CompiledModule {
    pub fn load_newest(_variants: &[(&str, &str)]) -> Result<CompiledModule, String> {
        Err(crate::common::BARE_CUST_NOT_BUILT.into())
    }
    pub fn registers(&self, _entry: &str) -> Result<u32, String> {
        match *self {}
    }
    pub fn local_bytes(&self, _entry: &str) -> Result<u32, String> {
        match *self {}
    }
    pub fn max_blocks_per_sm(&self, _entry: &str, _block: u32) -> Result<u32, String> {
        match *self {}
    }
}
