use super::{inspect, inspect_with};
use crate::testing::{CsarBuilder, SAMPLE_DF_SIMPLE, SAMPLE_INSTALL_SH, SAMPLE_TOP, SAMPLE_TYPES, SAMPLE_VNFD_ID};
use crate::{CsarError, Limits};

fn inspect_bytes(bytes: &[u8]) -> Result<crate::PackageContents, CsarError> {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), bytes).unwrap();
    crate::inspect(file.path(), &Limits::default())
}

#[test]
fn not_a_zip() {
    let err = inspect_bytes(b"this is a text file, not a CSAR").unwrap_err();
    assert!(matches!(err, CsarError::NotAZip(_)), "{err}");
    assert!(err.to_string().starts_with("the VNF package is not a valid zip archive"), "{err}");
    assert!(err.is_package_error());
}

#[test]
fn huge_compressible_entry_is_refused() {
    // 24 MiB of zeros deflate to about 24 KiB.
    let zip = CsarBuilder::sample().file("Files/zeros.bin", vec![0u8; 24 << 20]).to_bytes().unwrap();
    assert!(zip.len() < 1 << 20);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &zip).unwrap();
    let limits = Limits { max_uncompressed_bytes: 8 << 20, ..Limits::default() };
    let err = crate::inspect(file.path(), &limits).unwrap_err();
    assert!(matches!(err, CsarError::TooLarge { max } if max == 8 << 20), "{err}");
}

#[test]
fn total_of_many_entries_is_counted() {
    // Each entry is under the limit; together they are not.
    let mut builder = CsarBuilder::sample();
    for i in 0..8 {
        builder = builder.file(&format!("Files/part{i}.bin"), vec![0u8; 1 << 20]);
    }
    let limits = Limits { max_uncompressed_bytes: 4 << 20, ..Limits::default() };
    let err = inspect_with(&builder, &limits).unwrap_err();
    assert!(matches!(err, CsarError::TooLarge { .. }), "{err}");
}

/// Rewrites the declared uncompressed size of the first entry in both headers.
fn lie_about_size(mut zip: Vec<u8>, declared: u32) -> Vec<u8> {
    zip[22..26].copy_from_slice(&declared.to_le_bytes());
    let cd = zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    zip[cd + 24..cd + 28].copy_from_slice(&declared.to_le_bytes());
    zip
}

#[test]
fn entry_larger_than_its_declared_size_is_refused() {
    let zip = CsarBuilder::new().file("big.bin", vec![0u8; 1 << 20]).to_bytes().unwrap();
    let err = inspect_bytes(&lie_about_size(zip, 100)).unwrap_err();
    assert!(matches!(&err, CsarError::BadEntry { name, .. } if name == "big.bin"), "{err}");
}

#[test]
fn too_many_entries() {
    let mut builder = CsarBuilder::sample();
    for i in 0..30 {
        builder = builder.file(&format!("Files/f{i}.txt"), "x");
    }
    let limits = Limits { max_entries: 20, ..Limits::default() };
    let err = inspect_with(&builder, &limits).unwrap_err();
    assert!(matches!(err, CsarError::TooManyEntries { max: 20, .. }), "{err}");
    assert!(err.to_string().contains("more than the allowed 20"), "{err}");
}

#[test]
fn path_traversal_names_are_refused() {
    for name in ["../evil.sh", "/etc/cron.d/evil", "Scripts/../../evil.sh", "Scripts\\..\\..\\evil.sh", "C:/evil.sh"] {
        let err = inspect(&CsarBuilder::sample().file(name, "echo pwned")).unwrap_err();
        assert!(matches!(&err, CsarError::UnsafeEntry { name: n, .. } if n == name), "{name}: {err}");
        assert!(err.to_string().contains(&format!("{name:?}")), "{err}");
    }
}

#[test]
fn symlinks_are_refused() {
    let err = inspect(&CsarBuilder::sample().symlink("Scripts/passwd", "/etc/passwd")).unwrap_err();
    assert!(matches!(err, CsarError::UnsafeEntry { reason: "symbolic link", .. }), "{err}");
}

