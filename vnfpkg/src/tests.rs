//! Package-level tests: CSARs are built in code with [`crate::testing::CsarBuilder`].

mod extract;
mod hostile;
mod package;
mod queries;

use crate::testing::CsarBuilder;
use crate::{CsarError, Limits, PackageContents};

pub(crate) fn inspect_with(builder: &CsarBuilder, limits: &Limits) -> Result<PackageContents, CsarError> {
    let file = builder.to_tempfile().unwrap();
    crate::inspect(file.path(), limits)
}

pub(crate) fn inspect(builder: &CsarBuilder) -> Result<PackageContents, CsarError> {
    inspect_with(builder, &Limits::default())
}

pub(crate) fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(data))
}
