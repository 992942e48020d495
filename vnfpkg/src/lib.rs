//! SOL004 VNF package (CSAR) reading and SOL001 VNFD summarising.
//!
//! Onboarding calls [`inspect`] on the uploaded zip, stores the [`PackageContents`] summary
//! and [`extract`]s the files so artifacts can be served with HTTP Range. SOL005
//! `GET .../vnfd` uses [`write_vnfd_zip`] or [`single_vnfd_yaml`]. The query methods on
//! [`Vnfd`] / [`Flavour`] answer LCM checks from the stored summary.
//!
//! Nothing here trusts the archive: entry names, kinds and counts are checked first, and
//! sizes are counted on the bytes really decompressed.

mod archive;
mod error;
mod loader;
mod meta;
mod model;
mod query;
mod summary;
mod units;
mod yaml;

#[cfg(any(test, feature = "test-support"))]
pub mod testing;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io::{Cursor, Write};
use std::path::Path;

pub use error::CsarError;
pub use model::{
    Artifact, Checksum, Cp, CpKind, DeployableModule, Flavour, InstantiationLevel, L3ProtocolData, PackageContents,
    PackageFile, PlacementRule, ScalingAspect, SoftwareImage, Vdu, VduProfile, VipCpd, VirtualCompute, VirtualCpd,
    VirtualLink, VirtualStorage, Vnfd,
};

use archive::Package;
pub use archive::{HashAlgo, Hasher};
use loader::{Doc, is_uri, resolve};
use meta::{ArtifactDecl, TOSCA_META};

/// Bounds applied while reading a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Total bytes all entries may decompress to (counted, not taken from the headers).
    pub max_uncompressed_bytes: u64,
    /// Number of entries (files and directories) in the zip.
    pub max_entries: usize,
    /// Total bytes of the VNFD files (TOSCA.meta, manifest and VNFD YAML) read into memory.
    pub max_vnfd_bytes: u64,
}

impl Default for Limits {
    /// 4 GiB expanded (room for a VM image or two), 10 000 entries, 16 MiB of VNFD text.
    fn default() -> Self {
        Limits { max_uncompressed_bytes: 4 << 30, max_entries: 10_000, max_vnfd_bytes: 16 << 20 }
    }
}

/// Where the VNFD starts and which artifacts carry checksums.
struct Layout {
    /// Original bytes of TOSCA-Metadata/TOSCA.meta, when the package has one.
    tosca_meta: Option<Vec<u8>>,
    entry_definitions: String,
    entry_manifest: Option<String>,
    artifacts: Vec<ArtifactDecl>,
}

fn utf8(name: &str, raw: Vec<u8>) -> Result<String, CsarError> {
    String::from_utf8(raw)
        .map_err(|_| CsarError::BadEntry { name: name.to_owned(), reason: "the file is not UTF-8 text".into() })
}

/// SOL004 clause 4.1: either TOSCA-Metadata/TOSCA.meta names the entry file, or (option 2)
/// a single YAML file sits at the root with an optional manifest of the same base name.
fn read_layout(pkg: &mut Package, budget: &mut u64) -> Result<Layout, CsarError> {
    if let Some(raw) = pkg.read_vnfd_file(TOSCA_META, budget)? {
        let text = String::from_utf8(raw.clone())
            .map_err(|_| CsarError::InvalidToscaMeta { line: 1, detail: "the file is not UTF-8 text".into() })?;
        let tosca_meta = meta::parse_tosca_meta(&text)?;
        let entry = resolve("", &tosca_meta.entry_definitions).ok_or_else(|| CsarError::PathOutsidePackage {
            file: TOSCA_META.into(),
            path: tosca_meta.entry_definitions.clone(),
        })?;
        if !pkg.has_file(&entry) {
            return Err(CsarError::EntryDefinitionsNotFound { path: tosca_meta.entry_definitions });
        }
        let mut artifacts = tosca_meta.artifacts;
        let entry_manifest = match tosca_meta.entry_manifest {
            Some(m) => {
                let path = resolve("", &m)
                    .ok_or_else(|| CsarError::PathOutsidePackage { file: TOSCA_META.into(), path: m.clone() })?;
                let raw = pkg.read_vnfd_file(&path, budget)?.ok_or(CsarError::ManifestNotFound { path: m })?;
                artifacts.extend(meta::parse_manifest(&utf8(&path, raw)?, &path)?);
                Some(path)
            }
            None => None,
        };
        return Ok(Layout { tosca_meta: Some(raw), entry_definitions: entry, entry_manifest, artifacts });
    }
    if pkg.has_path("TOSCA-Metadata") {
        return Err(CsarError::MissingToscaMeta {
            hint: Some("TOSCA-Metadata/ exists but holds no TOSCA.meta".into()),
        });
    }
    let root_yaml: Vec<String> = pkg
        .files()
        .iter()
        .map(|f| f.name.clone())
        .filter(|n| !n.contains('/') && (n.ends_with(".yaml") || n.ends_with(".yml")))
        .collect();
    match root_yaml.as_slice() {
        [] => {
            // A frequent mistake: zipping the package folder instead of its contents.
            let nested = pkg.files().iter().find(|f| f.name.ends_with("/TOSCA-Metadata/TOSCA.meta"));
            let hint =
                nested.map(|f| format!("found {}: zip the contents of the package folder, not the folder", f.name));
            Err(CsarError::MissingToscaMeta { hint })
        }
        [entry] => {
            let stem = entry.rsplit_once('.').map_or(entry.as_str(), |(s, _)| s);
            let manifest = format!("{stem}.mf");
            let artifacts = match pkg.read_vnfd_file(&manifest, budget)? {
                Some(raw) => meta::parse_manifest(&utf8(&manifest, raw)?, &manifest)?,
                None => Vec::new(),
            };
            let entry_manifest = pkg.has_file(&manifest).then_some(manifest);
            Ok(Layout { tosca_meta: None, entry_definitions: entry.clone(), entry_manifest, artifacts })
        }
        _ => Err(CsarError::AmbiguousRootYaml { files: root_yaml }),
    }
}

