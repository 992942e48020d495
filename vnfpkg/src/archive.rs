//! Defensive zip access: entry names, entry kinds and sizes are checked before anything is
//! used, and every read counts the bytes really decompressed (declared sizes are only an early
//! hint, never trusted).

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::Digest;
use zip::ZipArchive;

use crate::Limits;
use crate::error::CsarError;

const CHUNK: usize = 64 * 1024;

/// Hash algorithms SOL004 manifests and Tacker accept (Tacker: sha-224/256/384/512).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HashAlgo {
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

impl HashAlgo {
    /// Accepts `SHA-256`, `sha256`, `sha_256`, ... case-insensitively.
    pub fn parse(name: &str) -> Option<Self> {
        let norm: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
        match norm.as_str() {
            "sha224" => Some(Self::Sha224),
            "sha256" => Some(Self::Sha256),
            "sha384" => Some(Self::Sha384),
            "sha512" => Some(Self::Sha512),
            _ => None,
        }
    }
}

/// A running digest of one of the [`HashAlgo`]s, hex when finished (also for checksums of
/// packages fetched from elsewhere, e.g. an NFVO's `VnfPkgInfo.checksum`).
pub enum Hasher {
    Sha224(sha2::Sha224),
    Sha256(sha2::Sha256),
    Sha384(sha2::Sha384),
    Sha512(sha2::Sha512),
}

impl Hasher {
    pub fn new(algo: HashAlgo) -> Self {
        match algo {
            HashAlgo::Sha224 => Self::Sha224(sha2::Sha224::new()),
            HashAlgo::Sha256 => Self::Sha256(sha2::Sha256::new()),
            HashAlgo::Sha384 => Self::Sha384(sha2::Sha384::new()),
            HashAlgo::Sha512 => Self::Sha512(sha2::Sha512::new()),
        }
    }

    pub fn update(&mut self, data: &[u8]) {
        match self {
            Self::Sha224(h) => h.update(data),
            Self::Sha256(h) => h.update(data),
            Self::Sha384(h) => h.update(data),
            Self::Sha512(h) => h.update(data),
        }
    }

    pub fn hex(self) -> String {
        match self {
            Self::Sha224(h) => hex::encode(h.finalize()),
            Self::Sha256(h) => hex::encode(h.finalize()),
            Self::Sha384(h) => hex::encode(h.finalize()),
            Self::Sha512(h) => hex::encode(h.finalize()),
        }
    }
}

/// A regular file inside the package.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    index: usize,
    pub name: String,
}

/// What a full scan learnt about one regular file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scanned {
    pub size: u64,
    pub digests: BTreeMap<HashAlgo, String>,
}

pub(crate) struct Package {
    path: PathBuf,
    archive: ZipArchive<File>,
    files: Vec<Entry>,
    dirs: Vec<String>,
    names: HashSet<String>,
    limits: Limits,
}

/// Why a bounded read stopped.
enum ReadFail {
    Exceeded,
    Entry(String),
    Sink(io::Error),
}

/// Rejects names that could land outside the extraction directory or mean different files on
/// different systems. `name` may end with `/` (directory entry).
pub(crate) fn check_entry_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty name");
    }
    if name.contains('\0') {
        return Err("NUL byte in name");
    }
    if name.contains('\\') {
        return Err("backslash in name");
    }
    if name.starts_with('/') {
        return Err("absolute path");
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("drive letter");
    }
    let trimmed = name.strip_suffix('/').unwrap_or(name);
    for segment in trimmed.split('/') {
        match segment {
            "" => return Err("empty path segment"),
            "." | ".." => return Err("relative path segment"),
            s if s.chars().any(char::is_control) => return Err("control character in name"),
            _ => {}
        }
    }
    Ok(())
}

