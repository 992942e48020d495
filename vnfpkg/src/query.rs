//! Pure look-ups on a [`Vnfd`] summary for LCM request checks (instantiate, scale, ...).

use std::collections::BTreeMap;

use crate::model::{Flavour, InstantiationLevel, ScalingAspect, SoftwareImage, Vdu, Vnfd};

impl Vnfd {
    pub fn flavour(&self, flavour_id: &str) -> Option<&Flavour> {
        self.flavours.iter().find(|f| f.id == flavour_id)
    }

    pub fn software_image(&self, image_id: &str) -> Option<&SoftwareImage> {
        self.software_images.iter().find(|i| i.id == image_id)
    }
}

impl Vdu {
    /// Instances before any scaling: `VduInitialDelta`, else `min_number_of_instances`
    /// (SOL001 makes the initial delta default to the minimum).
    pub fn initial_instances(&self) -> u32 {
        self.initial_delta.unwrap_or(self.vdu_profile.min_number_of_instances)
    }
}

impl ScalingAspect {
    /// Delta id applied by scaling step `step` (1 = level 0 → 1). A single `step_deltas`
    /// entry is a uniform delta; when the list is shorter than the step its last entry applies.
    pub fn delta_for_step(&self, step: u32) -> Option<&str> {
        if step == 0 || step > self.max_scale_level {
            return None;
        }
        let index = usize::try_from(step - 1).unwrap_or(usize::MAX).min(self.step_deltas.len().checked_sub(1)?);
        self.step_deltas.get(index).map(String::as_str)
    }

    /// Instances this aspect adds to `vdu_id` between scale level 0 and `scale_level`.
    pub fn added_instances(&self, vdu_id: &str, scale_level: u32) -> u32 {
        let Some(deltas) = self.vdu_deltas.get(vdu_id) else { return 0 };
        (1..=scale_level.min(self.max_scale_level))
            .filter_map(|step| self.delta_for_step(step).and_then(|d| deltas.get(d)))
            .fold(0u32, |acc, n| acc.saturating_add(*n))
    }
}

impl Flavour {
    pub fn vdu(&self, vdu_id: &str) -> Option<&Vdu> {
        self.vdus.iter().find(|v| v.id == vdu_id)
    }

    pub fn scaling_aspect(&self, aspect_id: &str) -> Option<&ScalingAspect> {
        self.scaling_aspects.iter().find(|a| a.id == aspect_id)
    }

    pub fn max_scale_level(&self, aspect_id: &str) -> Option<u32> {
        self.scaling_aspect(aspect_id).map(|a| a.max_scale_level)
    }

    pub fn instantiation_level(&self, level_id: &str) -> Option<&InstantiationLevel> {
        self.instantiation_levels.iter().find(|l| l.id == level_id)
    }

    pub fn default_instantiation_level(&self) -> Option<&InstantiationLevel> {
        self.default_level.as_deref().and_then(|id| self.instantiation_level(id))
    }

    /// The level an InstantiateVnfRequest selects: the named one (outer `None` if unknown),
    /// else the flavour's default level (inner `None` when it has none).
    fn selected_level(&self, level_id: Option<&str>) -> Option<Option<&InstantiationLevel>> {
        match level_id {
            Some(id) => self.instantiation_level(id).map(Some),
            None => Some(self.default_instantiation_level()),
        }
    }

    /// Scale level of every aspect right after instantiation at `level_id` (default level when
    /// `None`): the level's `scale_info`, 0 for aspects it does not mention. `None` when the
    /// level id is unknown.
    pub fn initial_scale_levels(&self, level_id: Option<&str>) -> Option<BTreeMap<String, u32>> {
        let level = self.selected_level(level_id)?;
        Some(
            self.scaling_aspects
                .iter()
                .map(|a| (a.id.clone(), level.and_then(|l| l.scale_info.get(&a.id)).copied().unwrap_or(0)))
                .collect(),
        )
    }

    /// Number of instances per VDU when instantiating at `level_id` (default level when
    /// `None`): the level's `VduInstantiationLevels` entry, else the VDU's initial delta plus
    /// the deltas of the level's `scale_info`. `None` when the level id is unknown.
    pub fn initial_vdu_instances(&self, level_id: Option<&str>) -> Option<BTreeMap<String, u32>> {
        let level = self.selected_level(level_id)?;
        Some(
            self.vdus
                .iter()
                .map(|vdu| {
                    let explicit = level.and_then(|l| l.vdu_instances.get(&vdu.id)).copied();
                    let n = explicit.unwrap_or_else(|| {
                        let scaled: u32 = level
                            .map(|l| {
                                l.scale_info
                                    .iter()
                                    .filter_map(|(a, lvl)| Some(self.scaling_aspect(a)?.added_instances(&vdu.id, *lvl)))
                                    .sum()
                            })
                            .unwrap_or(0);
                        vdu.initial_instances().saturating_add(scaled)
                    });
                    (vdu.id.clone(), n)
                })
                .collect(),
        )
    }

    /// Instances of each VDU the aspect scales, at `scale_level` of that aspect (initial
    /// instances plus the deltas of steps 1..=scale_level). `None` for an unknown aspect or a
    /// level above `max_scale_level`.
    pub fn vdu_instances_at_scale_level(&self, aspect_id: &str, scale_level: u32) -> Option<BTreeMap<String, u32>> {
        let aspect = self.scaling_aspect(aspect_id)?;
        if scale_level > aspect.max_scale_level {
            return None;
        }
        Some(
            aspect
                .vdu_deltas
                .keys()
                .filter_map(|vdu_id| {
                    let vdu = self.vdu(vdu_id)?;
                    Some((
                        vdu_id.clone(),
                        vdu.initial_instances().saturating_add(aspect.added_instances(vdu_id, scale_level)),
                    ))
                })
                .collect(),
        )
    }

    /// Instances of every VDU for a whole scale status (aspect id → scale level; aspects not
    /// listed are at level 0). `None` for an unknown aspect or a level above its maximum.
    pub fn vdu_instances_at(&self, scale_levels: &BTreeMap<String, u32>) -> Option<BTreeMap<String, u32>> {
        for (aspect_id, level) in scale_levels {
            if *level > self.max_scale_level(aspect_id)? {
                return None;
            }
        }
        Some(
            self.vdus
                .iter()
                .map(|vdu| {
                    let scaled: u32 = scale_levels
                        .iter()
                        .filter_map(|(a, lvl)| Some(self.scaling_aspect(a)?.added_instances(&vdu.id, *lvl)))
                        .sum();
                    (vdu.id.clone(), vdu.initial_instances().saturating_add(scaled))
                })
                .collect(),
        )
    }
}