/// An artifact declaration checked for a usable path and algorithm.
struct PlannedArtifact {
    decl: ArtifactDecl,
    path: String,
    algo: Option<HashAlgo>,
    external: bool,
}

fn plan_artifacts(pkg: &Package, layout: &Layout) -> Result<Vec<PlannedArtifact>, CsarError> {
    layout
        .artifacts
        .iter()
        .map(|decl| {
            if is_uri(&decl.path) {
                return Ok(PlannedArtifact { decl: decl.clone(), path: decl.path.clone(), algo: None, external: true });
            }
            let path = resolve("", &decl.path).ok_or_else(|| CsarError::PathOutsidePackage {
                file: decl.declared_in.clone(),
                path: decl.path.clone(),
            })?;
            if !pkg.has_file(&path) {
                return Err(CsarError::ArtifactNotFound {
                    path: decl.path.clone(),
                    declared_in: decl.declared_in.clone(),
                });
            }
            let algo = HashAlgo::parse(&decl.algorithm).ok_or_else(|| CsarError::UnsupportedHashAlgorithm {
                path: decl.path.clone(),
                algorithm: decl.algorithm.clone(),
            })?;
            Ok(PlannedArtifact { decl: decl.clone(), path, algo: Some(algo), external: false })
        })
        .collect()
}

fn load_vnfd(pkg: &mut Package, entry: &str, budget: &mut u64) -> Result<Vec<Doc>, CsarError> {
    loader::load(entry, &mut |path| pkg.read_vnfd_file(path, budget))
}

/// Reads and checks a VNF package and summarises its VNFD.
///
/// Checks, in order: zip structure, entry count, entry names and kinds, the real
/// decompressed size of every entry, TOSCA.meta / manifest, artifact checksums, the VNFD.
pub fn inspect(zip_path: &Path, limits: &Limits) -> Result<PackageContents, CsarError> {
    let mut pkg = Package::open(zip_path, limits)?;
    let (sha512, size) = archive::hash_file(zip_path)?;
    let mut budget = limits.max_vnfd_bytes;

    // Layout errors are held back until the full scan has run, so a zip bomb or a corrupt
    // entry is reported as such even when TOSCA.meta is also wrong.
    let planned = read_layout(&mut pkg, &mut budget).and_then(|layout| {
        let artifacts = plan_artifacts(&pkg, &layout)?;
        Ok((layout, artifacts))
    });
    let mut wanted: BTreeMap<String, Vec<HashAlgo>> = BTreeMap::new();
    if let Ok((_, artifacts)) = &planned {
        for a in artifacts {
            if let Some(algo) = a.algo {
                wanted.entry(a.path.clone()).or_default().push(algo);
            }
        }
    }
    let scanned = pkg.scan(&wanted)?;
    let (layout, planned_artifacts) = planned?;

    let docs = load_vnfd(&mut pkg, &layout.entry_definitions, &mut budget)?;
    let vnfd = summary::summarise(&docs)?;

    let image_paths: Vec<&str> = vnfd.software_images.iter().filter_map(|i| i.image_path.as_deref()).collect();
    let mut artifacts: Vec<Artifact> = Vec::new();
    for planned in planned_artifacts {
        if let Some(algo) = planned.algo {
            let actual = scanned.get(&planned.path).and_then(|s| s.digests.get(&algo)).cloned().unwrap_or_default();
            if !actual.eq_ignore_ascii_case(planned.decl.hash.trim()) {
                return Err(CsarError::ChecksumMismatch {
                    path: planned.path,
                    algorithm: planned.decl.algorithm,
                    expected: planned.decl.hash,
                    actual,
                });
            }
        }
        // The same file may be declared in TOSCA.meta and in the manifest: list it once.
        if artifacts.iter().any(|a| a.path == planned.path) {
            continue;
        }
        artifacts.push(Artifact {
            software_image: image_paths.contains(&planned.path.as_str()),
            path: planned.path,
            checksum: Checksum { algorithm: planned.decl.algorithm, hash: planned.decl.hash },
            external: planned.external,
        });
    }

    let files = pkg
        .files()
        .iter()
        .map(|f| PackageFile { path: f.name.clone(), size: scanned.get(&f.name).map(|s| s.size).unwrap_or(0) })
        .collect();
    let vnfd_files: Vec<String> = docs.iter().map(|d| d.path.clone()).collect();
    Ok(PackageContents {
        checksum: Checksum { algorithm: "sha512".into(), hash: sha512 },
        size,
        has_tosca_metadata: layout.tosca_meta.is_some(),
        entry_definitions: layout.entry_definitions,
        entry_manifest: layout.entry_manifest,
        multi_file_vnfd: vnfd_files.len() > 1,
        vnfd_files,
        vnfd,
        artifacts,
        files,
    })
}