impl Package {
    pub(crate) fn open(path: &Path, limits: &Limits) -> Result<Self, CsarError> {
        let file = File::open(path).map_err(|e| CsarError::io(path, e))?;
        let archive = ZipArchive::new(file).map_err(|e| CsarError::NotAZip(e.to_string()))?;
        if archive.len() > limits.max_entries {
            return Err(CsarError::TooManyEntries { found: archive.len(), max: limits.max_entries });
        }
        if archive.has_duplicate_names() {
            let mut seen = HashSet::new();
            let dup = archive.file_names_raw().find(|n| !seen.insert(n.to_vec())).map(String::from_utf8_lossy);
            return Err(CsarError::DuplicateEntry(dup.map(|d| d.into_owned()).unwrap_or_default()));
        }
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        let mut names = HashSet::new();
        let mut declared: u64 = 0;
        for index in 0..archive.len() {
            let entry = archive.by_index_data(index).map_err(|e| CsarError::NotAZip(e.to_string()))?;
            let name = entry.name().map_err(|e| CsarError::NotAZip(e.to_string()))?.into_owned();
            check_entry_name(&name).map_err(|reason| CsarError::UnsafeEntry { name: name.clone(), reason })?;
            if entry.is_symlink() {
                return Err(CsarError::UnsafeEntry { name, reason: "symbolic link" });
            }
            // Only regular files and directories: FIFOs, devices and sockets have no business here.
            let kind = entry.unix_mode().map(|m| m & 0o170_000).unwrap_or(0);
            if kind != 0 && kind != 0o100_000 && kind != 0o040_000 {
                return Err(CsarError::UnsafeEntry { name, reason: "not a regular file or directory" });
            }
            if entry.encrypted() {
                return Err(CsarError::BadEntry { name, reason: "encrypted entries are not supported".into() });
            }
            let bare = name.trim_end_matches('/').to_owned();
            if !names.insert(bare.clone()) {
                return Err(CsarError::DuplicateEntry(bare));
            }
            if entry.is_dir() {
                dirs.push(bare);
            } else {
                declared = declared.saturating_add(entry.size());
                files.push(Entry { index, name });
            }
        }
        // Early refusal on declared sizes; the real bytes are counted again while reading.
        if declared > limits.max_uncompressed_bytes {
            return Err(CsarError::TooLarge { max: limits.max_uncompressed_bytes });
        }
        // A file nested under another file ("a" and "a/b") cannot be extracted.
        let file_names: HashSet<&str> = files.iter().map(|f| f.name.as_str()).collect();
        for f in &files {
            let mut prefix = f.name.as_str();
            while let Some((parent, _)) = prefix.rsplit_once('/') {
                if file_names.contains(parent) {
                    return Err(CsarError::UnsafeEntry { name: f.name.clone(), reason: "nested under a file entry" });
                }
                prefix = parent;
            }
        }
        Ok(Package { path: path.to_owned(), archive, files, dirs, names, limits: limits.clone() })
    }

    pub(crate) fn files(&self) -> &[Entry] {
        &self.files
    }

    pub(crate) fn has_file(&self, name: &str) -> bool {
        self.files.iter().any(|f| f.name == name)
    }