#[test]
fn corrupted_entry_is_reported() {
    let builder = CsarBuilder::sample().stored();
    let mut zip = builder.to_bytes().unwrap();
    let needle = builder.get(SAMPLE_INSTALL_SH).unwrap();
    let at = zip.windows(needle.len()).position(|w| w == needle).unwrap();
    zip[at + 12] ^= 0x20;
    let err = inspect_bytes(&zip).unwrap_err();
    assert!(matches!(&err, CsarError::BadEntry { name, .. } if name == SAMPLE_INSTALL_SH), "{err}");
}

#[test]
fn missing_tosca_meta() {
    let err = inspect(&CsarBuilder::sample().without_tosca_meta()).unwrap_err();
    assert_eq!(err.to_string(), "the VNF package has no TOSCA-Metadata/TOSCA.meta and no single YAML file at its root");
}

#[test]
fn package_zipped_with_its_folder_gets_a_hint() {
    let zip = CsarBuilder::new()
        .file("pkg/TOSCA-Metadata/TOSCA.meta", "Entry-Definitions: Definitions/a.yaml\n")
        .file("pkg/Definitions/a.yaml", "a: 1\n");
    let err = inspect(&zip).unwrap_err();
    assert!(err.to_string().contains("found pkg/TOSCA-Metadata/TOSCA.meta"), "{err}");
}

#[test]
fn several_root_yaml_files_without_tosca_meta_are_ambiguous() {
    let err = inspect(&CsarBuilder::new().file("a.yaml", "a: 1\n").file("b.yml", "b: 1\n")).unwrap_err();
    assert!(matches!(err, CsarError::AmbiguousRootYaml { ref files } if files.len() == 2), "{err}");
}

#[test]
fn entry_definitions_pointing_nowhere() {
    let err = inspect(&CsarBuilder::sample().entry_definitions("Definitions/nope.yaml")).unwrap_err();
    assert_eq!(err.to_string(), "Entry-Definitions file Definitions/nope.yaml is not in the VNF package");
}

#[test]
fn tosca_meta_without_entry_definitions() {
    let builder =
        CsarBuilder::sample().file("TOSCA-Metadata/TOSCA.meta", "TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\n");
    let err = inspect(&builder).unwrap_err();
    assert!(matches!(err, CsarError::MissingEntryDefinitions), "{err}");
}

#[test]
fn yaml_syntax_error_names_file_and_line() {
    let builder = CsarBuilder::sample().edit(SAMPLE_DF_SIMPLE, |s| {
        s.replacen(
            "description: Simple deployment flavour of the sample VNF\n",
            "description: Simple deployment flavour of the sample VNF\n  oops: 1\n",
            1,
        )
    });
    let text = String::from_utf8(builder.get(SAMPLE_DF_SIMPLE).unwrap().to_vec()).unwrap();
    let bad_line = text.lines().position(|l| l == "  oops: 1").unwrap() + 1;
    let err = inspect(&builder).unwrap_err();
    assert!(
        matches!(&err, CsarError::Yaml { file, line: Some(l), .. } if file == SAMPLE_DF_SIMPLE && *l == bad_line),
        "{err}"
    );
    assert!(
        err.to_string().starts_with(&format!("VNFD YAML error in file {SAMPLE_DF_SIMPLE} at line {bad_line}: ")),
        "{err}"
    );
}

#[test]
fn missing_descriptor_id() {
    let builder =
        CsarBuilder::sample().edit(SAMPLE_TYPES, |s| s.replace(&format!("        default: {SAMPLE_VNFD_ID}\n"), ""));
    let err = inspect(&builder).unwrap_err();
    assert!(matches!(err, CsarError::MissingVnfProperty { property: "descriptor_id" }), "{err}");
    assert!(err.to_string().starts_with("the VNFD does not define the VNF property descriptor_id"), "{err}");
}

