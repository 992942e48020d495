//! The VNFD of a package, as onboarding stored it (the parsed summary; LCM never
//! re-reads the zip — Tacker did, at 0.4 s per create).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_db::{AnyConnection, DbError, DbResult};
use solgate_vnfpkg::PackageContents;

/// A package (its record without the VNFD summary) and its parsed contents.
pub type Loaded = (PackageRecord, Arc<PackageContents>);

/// The package and its parsed contents; `None` if the package is gone or not onboarded.
pub fn load(conn: &mut AnyConnection, package_id: &str) -> DbResult<Option<Loaded>> {
    let Some(found) = vnf_packages::find_lean(conn, package_id)? else { return Ok(None) };
    contents(conn, found)
}

/// The onboarded package of a vnfdId.
pub fn load_by_vnfd_id(conn: &mut AnyConnection, vnfd_id: &str) -> DbResult<Option<Loaded>> {
    let Some(found) = vnf_packages::find_lean_by_vnfd_id(conn, vnfd_id)? else { return Ok(None) };
    contents(conn, found)
}

/// Parsed summaries by package id, with the row version and update time they were read at:
/// every LCM operation needs its package's, and parsing it each time cost more than the
/// rest of reading the package. A row that changed has another version, so a stale entry
/// is never used.
static PARSED: LazyLock<Mutex<HashMap<String, Parsed>>> = LazyLock::new(Default::default);

struct Parsed {
    row_version: i64,
    updated_at: String,
    contents: Arc<PackageContents>,
}

/// Packages kept parsed at most; beyond, the cache starts again (a deployment uses few).
const PARSED_PACKAGES: usize = 32;

fn contents(conn: &mut AnyConnection, (record, has_vnfd): (PackageRecord, bool)) -> DbResult<Option<Loaded>> {
    if !has_vnfd {
        return Ok(None);
    }
    let cached = PARSED.lock().unwrap_or_else(PoisonError::into_inner).get(&record.id).and_then(|parsed| {
        (parsed.row_version == record.row_version && parsed.updated_at == record.updated_at)
            .then(|| parsed.contents.clone())
    });
    if let Some(contents) = cached {
        return Ok(Some((record, contents)));
    }
    let Some(text) = vnf_packages::vnfd_text(conn, &record.id, record.row_version)? else {
        // Changed since it was read: as it is now, and not kept.
        let Some(record) = vnf_packages::find(conn, &record.id)? else { return Ok(None) };
        let Some(stored) = record.vnfd.clone() else { return Ok(None) };
        let contents: PackageContents = serde_json::from_value(stored).map_err(DbError::Json)?;
        return Ok(Some((PackageRecord { vnfd: None, ..record }, Arc::new(contents))));
    };
    let contents: Arc<PackageContents> = Arc::new(serde_json::from_str(&text).map_err(DbError::Json)?);
    let mut parsed = PARSED.lock().unwrap_or_else(PoisonError::into_inner);
    if parsed.len() >= PARSED_PACKAGES {
        parsed.clear();
    }
    parsed.insert(
        record.id.clone(),
        Parsed { row_version: record.row_version, updated_at: record.updated_at.clone(), contents: contents.clone() },
    );
    Ok(Some((record, contents)))
}
