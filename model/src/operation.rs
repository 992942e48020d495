//! The LCM operations (SOL003 LcmOperationType) and their fixed facts, one row each: the
//! name every layer uses for an operation, from the database row to the conductor.
//! Planning an operation (which needs the database and the VNFD) lives in solgate-core.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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
    /// The operation of SOL001's `Vnflcm` interface its management scripts are named after
    /// (`<script>_start`, ...; Tacker's `_script_method_name`).
    script: &'static str,
    /// Whether an external NFVO is asked for a grant (SOL003 clause 9: every operation
    /// that changes resources; OPERATE and MODIFY_INFO do not).
    asks_grant: bool,
    /// What its GrantRequest lists besides the VNFCs its plan adds and removes.
    grant_lists: GrantLists,
}

/// What an operation's GrantRequest (SOL003 clause 9.5.2.2) lists besides the VNFCs its plan
/// adds and removes and those a heal re-creates, as Tacker's v2 builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantLists {
    /// Nothing more.
    Vnfcs,
    /// The internal virtual links the deployment creates (INSTANTIATE).
    NewVirtualLinks,
    /// Every internal virtual link of the instance, removed (TERMINATE).
    RemovedVirtualLinks,
    /// The VNFCs with a CP on a changed external virtual link updated, the link ports of
    /// those CPs re-made (CHANGE_EXT_CONN).
    ExtConnectivity,
    /// The VNFCs of a rolling update's VDUs re-created, and `dstVnfdId` (CHANGE_VNFPKG).
    PackageChange,
}

#[rustfmt::skip]
const ROWS: [Row; 11] = [
    Row { operation: Instantiate, name: "INSTANTIATE", request_schema: "InstantiateVnfRequest", task_path: Some("instantiate"), link_name: Some("instantiate"), script: "instantiate", asks_grant: true, grant_lists: GrantLists::NewVirtualLinks },
    Row { operation: Terminate, name: "TERMINATE", request_schema: "TerminateVnfRequest", task_path: Some("terminate"), link_name: Some("terminate"), script: "terminate", asks_grant: true, grant_lists: GrantLists::RemovedVirtualLinks },
    Row { operation: Scale, name: "SCALE", request_schema: "ScaleVnfRequest", task_path: Some("scale"), link_name: Some("scale"), script: "scale", asks_grant: true, grant_lists: GrantLists::Vnfcs },
    Row { operation: ScaleToLevel, name: "SCALE_TO_LEVEL", request_schema: "ScaleVnfToLevelRequest", task_path: Some("scale_to_level"), link_name: Some("scaleToLevel"), script: "scale_to_level", asks_grant: true, grant_lists: GrantLists::Vnfcs },
    Row { operation: Heal, name: "HEAL", request_schema: "HealVnfRequest", task_path: Some("heal"), link_name: Some("heal"), script: "heal", asks_grant: true, grant_lists: GrantLists::Vnfcs },
    Row { operation: ChangeFlavour, name: "CHANGE_FLAVOUR", request_schema: "ChangeVnfFlavourRequest", task_path: Some("change_flavour"), link_name: Some("changeFlavour"), script: "change_flavour", asks_grant: true, grant_lists: GrantLists::Vnfcs },
    Row { operation: Operate, name: "OPERATE", request_schema: "OperateVnfRequest", task_path: Some("operate"), link_name: Some("operate"), script: "operate", asks_grant: false, grant_lists: GrantLists::Vnfcs },
    Row { operation: ChangeExtConn, name: "CHANGE_EXT_CONN", request_schema: "ChangeExtVnfConnectivityRequest", task_path: Some("change_ext_conn"), link_name: Some("changeExtConn"), script: "change_external_connectivity", asks_grant: true, grant_lists: GrantLists::ExtConnectivity },
    Row { operation: ChangeVnfpkg, name: "CHANGE_VNFPKG", request_schema: "ChangeCurrentVnfPkgRequest", task_path: Some("change_vnfpkg"), link_name: Some("changeCurrentVnfPkg"), script: "change_current_package", asks_grant: true, grant_lists: GrantLists::PackageChange },
    Row { operation: ModifyInfo, name: "MODIFY_INFO", request_schema: "VnfInfoModificationRequest", task_path: None, link_name: None, script: "modify_information", asks_grant: false, grant_lists: GrantLists::Vnfcs },
    // SOL003 V4.5.1 clause 5.4.x (VNF LCM 2.12.0). Its `_links` key is left to the minors
    // that define it.
    Row { operation: SelectDeplMods, name: "SELECT_DEPL_MODS", request_schema: "SelectVnfDeployableModulesRequest", task_path: Some("select_depl_mods"), link_name: None, script: "select_depl_mods", asks_grant: true, grant_lists: GrantLists::Vnfcs },
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

    /// The `Vnflcm` interface operation its management scripts are named after.
    pub fn script_name(self) -> &'static str {
        self.row().script
    }

    /// Whether an external NFVO is asked for a grant before it runs.
    pub fn asks_grant(self) -> bool {
        self.row().asks_grant
    }

    /// What its GrantRequest lists besides the VNFCs its plan adds and removes.
    pub fn grant_lists(self) -> GrantLists {
        self.row().grant_lists
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

/// Serialized as its SOL003 LcmOperationType name.
impl Serialize for LcmOperation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for LcmOperation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::from_name(&name).ok_or_else(|| D::Error::custom(format!("unknown LcmOperationType {name:?}")))
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
    fn scripts_and_grants_follow_tacker() {
        assert_eq!(Instantiate.script_name(), "instantiate");
        assert_eq!(ScaleToLevel.script_name(), "scale_to_level");
        assert_eq!(ModifyInfo.script_name(), "modify_information");
        assert_eq!(ChangeExtConn.script_name(), "change_external_connectivity");
        assert_eq!(ChangeVnfpkg.script_name(), "change_current_package");
        let not_granted: Vec<_> = LcmOperation::ALL.into_iter().filter(|operation| !operation.asks_grant()).collect();
        assert_eq!(not_granted, [Operate, ModifyInfo]);
        assert_eq!(Terminate.grant_lists(), GrantLists::RemovedVirtualLinks);
        assert_eq!(serde_json::to_value(ChangeVnfpkg).unwrap(), json!("CHANGE_VNFPKG"));
        assert_eq!(serde_json::from_value::<LcmOperation>(json!("HEAL")).unwrap(), Heal);
        assert!(serde_json::from_value::<LcmOperation>(json!("REBOOT")).is_err());
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
