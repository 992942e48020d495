//! The handlers of `/vnflcm/v2` (API 2.x, SOL003 v3.3.1) and `/vnflcm/v1`:
//! VnfInstancesController, VnfLcmOpOccsController and SubscriptionsController.

pub mod lcm_op_occs;
pub mod subscriptions;
pub mod vnf_instances;
