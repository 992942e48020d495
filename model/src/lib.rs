//! solgate's domain types that more than one crate needs: the LCM operations and their
//! facts ([`operation`]), the Grant interface's documents ([`grant`]), the infra driver
//! interface with its plans and inventories ([`infra`]), and the SOL003 LCM documents they
//! read and write: VnfInstance ([`vnf_instance`]), VnfLcmOpOcc ([`lcm_op_occ`]) and the LCM
//! requests ([`lcm_request`]). Owned here, not by drivers, so the domain (core) does not
//! depend on the infrastructure.

pub mod grant;
pub mod infra;
pub mod lcm_op_occ;
pub mod lcm_request;
pub mod operation;
pub mod vnf_instance;

pub use operation::LcmOperation;