/// Extracts every regular file of the package below `dest_dir`, which must not exist or be
/// an empty directory. The files are written to a temporary sibling directory that is renamed
/// into place at the end, so on error nothing is left behind.
pub fn extract(zip_path: &Path, dest_dir: &Path, limits: &Limits) -> Result<(), CsarError> {
    let mut pkg = Package::open(zip_path, limits)?;
    let dest_exists = match std::fs::read_dir(dest_dir) {
        Ok(mut it) => match it.next() {
            Some(_) => return Err(CsarError::DestinationExists { path: dest_dir.to_owned() }),
            None => true,
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(CsarError::io(dest_dir, e)),
    };
    let parent = match dest_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| CsarError::io(&parent, e))?;
    let staging =
        tempfile::Builder::new().prefix(".csar-extract-").tempdir_in(&parent).map_err(|e| CsarError::io(&parent, e))?;
    pkg.extract_into(staging.path())?;
    if dest_exists {
        std::fs::remove_dir(dest_dir).map_err(|e| CsarError::io(dest_dir, e))?;
    }
    std::fs::rename(staging.path(), dest_dir).map_err(|e| CsarError::io(dest_dir, e))?;
    // Renamed away: nothing left for the guard to delete.
    let _ = staging.keep();
    Ok(())
}

/// The files SOL005 `GET .../vnfd` returns: TOSCA-Metadata/TOSCA.meta (when present) and the
/// VNFD YAML files, as (package path, bytes) with the original bytes.
pub fn vnfd_files(zip_path: &Path, limits: &Limits) -> Result<Vec<(String, Vec<u8>)>, CsarError> {
    let mut pkg = Package::open(zip_path, limits)?;
    let mut budget = limits.max_vnfd_bytes;
    let layout = read_layout(&mut pkg, &mut budget)?;
    let mut out = Vec::new();
    if let Some(raw) = &layout.tosca_meta {
        out.push((TOSCA_META.to_owned(), raw.clone()));
    }
    let docs = load_vnfd(&mut pkg, &layout.entry_definitions, &mut budget)?;
    out.extend(docs.into_iter().map(|d| (d.path, d.raw)));
    Ok(out)
}

/// Writes the zip SOL005 `GET .../vnfd` returns for `Accept: application/zip`, with
/// [`Limits::default`].
pub fn write_vnfd_zip(zip_path: &Path, out: &mut impl Write) -> Result<(), CsarError> {
    write_vnfd_zip_with_limits(zip_path, &Limits::default(), out)
}

pub fn write_vnfd_zip_with_limits(zip_path: &Path, limits: &Limits, out: &mut impl Write) -> Result<(), CsarError> {
    let files = vnfd_files(zip_path, limits)?;
    let zip_err = |e: zip::result::ZipError| CsarError::ZipWrite(e.to_string());
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (path, raw) in &files {
        writer.start_file(path.as_str(), options).map_err(zip_err)?;
        writer.write_all(raw).map_err(|e| CsarError::ZipWrite(e.to_string()))?;
    }
    let bytes = writer.finish().map_err(zip_err)?.into_inner();
    out.write_all(&bytes).map_err(|e| CsarError::ZipWrite(e.to_string()))
}

/// The VNFD text for `Accept: text/plain`: `Some` when the VNFD is a single YAML file,
/// `None` when it spans several (Tacker then answers 400 "VNFD is implemented as multiple
/// yaml files, Accept header should be 'application/zip'.").
pub fn single_vnfd_yaml(zip_path: &Path, limits: &Limits) -> Result<Option<String>, CsarError> {
    let files = vnfd_files(zip_path, limits)?;
    let mut yaml = files.into_iter().filter(|(p, _)| p != TOSCA_META);
    match (yaml.next(), yaml.next()) {
        (Some((path, raw)), None) => utf8(&path, raw).map(Some),
        _ => Ok(None),
    }
}
