//! The command line: python-tackerclient's `openstack vnflcm …` / `openstack vnf package …`
//! commands and arguments, plus `versions`, `--wait`, `package onboard` and completion.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "solctl", version, about = "Command line for solgate, the ETSI NFV-SOL VNF manager")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Where and how to connect; every option also comes from the environment or a cloud of
/// the configuration file (flags win, then the environment, then the cloud).
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// A named cloud of the configuration file.
    #[arg(long, visible_alias = "os-cloud", env = "SOLGATE_CLOUD", global = true)]
    pub cloud: Option<String>,
    /// The configuration file with named clouds [default: ~/.config/solctl/clouds.yaml].
    #[arg(long, env = "SOLCTL_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// solgate's base URL [default: http://127.0.0.1:9890].
    #[arg(long, visible_alias = "os-endpoint", env = "SOLGATE_ENDPOINT", global = true)]
    pub endpoint: Option<String>,
    /// VNF LCM API: a major (1 or 2: the newest minor both sides know) or an exact version
    /// (2.0.0) [default: 2].
    #[arg(long, visible_alias = "os-tacker-api-version", env = "SOLGATE_API_VERSION", global = true)]
    pub api_version: Option<String>,
    /// PEM trust anchors for an https endpoint, added to the platform's.
    #[arg(long, visible_alias = "os-cacert", env = "SOLGATE_CACERT", global = true)]
    pub cacert: Option<PathBuf>,
    /// Client certificate (PEM) for mutual TLS.
    #[arg(long, visible_alias = "os-cert", env = "SOLGATE_CERT", global = true)]
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, visible_alias = "os-key", env = "SOLGATE_KEY", global = true)]
    pub key: Option<PathBuf>,
    /// Do not verify the server's certificate (testing only).
    #[arg(long, global = true)]
    pub insecure: bool,
    /// How to authenticate [default: inferred from the options given, else none].
    #[arg(long, visible_alias = "os-auth-type", env = "SOLGATE_AUTH_TYPE", global = true, value_enum)]
    pub auth_type: Option<AuthType>,
    /// A bearer token (auth type `token`).
    #[arg(long, visible_alias = "os-token", env = "SOLGATE_TOKEN", global = true, hide_env_values = true)]
    pub token: Option<String>,
    /// OAuth 2.0 token endpoint [default: the endpoint's /oauth2/token].
    #[arg(long, env = "SOLGATE_TOKEN_URL", global = true)]
    pub token_url: Option<String>,
    /// OAuth 2.0 client id (client credentials grant).
    #[arg(long, env = "SOLGATE_CLIENT_ID", global = true)]
    pub client_id: Option<String>,
    /// OAuth 2.0 client secret.
    #[arg(long, env = "SOLGATE_CLIENT_SECRET", global = true, hide_env_values = true)]
    pub client_secret: Option<String>,
    /// OAuth 2.0 scopes to ask for, space-separated.
    #[arg(long, env = "SOLGATE_SCOPE", global = true)]
    pub scope: Option<String>,
    /// Keystone URL (auth type `keystone`), with or without /v3.
    #[arg(long, visible_alias = "os-auth-url", env = "OS_AUTH_URL", global = true)]
    pub auth_url: Option<String>,
    #[arg(long, visible_alias = "os-username", env = "OS_USERNAME", global = true)]
    pub username: Option<String>,
    #[arg(long, visible_alias = "os-password", env = "OS_PASSWORD", global = true, hide_env_values = true)]
    pub password: Option<String>,
    #[arg(long, visible_alias = "os-project-name", env = "OS_PROJECT_NAME", global = true)]
    pub project_name: Option<String>,
    /// [default: Default]
    #[arg(long, visible_alias = "os-user-domain-name", env = "OS_USER_DOMAIN_NAME", global = true)]
    pub user_domain_name: Option<String>,
    /// [default: Default]
    #[arg(long, visible_alias = "os-project-domain-name", env = "OS_PROJECT_DOMAIN_NAME", global = true)]
    pub project_domain_name: Option<String>,
    /// Seconds one HTTP request may take.
    #[arg(long, env = "SOLGATE_HTTP_TIMEOUT", global = true, default_value_t = 60)]
    pub http_timeout: u64,
    /// Output format.
    #[arg(short = 'f', long = "format", global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Only this column (repeatable), by its heading ("ID") or attribute (id).
    #[arg(short = 'c', long = "column", global = true)]
    pub columns: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthType {
    None,
    Token,
    Oauth2,
    Keystone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Yaml,
    Value,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The api_versions of every API: versions, deprecation and retirement dates, and the
    /// version this client uses.
    Versions,
    /// VNF lifecycle management (SOL003).
    Vnflcm {
        #[command(subcommand)]
        command: Vnflcm,
    },
    /// VNF packages (`vnf package …`).
    Vnf {
        #[command(subcommand)]
        command: Vnf,
    },
    /// VNF packages (the same as `vnf package …`).
    Package {
        #[command(subcommand)]
        command: Package,
    },
    /// The VIM registry (python-tackerclient's `openstack vim …`).
    Vim {
        #[command(subcommand)]
        command: Vim,
    },
    /// VNF fault management (SOL003 clause 7, python-tackerclient's `openstack vnffm …`).
    Vnffm {
        #[command(subcommand)]
        command: Vnffm,
    },
    /// VNF performance management (SOL003 clause 6, python-tackerclient's `openstack vnfpm …`).
    Vnfpm {
        #[command(subcommand)]
        command: Vnfpm,
    },
    /// Prints a shell completion script.
    Completion {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Subcommand)]
