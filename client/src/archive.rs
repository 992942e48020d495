//! `package onboard DIR`: a CSAR directory (TOSCA-Metadata/, Definitions/, …) as a zip.

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Zips every file under `dir`, paths relative to it with `/` separators, in a stable
/// order (so the same directory gives the same checksum).
pub fn zip_directory(dir: &Path) -> Result<Vec<u8>> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    files.sort();
    if files.is_empty() {
        return Err(Error::Config(format!("{}: no files to package", dir.display())));
    }
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for relative in files {
        let path = dir.join(&relative);
        let bytes = std::fs::read(&path).map_err(|error| Error::io(&path, error))?;
        writer.start_file(relative.as_str(), options).map_err(|error| Error::Config(format!("zip: {error}")))?;
        writer.write_all(&bytes).map_err(|error| Error::io(&path, error))?;
    }
    let cursor = writer.finish().map_err(|error| Error::Config(format!("zip: {error}")))?;
    Ok(cursor.into_inner())
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|error| Error::io(dir, error))?;
    for entry in entries {
        let entry = entry.map_err(|error| Error::io(dir, error))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(|error| Error::io(&path, error))?;
        if kind.is_dir() {
            collect(root, &path, files)?;
        } else if kind.is_file() {
            let relative = path.strip_prefix(root).map_err(|error| Error::Config(error.to_string()))?;
            let parts: Vec<_> =
                relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
            files.push(parts.join("/"));
        }
        // Symbolic links are left out: a package carries its files, not links out of it.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_becomes_a_zip_with_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("TOSCA-Metadata")).unwrap();
        std::fs::write(dir.path().join("TOSCA-Metadata/TOSCA.meta"), "TOSCA-Meta-File-Version: 1.0\n").unwrap();
        std::fs::write(dir.path().join("a.yaml"), "x: 1\n").unwrap();
        let bytes = zip_directory(dir.path()).unwrap();
        let archive = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
        let names: Vec<String> = archive.file_names().map(|name| name.unwrap().to_string()).collect();
        assert_eq!(names.len(), 2);
        assert!(
            names.iter().any(|n| n == "TOSCA-Metadata/TOSCA.meta") && names.iter().any(|n| n == "a.yaml"),
            "{names:?}"
        );
        assert_eq!(zip_directory(dir.path()).unwrap(), bytes, "stable");
        let empty = tempfile::tempdir().unwrap();
        assert!(zip_directory(empty.path()).is_err());
    }
}
