use crate::testing::{CsarBuilder, SAMPLE_INSTALL_SH, SAMPLE_TOP};
use crate::{CsarError, Limits};

fn entries_of(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn extracts_every_file_with_its_content() {
    let builder = CsarBuilder::sample().dir("Files/empty/");
    let zip = builder.to_tempfile().unwrap();
    let work = tempfile::tempdir().unwrap();
    let dest = work.path().join("pkg");
    crate::extract(zip.path(), &dest, &Limits::default()).unwrap();
    assert_eq!(std::fs::read(dest.join(SAMPLE_INSTALL_SH)).unwrap(), builder.get(SAMPLE_INSTALL_SH).unwrap());
    assert_eq!(std::fs::read(dest.join(SAMPLE_TOP)).unwrap(), builder.get(SAMPLE_TOP).unwrap());
    assert!(dest.join("TOSCA-Metadata/TOSCA.meta").is_file());
    assert!(dest.join("Files/empty").is_dir());
    // Only the destination remains: the staging directory was renamed, not copied.
    assert_eq!(entries_of(work.path()), ["pkg"]);
}

#[test]
fn extracts_into_an_existing_empty_directory() {
    let zip = CsarBuilder::sample().to_tempfile().unwrap();
    let work = tempfile::tempdir().unwrap();
    let dest = work.path().join("pkg");
    std::fs::create_dir(&dest).unwrap();
    crate::extract(zip.path(), &dest, &Limits::default()).unwrap();
    assert!(dest.join(SAMPLE_INSTALL_SH).is_file());
}

#[test]
fn refuses_a_non_empty_destination_and_leaves_it_alone() {
    let zip = CsarBuilder::sample().to_tempfile().unwrap();
    let work = tempfile::tempdir().unwrap();
    let dest = work.path().join("pkg");
    std::fs::create_dir(&dest).unwrap();
    std::fs::write(dest.join("keep.txt"), "mine").unwrap();
    let err = crate::extract(zip.path(), &dest, &Limits::default()).unwrap_err();
    assert!(matches!(err, CsarError::DestinationExists { .. }), "{err}");
    assert_eq!(entries_of(&dest), ["keep.txt"]);
    assert_eq!(entries_of(work.path()), ["pkg"]);
}

#[test]
fn failed_extraction_leaves_nothing_behind() {
    let bomb = CsarBuilder::sample().file("Files/zeros.bin", vec![0u8; 8 << 20]).to_tempfile().unwrap();
    let traversal = CsarBuilder::sample().file("../evil.sh", "x").to_tempfile().unwrap();
    let limits = Limits { max_uncompressed_bytes: 1 << 20, ..Limits::default() };
    for (zip, expect_too_large) in [(bomb, true), (traversal, false)] {
        let work = tempfile::tempdir().unwrap();
        let dest = work.path().join("pkg");
        let err = crate::extract(zip.path(), &dest, &limits).unwrap_err();
        assert_eq!(matches!(err, CsarError::TooLarge { .. }), expect_too_large, "{err}");
        assert!(entries_of(work.path()).is_empty(), "{:?}", entries_of(work.path()));
    }
}

#[test]
fn entry_inflating_beyond_its_declared_size_is_stopped_while_extracting() {
    // The header claims 100 bytes; the entry really inflates to 4 MiB.
    let mut zip = CsarBuilder::new().file("big.bin", vec![0u8; 4 << 20]).to_bytes().unwrap();
    zip[22..26].copy_from_slice(&100u32.to_le_bytes());
    let cd = zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    zip[cd + 24..cd + 28].copy_from_slice(&100u32.to_le_bytes());
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &zip).unwrap();
    let work = tempfile::tempdir().unwrap();
    let limits = Limits { max_uncompressed_bytes: 1 << 20, ..Limits::default() };
    let err = crate::extract(file.path(), &work.path().join("pkg"), &limits).unwrap_err();
    assert!(matches!(&err, CsarError::BadEntry { name, .. } if name == "big.bin"), "{err}");
    assert!(entries_of(work.path()).is_empty());
}