pub enum Vnf {
    /// VNF packages (SOL005).
    Package {
        #[command(subcommand)]
        command: Package,
    },
}

/// `--wait` and `--timeout` of every command that starts an operation.
#[derive(Debug, Clone, Copy, Args)]
pub struct Wait {
    /// Wait until the operation has ended, showing its state; non-zero unless it completed.
    #[arg(long)]
    pub wait: bool,
    /// Seconds to wait at most.
    #[arg(long, default_value_t = 600, requires = "wait")]
    pub timeout: u64,
}

#[derive(Debug, Subcommand)]
pub enum Vnflcm {
    /// The VNF LCM api_versions (as tackerclient's `vnflcm versions`).
    Versions {
        /// 1 or 2: that major's api_versions; without it, the API's.
        #[arg(long)]
        major_version: Option<u64>,
    },
    /// Create a VNF instance.
    Create {
        /// The VNFD id (vnfdId of an onboarded package).
        vnfd_id: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        description: Option<String>,
        /// Instantiate it right after with this request file (JSON).
        #[arg(long = "I", value_name = "PARAM_FILE")]
        instantiate: Option<PathBuf>,
        #[command(flatten)]
        wait: Wait,
    },
    /// List VNF instances.
    List {
        #[arg(long)]
        filter: Option<String>,
    },
    /// Show a VNF instance.
    Show { vnf_instance: String },
    /// Modify a VNF instance's information (PATCH, merge-patch).
    Update {
        vnf_instance: String,
        /// The VnfInfoModificationRequest (JSON).
        #[arg(long = "I", value_name = "PARAM_FILE")]
        param_file: PathBuf,
        /// Only if the instance still has this ETag (412 otherwise).
        #[arg(long)]
        if_match: Option<String>,
        #[command(flatten)]
        wait: Wait,
    },
    /// Instantiate a VNF instance.
    Instantiate {
        vnf_instance: String,
        /// The InstantiateVnfRequest (JSON).
        param_file: PathBuf,
        #[command(flatten)]
        wait: Wait,
    },
    /// Terminate a VNF instance.
    Terminate {
        vnf_instance: String,
        #[arg(long, value_enum)]
        termination_type: Option<TerminationType>,
        /// Seconds (GRACEFUL only).
        #[arg(long)]
        graceful_termination_timeout: Option<u64>,
        /// Delete the instance once terminated (waits for the termination).
        #[arg(long = "D")]
        delete: bool,
        #[command(flatten)]
        wait: Wait,
    },
    /// Scale a VNF instance.
    Scale {
        vnf_instance: String,
        #[arg(long = "type", value_enum)]
        scale_type: ScaleType,
        #[arg(long)]
        aspect_id: String,
        #[arg(long)]
        number_of_steps: Option<u64>,
        /// JSON merged into the request.
        #[arg(long)]
        additional_param_file: Option<PathBuf>,
        #[command(flatten)]
        wait: Wait,
    },
    /// Heal a VNF instance.
    Heal {
        vnf_instance: String,
        #[arg(long)]
        cause: Option<String>,
        /// VNFC instances to heal.
        #[arg(long = "vnfc-instance", num_args = 1..)]
        vnfc_instance: Vec<String>,
        /// JSON merged into the request.
        #[arg(long)]
        additional_param_file: Option<PathBuf>,
        #[command(flatten)]
        wait: Wait,
    },
    /// Scale a VNF instance to an instantiation level or to scale levels per aspect (beyond
    /// python-tackerclient): a ScaleVnfToLevelRequest in PARAM_FILE.
    ScaleToLevel {
        vnf_instance: String,
        param_file: PathBuf,
        #[command(flatten)]
        wait: Wait,
    },
    /// Change the deployment flavour of a VNF instance (beyond python-tackerclient): a
    /// ChangeVnfFlavourRequest in PARAM_FILE.
    ChangeFlavour {
        vnf_instance: String,
        param_file: PathBuf,
        #[command(flatten)]
        wait: Wait,
    },
    /// Start or stop a VNF instance (beyond python-tackerclient).
    Operate {
        vnf_instance: String,
        #[arg(long, value_enum)]
        change_state_to: OperateState,
        /// STOPPED only: GRACEFUL or FORCEFUL.
        #[arg(long, value_enum)]
        stop_type: Option<TerminationType>,
        /// Seconds (a GRACEFUL stop only).
        #[arg(long)]
        graceful_stop_timeout: Option<u64>,
        #[command(flatten)]
        wait: Wait,
    },
    /// Change the external connectivity of a VNF instance.
    ChangeExtConn {
        vnf_instance: String,
        param_file: PathBuf,
        #[command(flatten)]
        wait: Wait,
    },
    /// Change the current VNF package of a VNF instance (v2).
    ChangeVnfpkg {
        vnf_instance: String,
        param_file: PathBuf,
        #[command(flatten)]
        wait: Wait,
    },
    /// Delete VNF instances.
    Delete {
        #[arg(required = true)]
        vnf_instance: Vec<String>,
    },
    /// LCM operation occurrences.
    Op {
        #[command(subcommand)]
        command: Op,
    },
    /// LCM notification subscriptions.
    Subsc {
        #[command(subcommand)]
        command: Subsc,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OperateState {
    Started,
    Stopped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TerminationType {
    Graceful,
    Forceful,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ScaleType {
    ScaleOut,
    ScaleIn,
}

#[derive(Debug, Subcommand)]
pub enum Op {
    /// List LCM operation occurrences.
    List {
        #[arg(long)]
        filter: Option<String>,
        /// Complex attributes to include.
        #[arg(long, conflicts_with = "exclude_fields")]
        fields: Option<String>,
        /// Complex attributes to leave out.
        #[arg(long)]
        exclude_fields: Option<String>,
    },
    /// Show an LCM operation occurrence.
    Show { vnf_lcm_op_occ_id: String },
    /// Retry a FAILED_TEMP operation.
    Retry {
        vnf_lcm_op_occ_id: String,
        #[command(flatten)]
        wait: Wait,
    },
    /// Roll back a FAILED_TEMP operation.
    Rollback {
        vnf_lcm_op_occ_id: String,
        #[command(flatten)]
        wait: Wait,
    },
    /// Mark a FAILED_TEMP operation FAILED.
    Fail { vnf_lcm_op_occ_id: String },
    /// Cancel a STARTING or PROCESSING operation (it ends FAILED_TEMP).
    Cancel {
        vnf_lcm_op_occ_id: String,
        #[arg(long, value_enum, default_value_t = CancelMode::Graceful)]
        cancel_mode: CancelMode,
        #[command(flatten)]
        wait: Wait,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CancelMode {
    Graceful,
    Forceful,
}

#[derive(Debug, Subcommand)]
pub enum Subsc {
    /// Create a subscription from a LccnSubscriptionRequest file (JSON).
    Create {
        param_file: PathBuf,
    },
    List {
        #[arg(long)]
        filter: Option<String>,
    },
    Show {
        subscription_id: String,
    },
    Delete {
        #[arg(required = true)]
        subscription_id: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum Vnffm {
    /// Alarms.
    Alarm {
        #[command(subcommand)]
        command: Alarm,
    },
    /// FM subscriptions.
    Sub {
        #[command(subcommand)]
        command: FmSub,
    },
}

#[derive(Debug, Subcommand)]
pub enum Vnfpm {
    /// PM jobs.
    Job {
        #[command(subcommand)]
        command: PmJob,
    },
    /// Performance reports of PM jobs.
    Report {
        #[command(subcommand)]
        command: PmReport,
    },
    /// Thresholds.
    Threshold {
        #[command(subcommand)]
        command: PmThreshold,
    },
}

#[derive(Debug, Subcommand)]
pub enum PmJob {
    /// Create a PM job from a CreatePmJobRequest file (JSON).
    Create {
        param_file: PathBuf,
    },
    List {
        #[arg(long)]
        filter: Option<String>,
        #[arg(long = "all_fields", conflicts_with_all = ["fields", "exclude_fields"])]
        all_fields: bool,
        #[arg(long, conflicts_with = "exclude_fields")]
        fields: Option<String>,
        #[arg(long = "exclude_fields")]
        exclude_fields: Option<String>,
        #[arg(long = "exclude_default")]
        exclude_default: bool,
    },
    Show {
        vnf_pm_job_id: String,
    },
    /// Change a PM job's callback URI or credentials from a PmJobModifications file (JSON).
    Update {
        vnf_pm_job_id: String,
        param_file: PathBuf,
    },
    Delete {
        #[arg(required = true)]
        vnf_pm_job_id: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PmReport {
    Show { vnf_pm_job_id: String, vnf_pm_report_id: String },
}

#[derive(Debug, Subcommand)]
pub enum PmThreshold {
    /// Create a threshold from a CreateThresholdRequest file (JSON).
    Create {
        param_file: PathBuf,
    },
    List {
        #[arg(long)]
        filter: Option<String>,
    },
    Show {
        vnf_pm_threshold_id: String,
    },
    /// Change a threshold's callback URI or credentials from a ThresholdModifications file (JSON).
    Update {
        vnf_pm_threshold_id: String,
        param_file: PathBuf,
    },
    Delete {
        #[arg(required = true)]
        vnf_pm_threshold_id: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum Alarm {
    List {
        #[arg(long)]
        filter: Option<String>,
    },
    Show {
        alarm_id: String,
    },
    /// Acknowledge an alarm, or take the acknowledgement back.
    Update {
        alarm_id: String,
        #[arg(long, value_enum)]
        ack_state: AckState,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AckState {
    #[value(name = "ACKNOWLEDGED")]
    Acknowledged,
    #[value(name = "UNACKNOWLEDGED")]
    Unacknowledged,
}

impl AckState {
    pub fn as_str(self) -> &'static str {
        match self {
            AckState::Acknowledged => "ACKNOWLEDGED",
            AckState::Unacknowledged => "UNACKNOWLEDGED",
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum FmSub {
    /// Create an FM subscription from an FmSubscriptionRequest file (JSON).
    Create {
        param_file: PathBuf,
    },
    List {
        #[arg(long)]
        filter: Option<String>,
    },
    Show {
        subscription_id: String,
    },
    Delete {
        #[arg(required = true)]
        subscription_id: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum Vim {
    /// Register a VIM from a config file (the YAML `openstack vim register --config-file`
    /// reads: auth_url, username, password, project_name, domains, cert_verify; for
    /// Kubernetes `type: kubernetes`, bearer_token or username/password, ssl_ca_cert).
    Register {
        name: String,
        #[arg(long)]
        config_file: PathBuf,
        #[arg(long)]
        description: Option<String>,
        /// Make it the project's default VIM.
        #[arg(long)]
        is_default: bool,
    },
    /// List the VIMs of the project (all of them for an admin).
    List,
    /// Show a VIM (never its secrets).
    Show { vim: String },
    /// Change a VIM's name, description, default flag or credentials.
    Set {
        vim: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        description: Option<String>,
        #[arg(long, value_parser = clap::value_parser!(bool))]
        is_default: Option<bool>,
        /// New credentials (the same YAML as `register`).
        #[arg(long)]
        config_file: Option<PathBuf>,
    },
    /// Delete VIMs.
    Delete {
        #[arg(required = true)]
        vim: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum Package {
    /// Create a VNF package (CREATED).
    Create {
        /// userDefinedData key=value (repeatable).
        #[arg(long = "user-data", value_name = "KEY=VALUE", num_args = 1..)]
        user_data: Vec<String>,
    },
    /// List VNF packages.
    List {
        #[arg(long)]
        filter: Option<String>,
        #[arg(long = "all_fields", conflicts_with_all = ["fields", "exclude_fields"])]
        all_fields: bool,
        #[arg(long, conflicts_with = "exclude_fields")]
        fields: Option<String>,
        #[arg(long = "exclude_fields")]
        exclude_fields: Option<String>,
        #[arg(long = "exclude_default")]
        exclude_default: bool,
    },
    /// Show a VNF package.
    Show { vnf_package: String },
    /// Upload a package's content: a zip file, or a URL the server fetches.
    Upload {
        vnf_package: String,
        #[arg(long, required_unless_present = "url", conflicts_with = "url")]
        path: Option<PathBuf>,
        #[arg(long)]
        url: Option<String>,
        #[arg(long, requires = "url")]
        user_name: Option<String>,
        #[arg(long, requires = "url")]
        password: Option<String>,
        #[command(flatten)]
        wait: Wait,
    },
    /// Download a package's content, or its VNFD.
    Download {
        vnf_package: String,
        /// Where to write it [default: standard output].
        #[arg(long)]
        file: Option<PathBuf>,
        /// The VNFD instead of the whole package.
        #[arg(long)]
        vnfd: bool,
        #[arg(long = "type", value_enum, requires = "vnfd", default_value_t = VnfdType::Zip)]
        vnfd_type: VnfdType,
    },
    /// Artifacts of a package.
    Artifact {
        #[command(subcommand)]
        command: Artifact,
    },
    /// Change a package's operational state or user data.
    Update {
        vnf_package: String,
        #[arg(long, value_enum)]
        operational_state: Option<OperationalState>,
        #[arg(long = "user-data", value_name = "KEY=VALUE", num_args = 1..)]
        user_data: Vec<String>,
    },
    /// Delete VNF packages.
    Delete {
        #[arg(required = true)]
        vnf_package: Vec<String>,
    },
    /// Zip a package directory (or take a zip), create, upload, wait until ONBOARDED.
    Onboard {
        /// A CSAR directory (TOSCA-Metadata/, Definitions/, …) or a zip file.
        source: PathBuf,
        #[arg(long = "user-data", value_name = "KEY=VALUE", num_args = 1..)]
        user_data: Vec<String>,
        /// Seconds to wait for onboarding.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum Artifact {
    /// Download one artifact.
    Download {
        vnf_package: String,
        /// The artifact's path in the package (Scripts/install.sh).
        artifact_path: String,
        #[arg(long)]
        file: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VnfdType {
    #[value(name = "text/plain")]
    TextPlain,
    #[value(name = "application/zip")]
    Zip,
    #[value(name = "both")]
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OperationalState {
    Enabled,
    Disabled,
}
