//! The VNFD of a package, as onboarding stored it (the parsed summary; LCM never
//! re-reads the zip — Tacker did, at 0.4 s per create).

use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_db::{AnyConnection, DbError, DbResult};
use solgate_vnfpkg::PackageContents;

/// The package and its parsed contents; `None` if the package is gone or not onboarded.
pub fn load(conn: &mut AnyConnection, package_id: &str) -> DbResult<Option<(PackageRecord, PackageContents)>> {
    let Some(record) = vnf_packages::find(conn, package_id)? else { return Ok(None) };
    contents(record)
}

/// The onboarded package of a vnfdId.
pub fn load_by_vnfd_id(conn: &mut AnyConnection, vnfd_id: &str) -> DbResult<Option<(PackageRecord, PackageContents)>> {
    let Some(record) = vnf_packages::find_by_vnfd_id(conn, vnfd_id)? else { return Ok(None) };
    contents(record)
}

fn contents(record: PackageRecord) -> DbResult<Option<(PackageRecord, PackageContents)>> {
    let Some(stored) = record.vnfd.clone() else { return Ok(None) };
    let contents: PackageContents = serde_json::from_value(stored).map_err(DbError::Json)?;
    Ok(Some((record, contents)))
}
