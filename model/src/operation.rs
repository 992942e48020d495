//! The LCM operations (SOL003 LcmOperationType) and their fixed facts, one row each: the
//! name every layer uses for an operation, from the database row to the conductor.
//! Planning an operation (which needs the database and the VNFD) lives in solgate-core.

use serde_json::Value;
use solgate_schemas::ApiVersionId;

/// SOL003 LcmOperationStateType values.
pub const STARTING: &str = "STARTING";
pub const PROCESSING: &str = "PROCESSING";
pub const COMPLETED: &str = "COMPLETED";
pub const FAILED_TEMP: &str = "FAILED_TEMP";
pub const FAILED: &str = "FAILED";
pub const ROLLING_BACK: &str = "ROLLING_BACK";
pub const ROLLED_BACK: &str = "ROLLED_BACK";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LcmOperation {
    Instantiate,
    Terminate,
    Scale,
    ScaleToLevel,
    Heal,
    ChangeFlavour,
    Operate,
    ChangeExtConn,
    ChangeVnfpkg,
    ModifyInfo,
    SelectDeplMods,
}

/// The instance state an operation needs (SOL003 preconditions; 409 otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    NotInstantiated,
    Instantiated,
    Any,
}

use LcmOperation::*;

/// The fixed facts of an operation: one row each.
struct Row {
    operation: LcmOperation,
    /// The SOL003 LcmOperationType.
    name: &'static str,
    /// The schema of the request body.
    request_schema: &'static str,
    /// The task resource under `vnf_instances/{id}/` (MODIFY_INFO is a PATCH of the
    /// instance itself).
    task_path: Option<&'static str>,
    /// The key of the task in VnfInstance `_links` (change_vnfpkg's first appears in
    /// SOL003 V3.6.1; rendering leaves it out for earlier minors).
    link_name: Option<&'static str>,
}

#[rustfmt::skip]
const ROWS: [Row; 11] = [
    Row { operation: Instantiate, name: "INSTANTIATE", request_schema: "InstantiateVnfRequest", task_path: Some("instantiate"), link_name: Some("instantiate") },
    Row { operation: Terminate, name: "TERMINATE", request_schema: "TerminateVnfRequest", task_path: Some("terminate"), link_name: Some("terminate") },
    Row { operation: Scale, name: "SCALE", request_schema: "ScaleVnfRequest", task_path: Some("scale"), link_name: Some("scale") },
    Row { operation: ScaleToLevel, name: "SCALE_TO_LEVEL", request_schema: "ScaleVnfToLevelRequest", task_path: Some("scale_to_level"), link_name: Some("scaleToLevel") },
    Row { operation: Heal, name: "HEAL", request_schema: "HealVnfRequest", task_path: Some("heal"), link_name: Some("heal") },
    Row { operation: ChangeFlavour, name: "CHANGE_FLAVOUR", request_schema: "ChangeVnfFlavourRequest", task_path: Some("change_flavour"), link_name: Some("changeFlavour") },
    Row { operation: Operate, name: "OPERATE", request_schema: "OperateVnfRequest", task_path: Some("operate"), link_name: Some("operate") },
    Row { operation: ChangeExtConn, name: "CHANGE_EXT_CONN", request_schema: "ChangeExtVnfConnectivityRequest", task_path: Some("change_ext_conn"), link_name: Some("changeExtConn") },
    Row { operation: ChangeVnfpkg, name: "CHANGE_VNFPKG", request_schema: "ChangeCurrentVnfPkgRequest", task_path: Some("change_vnfpkg"), link_name: Some("changeCurrentVnfPkg") },
    Row { operation: ModifyInfo, name: "MODIFY_INFO", request_schema: "VnfInfoModificationRequest", task_path: None, link_name: None },
    // SOL003 V4.5.1 clause 5.4.x (VNF LCM 2.12.0). Its `_links` key is left to the minors
    // that define it.
    Row { operation: SelectDeplMods, name: "SELECT_DEPL_MODS", request_schema: "SelectVnfDeployableModulesRequest", task_path: Some("select_depl_mods"), link_name: None },
];

impl LcmOperation {
    pub const ALL: [LcmOperation; 11] = {
        let mut all = [Instantiate; 11];
        let mut index = 0;
        while index < ROWS.len() {
            all[index] = ROWS[index].operation;
            index += 1;
        }
        all
    };