#[test]
fn descriptor_id_given_only_as_get_input_is_missing() {
    let builder = CsarBuilder::single_file().edit(crate::testing::SINGLE_VNFD, |s| {
        s.replace(&format!("descriptor_id: {SAMPLE_VNFD_ID}"), "descriptor_id: { get_input: id }")
    });
    let err = inspect(&builder).unwrap_err();
    assert!(matches!(err, CsarError::MissingVnfProperty { property: "descriptor_id" }), "{err}");
}

#[test]
fn artifact_hash_mismatch() {
    let builder = CsarBuilder::sample().artifact_hash(SAMPLE_INSTALL_SH, "SHA-256", &"0".repeat(64));
    let err = inspect(&builder).unwrap_err();
    assert!(matches!(&err, CsarError::ChecksumMismatch { path, .. } if path == SAMPLE_INSTALL_SH), "{err}");
    assert!(err.to_string().starts_with("checksum mismatch for Scripts/install.sh: SHA-256 declared 0000"), "{err}");
}

#[test]
fn artifact_with_unknown_algorithm_or_missing_file() {
    let err = inspect(&CsarBuilder::sample().artifact_hash(SAMPLE_INSTALL_SH, "MD5", "00")).unwrap_err();
    assert!(matches!(err, CsarError::UnsupportedHashAlgorithm { .. }), "{err}");
    let err = inspect(&CsarBuilder::sample().artifact_hash("Scripts/gone.sh", "SHA-256", "00")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "artifact Scripts/gone.sh listed in TOSCA-Metadata/TOSCA.meta is not in the VNF package"
    );
}

#[test]
fn missing_import_of_own_file() {
    let builder =
        CsarBuilder::sample().edit(SAMPLE_TOP, |s| s.replace("- sample_df_small.yaml", "- sample_df_large.yaml"));
    let err = inspect(&builder).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("VNFD file {SAMPLE_TOP} imports sample_df_large.yaml, which is not in the VNF package")
    );
}

#[test]
fn vnfd_text_beyond_its_limit() {
    let limits = Limits { max_vnfd_bytes: 2000, ..Limits::default() };
    let err = inspect_with(&CsarBuilder::sample(), &limits).unwrap_err();
    assert!(matches!(err, CsarError::VnfdTooLarge { max: 2000 }), "{err}");
}

#[test]
fn inconsistent_policies_are_refused_at_onboarding() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "default_level: instantiation_level_1",
            "default_level: instantiation_level_9",
            "default_level instantiation_level_9",
        ),
        (
            "            delta_1:\n              number_of_instances: 1",
            "            delta_2:\n              number_of_instances: 1",
            "does not define delta delta_1",
        ),
        ("aspect: VDU1_scale", "aspect: VDU9_scale", "unknown scaling aspect \"VDU9_scale\""),
        ("                  scale_level: 2", "                  scale_level: 7", "exceeds max_scale_level 3"),
        (
            "        - virtual_link: internalVL1\n\n    VDU2_CP1",
            "        - virtual_link: internalVL9\n\n    VDU2_CP1",
            "unknown virtual link internalVL9",
        ),
    ];
    for (from, to, expected) in cases {
        let builder = CsarBuilder::sample().edit(SAMPLE_DF_SIMPLE, |s| {
            assert!(s.contains(from), "{from}");
            s.replacen(from, to, 1)
        });
        let err = inspect(&builder).unwrap_err();
        assert!(matches!(err, CsarError::InvalidVnfd(_)), "{err}");
        assert!(err.to_string().contains(expected), "{expected}: {err}");
    }
}

#[test]
fn vdu_levels_for_undefined_levels_use_tackers_wording() {
    let builder = CsarBuilder::sample().edit(SAMPLE_DF_SIMPLE, |s| {
        s.replace(
            "            instantiation_level_2:\n              number_of_instances: 3",
            "            instantiation_level_3:\n              number_of_instances: 3",
        )
    });
    let err = inspect(&builder).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid VNFD: policy VDU1_instantiation_levels: level(s) instantiation_level_3 not found in defined levels instantiation_level_1,instantiation_level_2"
    );
}
