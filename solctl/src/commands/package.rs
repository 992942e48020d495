//! `solctl vnf package …` (SOL005 clause 9): packages, their contents and onboarding.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use solgate_client::records::{
    CreateVnfPkgInfoRequest, PkgInfoView, UploadVnfPackageFromUriRequest, VnfPkgInfoModifications, to_body,
};
use solgate_client::{ListQuery, VnfdFormat};

use super::context::{Context, Outcome, key_values, progress, report, write_output};
use crate::Failure;
use crate::cli::{Artifact, Format, OperationalState, Package, VnfdType, Wait};
use crate::output::{Column, record_columns, title_case};

/// tackerclient's `vnf package list` columns: the defaults, what the selectors add.
fn list_columns(query: &ListQuery) -> Vec<Column> {
    let mut attributes: Vec<String> =
        ["id", "vnfProductName", "onboardingState", "usageState", "operationalState", "_links"]
            .map(str::to_owned)
            .to_vec();
    let complex = ["checksum", "softwareImages", "userDefinedData", "additionalArtifacts"];
    let simple = ["vnfdVersion", "vnfProvider", "vnfSoftwareVersion", "vnfdId"];
    attributes.extend(query.fields.iter().flat_map(|fields| fields.split(',').map(str::to_owned)));
    if let Some(excluded) = &query.exclude_fields {
        let excluded: Vec<&str> = excluded.split(',').collect();
        attributes.extend(complex.iter().filter(|field| !excluded.contains(field)).map(|f| (*f).to_owned()));
    }
    if query.all_fields {
        attributes.extend(complex.iter().chain(simple.iter()).map(|field| (*field).to_owned()));
    } else if query.exclude_default {
        attributes.extend(simple.iter().map(|field| (*field).to_owned()));
    }
    let mut columns: Vec<Column> = Vec::new();
    for attribute in attributes {
        if !columns.iter().any(|column| column.attribute == attribute) {
            columns.push(Column::titled(&attribute, &title_case(&attribute)));
        }
    }
    columns
}

/// Where `upload` takes the package from.
struct UploadSource {
    path: Option<PathBuf>,
    url: Option<String>,
    user_name: Option<String>,
    password: Option<String>,
}

impl Context {
    pub(super) async fn package(&self, command: Package) -> Outcome {
        let client = &self.client;
        match command {
            Package::Create { user_data } => {
                let request = CreateVnfPkgInfoRequest { user_defined_data: key_values(&user_data)? };
                let package = client.create_package(to_body(&request)).await?;
                self.print(&package, record_columns(&package))
            }
            Package::List { filter, all_fields, fields, exclude_fields, exclude_default } => {
                let query = ListQuery { filter, all_fields, fields, exclude_fields, exclude_default };
                let items = client.list_packages(&query).await?;
                self.print_list(&items, list_columns(&query))
            }
            Package::Show { vnf_package } => {
                let package = client.show_package(&vnf_package).await?;
                self.print(&package, record_columns(&package))
            }
            Package::Upload { vnf_package, path, url, user_name, password, wait } => {
                self.upload(&vnf_package, UploadSource { path, url, user_name, password }, wait).await
            }
            Package::Download { vnf_package, file, vnfd, vnfd_type } => {
                let content = if vnfd {
                    let format = match vnfd_type {
                        VnfdType::TextPlain => VnfdFormat::TextPlain,
                        VnfdType::Zip => VnfdFormat::Zip,
                        VnfdType::Both => VnfdFormat::Both,
                    };
                    client.download_vnfd(&vnf_package, format).await?
                } else {
                    client.download_package(&vnf_package).await?
                };
                write_output(file.as_deref(), &content.bytes)
            }
            Package::Artifact { command: Artifact::Download { vnf_package, artifact_path, file } } => {
                let content = client.download_artifact(&vnf_package, &artifact_path).await?;
                write_output(file.as_deref(), &content.bytes)
            }
            Package::Update { vnf_package, operational_state, user_data } => {
                self.update_package(&vnf_package, operational_state, &user_data).await
            }
            Package::Delete { vnf_package } => {
                let delete = async |id: &str| client.delete_package(id).await;
                self.delete_each("VNF package", &vnf_package, delete).await
            }
            Package::Onboard { source, user_data, timeout } => self.onboard(&source, &user_data, timeout).await,
        }
    }

    async fn upload(&self, vnf_package: &str, source: UploadSource, wait: Wait) -> Outcome {
        match (source.path, source.url) {
            (Some(path), _) => {
                let bytes =
                    std::fs::read(&path).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
                self.client.upload_package(vnf_package, bytes).await?;
            }
            (None, Some(url)) => {
                let request = UploadVnfPackageFromUriRequest {
                    address_information: url,
                    user_name: source.user_name,
                    password: source.password,
                };
                self.client.upload_package_from_uri(vnf_package, to_body(&request)).await?;
            }
            (None, None) => return Err(Failure::Usage("--path or --url is required".into())),
        }
        self.say(&format!("Upload request for VNF package {vnf_package} has been accepted."));
        if wait.wait {
            let package = self.wait_onboarded(vnf_package, wait.timeout).await?;
            if self.printer.format != Format::Table {
                self.print(&package, record_columns(&package))?;
            }
        }
        Ok(())
    }

    async fn update_package(
        &self,
        vnf_package: &str,
        operational_state: Option<OperationalState>,
        user_data: &[String],
    ) -> Outcome {
        let request = VnfPkgInfoModifications {
            operational_state: operational_state.map(|state| {
                match state {
                    OperationalState::Enabled => "ENABLED",
                    OperationalState::Disabled => "DISABLED",
                }
                .to_owned()
            }),
            user_defined_data: key_values(user_data)?,
        };
        if request == VnfPkgInfoModifications::default() {
            return Err(Failure::Usage("give --operational-state or --user-data".into()));
        }
        let modifications = self.client.update_package(vnf_package, to_body(&request)).await?;
        self.print(&modifications, record_columns(&modifications))
    }

    async fn onboard(&self, source: &Path, user_data: &[String], timeout: u64) -> Outcome {
        let bytes = if source.is_dir() {
            solgate_client::zip_directory(source)?
        } else {
            std::fs::read(source).map_err(|error| Failure::Usage(format!("{}: {error}", source.display())))?
        };
        let request = CreateVnfPkgInfoRequest { user_defined_data: key_values(user_data)? };
        let created = self.client.create_package(to_body(&request)).await?;
        let id = PkgInfoView::of(&created)
            .id
            .ok_or_else(|| Failure::Failed(format!("the created package has no id: {created}")))?;
        self.client.upload_package(&id, bytes).await?;
        let package = self.wait_onboarded(&id, timeout).await?;
        self.print(&package, record_columns(&package))
    }

    async fn wait_onboarded(&self, id: &str, timeout: u64) -> Result<Value, Failure> {
        let tty = std::io::stderr().is_terminal();
        let bar = progress(tty, None);
        let mut last = String::new();
        let result = self
            .client
            .wait_for_onboarding(id, Duration::from_secs(timeout), Duration::from_millis(300), |state| {
                report(tty, &bar, &mut last, format!("VNF package {id}: {state}"));
            })
            .await;
        bar.finish_and_clear();
        Ok(result?)
    }
}