    fn row(self) -> &'static Row {
        // ROWS holds every variant (`every_operation_has_one_row`).
        &ROWS[self as usize]
    }

    /// The SOL003 LcmOperationType.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    pub fn from_name(name: &str) -> Option<Self> {
        ROWS.iter().find(|row| row.name == name).map(|row| row.operation)
    }

    /// The schema of the request body.
    pub fn request_schema(self) -> &'static str {
        self.row().request_schema
    }

    /// The task resource under `vnf_instances/{id}/`.
    pub fn task_path(self) -> Option<&'static str> {
        self.row().task_path
    }

    /// The key of the task in VnfInstance `_links`.
    pub fn link_name(self) -> Option<&'static str> {
        self.row().link_name
    }

    /// Whether the API major has the operation (SOL003 v2.6.1 has no change_vnfpkg).
    pub fn in_major(self, major: u64) -> bool {
        !(matches!(self, ChangeVnfpkg | SelectDeplMods) && major < 2)
    }

    /// The first API version of its major that has the operation, when a later minor
    /// added it: select_depl_mods came with SOL003 V4.5.1, VNF LCM 2.12.0.
    pub fn since(self) -> Option<ApiVersionId> {
        match self {
            SelectDeplMods => Some(ApiVersionId::new(2, 12, 0)),
            _ => None,
        }
    }

    pub fn precondition(self) -> Precondition {
        match self {
            Instantiate => Precondition::NotInstantiated,
            ModifyInfo => Precondition::Any,
            _ => Precondition::Instantiated,
        }
    }

    /// Whether the operation may start on an instance in this state.
    pub fn allowed_on(self, instance: &Value) -> bool {
        let instantiated = instance["instantiationState"] == "INSTANTIATED";
        match self.precondition() {
            Precondition::NotInstantiated => !instantiated,
            Precondition::Instantiated => instantiated,
            Precondition::Any => true,
        }
    }

    /// The state an accepted occurrence starts in: MODIFY_INFO has no STARTING (SOL003
    /// clause 5.6.2.2: it needs no grant).
    pub fn initial_state(self) -> &'static str {
        if self == ModifyInfo { PROCESSING } else { STARTING }
    }

    /// Whether solgate can roll the operation back (SOL003 leaves it to the VNFM; Tacker
    /// supports the same set).
    pub fn rollback_supported(self, params: &Value) -> bool {
        match self {
            Instantiate | ModifyInfo | ChangeExtConn | ChangeVnfpkg | ChangeFlavour | ScaleToLevel | SelectDeplMods => {
                true
            }
            Scale => params["type"] == "SCALE_OUT",
            Terminate | Heal | Operate => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_operation_has_one_row() {
        for (index, row) in ROWS.iter().enumerate() {
            assert_eq!(row.operation as usize, index, "ROWS follows the enum's order");
        }
        for operation in LcmOperation::ALL {
            assert_eq!(LcmOperation::from_name(operation.name()), Some(operation));
            assert!(operation.request_schema().ends_with("Request"), "{operation:?}");
        }
        let paths: Vec<_> = LcmOperation::ALL.iter().filter_map(|operation| operation.task_path()).collect();
        assert_eq!(paths.len(), 10, "every operation but MODIFY_INFO has a task resource");
        assert_eq!(SelectDeplMods.since(), Some(ApiVersionId::new(2, 12, 0)));
        assert!(!SelectDeplMods.in_major(1) && Instantiate.since().is_none());
        assert!(!ChangeVnfpkg.in_major(1) && ChangeVnfpkg.in_major(2) && Instantiate.in_major(1));
    }

    #[test]
    fn preconditions_follow_sol003() {
        let instantiated = json!({"instantiationState": "INSTANTIATED"});
        let not = json!({"instantiationState": "NOT_INSTANTIATED"});
        assert!(Instantiate.allowed_on(&not) && !Instantiate.allowed_on(&instantiated));
        assert!(Terminate.allowed_on(&instantiated) && !Terminate.allowed_on(&not));
        assert!(ModifyInfo.allowed_on(&instantiated) && ModifyInfo.allowed_on(&not));
        assert_eq!(ModifyInfo.initial_state(), PROCESSING);
        assert_eq!(Heal.initial_state(), STARTING);
    }

    #[test]
    fn rollback_is_offered_where_it_can_work() {
        assert!(Scale.rollback_supported(&json!({"type": "SCALE_OUT"})));
        assert!(!Scale.rollback_supported(&json!({"type": "SCALE_IN"})));
        assert!(!Terminate.rollback_supported(&json!({})));
        assert!(Instantiate.rollback_supported(&json!({})));
    }
}