    /// Whether any entry (file or directory) has this path.
    pub(crate) fn has_path(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    fn entry(&self, name: &str) -> Option<Entry> {
        self.files.iter().find(|f| f.name == name).cloned()
    }

    /// Streams one entry into `sink`, stopping after `limit` real bytes.
    fn read_into(
        &mut self,
        entry: &Entry,
        limit: u64,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<u64, ReadFail> {
        let zf = self.archive.by_index(entry.index).map_err(|e| ReadFail::Entry(e.to_string()))?;
        let mut reader = zf.take(limit.saturating_add(1));
        let mut buf = vec![0u8; CHUNK];
        let mut total: u64 = 0;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadFail::Entry(e.to_string())),
            };
            total += n as u64;
            if total > limit {
                return Err(ReadFail::Exceeded);
            }
            sink(buf.get(..n).unwrap_or_default()).map_err(ReadFail::Sink)?;
        }
        Ok(total)
    }

    /// Reads a small file (TOSCA.meta, manifest, VNFD YAML) charging `budget`, which is the
    /// remaining allowance for VNFD files. `Ok(None)` when the package has no such file.
    pub(crate) fn read_vnfd_file(&mut self, name: &str, budget: &mut u64) -> Result<Option<Vec<u8>>, CsarError> {
        let Some(entry) = self.entry(name) else { return Ok(None) };
        let mut data = Vec::new();
        let limit = (*budget).min(self.limits.max_uncompressed_bytes);
        let read = self.read_into(&entry, limit, &mut |chunk| {
            data.extend_from_slice(chunk);
            Ok(())
        });
        match read {
            Ok(n) => {
                *budget -= n;
                Ok(Some(data))
            }
            Err(ReadFail::Exceeded) if limit == self.limits.max_uncompressed_bytes => {
                Err(CsarError::TooLarge { max: self.limits.max_uncompressed_bytes })
            }
            Err(ReadFail::Exceeded) => Err(CsarError::VnfdTooLarge { max: self.limits.max_vnfd_bytes }),
            Err(ReadFail::Entry(reason)) => Err(CsarError::BadEntry { name: name.to_owned(), reason }),
            Err(ReadFail::Sink(e)) => Err(CsarError::io(&self.path, e)),
        }
    }

    /// Decompresses every regular file once, enforcing the total size limit on the real bytes
    /// and computing the digests asked for per path.
    pub(crate) fn scan(
        &mut self,
        wanted: &BTreeMap<String, Vec<HashAlgo>>,
    ) -> Result<BTreeMap<String, Scanned>, CsarError> {
        let max = self.limits.max_uncompressed_bytes;
        let mut remaining = max;
        let mut out = BTreeMap::new();
        for entry in self.files.clone() {
            let mut hashers: Vec<(HashAlgo, Hasher)> = wanted
                .get(&entry.name)
                .map(|algos| algos.iter().map(|a| (*a, Hasher::new(*a))).collect())
                .unwrap_or_default();
            let read = self.read_into(&entry, remaining, &mut |chunk| {
                hashers.iter_mut().for_each(|(_, h)| h.update(chunk));
                Ok(())
            });
            let size = match read {
                Ok(n) => n,
                Err(ReadFail::Exceeded) => return Err(CsarError::TooLarge { max }),
                Err(ReadFail::Entry(reason)) => return Err(CsarError::BadEntry { name: entry.name, reason }),
                Err(ReadFail::Sink(e)) => return Err(CsarError::io(&self.path, e)),
            };
            remaining -= size;
            let digests = hashers.into_iter().map(|(a, h)| (a, h.hex())).collect();
            out.insert(entry.name, Scanned { size, digests });
        }
        Ok(out)
    }

    /// Writes every directory and regular file below `root` (which must be empty).
    pub(crate) fn extract_into(&mut self, root: &Path) -> Result<(), CsarError> {
        let max = self.limits.max_uncompressed_bytes;
        let mut remaining = max;
        for dir in self.dirs.clone() {
            let target = root.join(&dir);
            std::fs::create_dir_all(&target).map_err(|e| CsarError::io(&target, e))?;
        }
        for entry in self.files.clone() {
            let target = root.join(&entry.name);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| CsarError::io(parent, e))?;
            }
            // create_new: never follow or overwrite anything already there.
            let file =
                File::options().write(true).create_new(true).open(&target).map_err(|e| CsarError::io(&target, e))?;
            let mut writer = io::BufWriter::new(file);
            let read = self.read_into(&entry, remaining, &mut |chunk| writer.write_all(chunk));
            let size = match read {
                Ok(n) => n,
                Err(ReadFail::Exceeded) => return Err(CsarError::TooLarge { max }),
                Err(ReadFail::Entry(reason)) => return Err(CsarError::BadEntry { name: entry.name, reason }),
                Err(ReadFail::Sink(e)) => return Err(CsarError::io(&target, e)),
            };
            writer.flush().map_err(|e| CsarError::io(&target, e))?;
            remaining -= size;
        }
        Ok(())
    }
}

/// sha-512 hex and byte length of a whole file, streamed.
pub(crate) fn hash_file(path: &Path) -> Result<(String, u64), CsarError> {
    let mut file = File::open(path).map_err(|e| CsarError::io(path, e))?;
    let mut hasher = sha2::Sha512::new();
    let mut buf = vec![0u8; CHUNK];
    let mut size: u64 = 0;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CsarError::io(path, e)),
        };
        size += n as u64;
        hasher.update(buf.get(..n).unwrap_or_default());
    }
    Ok((hex::encode(hasher.finalize()), size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names() {
        for ok in ["TOSCA-Metadata/TOSCA.meta", "Definitions/", "a b/c.yaml", "x"] {
            assert_eq!(check_entry_name(ok), Ok(()), "{ok}");
        }
        let bad = [
            ("../evil.sh", "relative path segment"),
            ("Scripts/../../evil.sh", "relative path segment"),
            ("./a", "relative path segment"),
            ("/etc/passwd", "absolute path"),
            ("Scripts\\..\\..\\evil.sh", "backslash in name"),
            ("C:/Windows/x", "drive letter"),
            ("a//b", "empty path segment"),
            ("", "empty name"),
            ("a\nb", "control character in name"),
        ];
        for (name, reason) in bad {
            assert_eq!(check_entry_name(name), Err(reason), "{name:?}");
        }
    }

    #[test]
    fn hash_algorithm_names() {
        assert_eq!(HashAlgo::parse("SHA-256"), Some(HashAlgo::Sha256));
        assert_eq!(HashAlgo::parse("sha512"), Some(HashAlgo::Sha512));
        assert_eq!(HashAlgo::parse("Sha-384"), Some(HashAlgo::Sha384));
        assert_eq!(HashAlgo::parse("sha_224"), Some(HashAlgo::Sha224));
        assert_eq!(HashAlgo::parse("MD5"), None);
    }

    #[test]
    fn sha256_of_known_text() {
        let mut h = Hasher::new(HashAlgo::Sha256);
        h.update(b"abc");
        assert_eq!(h.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
