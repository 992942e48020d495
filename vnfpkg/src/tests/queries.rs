use std::collections::BTreeMap;

use super::inspect;
use crate::Vnfd;
use crate::testing::{CsarBuilder, SAMPLE_DF_SIMPLE, SAMPLE_DF_SMALL};

fn sample_vnfd(builder: &CsarBuilder) -> Vnfd {
    inspect(builder).unwrap().vnfd
}

fn counts(pairs: &[(&str, u32)]) -> BTreeMap<String, u32> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn lookups_by_id() {
    let vnfd = sample_vnfd(&CsarBuilder::sample());
    assert!(vnfd.flavour("nosuch").is_none());
    let simple = vnfd.flavour("simple").unwrap();
    assert_eq!(simple.default_instantiation_level().unwrap().id, "instantiation_level_1");
    assert!(simple.instantiation_level("nosuch").is_none());
    assert_eq!(simple.max_scale_level("VDU1_scale"), Some(3));
    assert_eq!(simple.max_scale_level("nosuch"), None);
    assert!(vnfd.flavour("small").unwrap().default_instantiation_level().is_none());
}

#[test]
fn initial_instances_follow_vdu_instantiation_levels() {
    let vnfd = sample_vnfd(&CsarBuilder::sample());
    let simple = vnfd.flavour("simple").unwrap();
    assert_eq!(simple.initial_vdu_instances(None), Some(counts(&[("VDU1", 1), ("VDU2", 1)])));
    assert_eq!(simple.initial_vdu_instances(Some("instantiation_level_2")), Some(counts(&[("VDU1", 3), ("VDU2", 1)])));
    assert_eq!(simple.initial_vdu_instances(Some("nosuch")), None);
    assert_eq!(simple.initial_scale_levels(Some("instantiation_level_2")), Some(counts(&[("VDU1_scale", 2)])));
    assert_eq!(simple.initial_scale_levels(None), Some(counts(&[("VDU1_scale", 0)])));
}

#[test]
fn without_vdu_instantiation_levels_the_scale_info_and_initial_delta_decide() {
    // Drop VDU1's VduInstantiationLevels and make one scaling step add 2 instances:
    // level 2 (scale_level 2) then gives 1 initial + 2 * 2.
    let builder = CsarBuilder::sample().edit(SAMPLE_DF_SIMPLE, |s| {
        let start = s.find("    - VDU1_instantiation_levels:").unwrap();
        let end = s.find("    - VDU2_instantiation_levels:").unwrap();
        let mut out = s.to_owned();
        out.replace_range(start..end, "");
        out.replace(
            "            delta_1:\n              number_of_instances: 1",
            "            delta_1:\n              number_of_instances: 2",
        )
    });
    let vnfd = sample_vnfd(&builder);
    let simple = vnfd.flavour("simple").unwrap();
    assert_eq!(simple.initial_vdu_instances(Some("instantiation_level_2")), Some(counts(&[("VDU1", 5), ("VDU2", 1)])));
    assert_eq!(simple.initial_vdu_instances(Some("instantiation_level_1")), Some(counts(&[("VDU1", 1), ("VDU2", 1)])));
}

#[test]
fn without_initial_delta_the_minimum_applies() {
    let builder = CsarBuilder::sample().edit(SAMPLE_DF_SMALL, |s| {
        s.replace(
            "min_number_of_instances: 1\n          max_number_of_instances: 1",
            "min_number_of_instances: 2\n          max_number_of_instances: 2",
        )
    });
    let vnfd = sample_vnfd(&builder);
    let small = vnfd.flavour("small").unwrap();
    assert_eq!(small.vdu("VDU1").unwrap().initial_delta, None);
    assert_eq!(small.initial_vdu_instances(None), Some(counts(&[("VDU1", 2)])));
}

#[test]
fn instances_at_scale_levels() {
    let vnfd = sample_vnfd(&CsarBuilder::sample());
    let simple = vnfd.flavour("simple").unwrap();
    assert_eq!(simple.vdu_instances_at_scale_level("VDU1_scale", 0), Some(counts(&[("VDU1", 1)])));
    assert_eq!(simple.vdu_instances_at_scale_level("VDU1_scale", 3), Some(counts(&[("VDU1", 4)])));
    assert_eq!(simple.vdu_instances_at_scale_level("VDU1_scale", 4), None);
    assert_eq!(simple.vdu_instances_at_scale_level("nosuch", 1), None);
    assert_eq!(simple.vdu_instances_at(&counts(&[("VDU1_scale", 2)])), Some(counts(&[("VDU1", 3), ("VDU2", 1)])));
    assert_eq!(simple.vdu_instances_at(&counts(&[("VDU1_scale", 9)])), None);
}

#[test]
fn non_uniform_step_deltas() {
    let builder = CsarBuilder::sample().edit(SAMPLE_DF_SIMPLE, |s| {
        s.replace("              step_deltas:\n                - delta_1\n", "              step_deltas:\n                - delta_1\n                - delta_2\n")
            .replace(
                "            delta_1:\n              number_of_instances: 1\n",
                "            delta_1:\n              number_of_instances: 1\n            delta_2:\n              number_of_instances: 2\n",
            )
            .replace("max_number_of_instances: 4", "max_number_of_instances: 6")
    });
    let vnfd = sample_vnfd(&builder);
    let simple = vnfd.flavour("simple").unwrap();
    let aspect = simple.scaling_aspect("VDU1_scale").unwrap();
    assert_eq!(aspect.delta_for_step(1), Some("delta_1"));
    assert_eq!(aspect.delta_for_step(2), Some("delta_2"));
    // Shorter list than max_scale_level: the last delta repeats.
    assert_eq!(aspect.delta_for_step(3), Some("delta_2"));
    assert_eq!(aspect.delta_for_step(4), None);
    assert_eq!(simple.vdu_instances_at_scale_level("VDU1_scale", 3), Some(counts(&[("VDU1", 6)])));
}
