"""Helpers for user data classes and management scripts: the `nfv` parameter tree of a
BaseHOT, and its values taken from the VNFD, the Grant, the request and the instance.

Written for solgate from the behaviour of Tacker's functions of the same names. The
arguments are plain dicts (the JSON the conductor passes).
"""

from tacker.sol_refactored.common import vnfd_utils


def get_vnfd(vnfd_id, csar_dir):
    vnfd = vnfd_utils.Vnfd(vnfd_id)
    vnfd.init_from_csar_dir(csar_dir)
    return vnfd


def _get_params(value, found):
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "get_param":
                found.append(item)
            else:
                _get_params(item, found)
    elif isinstance(value, list):
        for item in value:
            _get_params(item, found)


def init_nfv_dict(hot_template):
    """{a: {b: {... leaf: None}}} for each `get_param: [nfv, a, b, ..., leaf]` (4 or more
    items) in the properties of the template's resources. Keys keep their YAML type, so a
    list index such as `fixed_ips, 0` stays the integer 0."""
    found = []
    for resource in (hot_template.get("resources") or {}).values():
        if isinstance(resource, dict):
            _get_params(resource.get("properties") or {}, found)
    nfv = {}
    for path in found:
        if not isinstance(path, list) or len(path) < 4 or path[0] != "nfv":
            continue
        node = nfv
        for key in path[1:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = None
    return nfv


def _vim_assets(grant, kind):
    return (grant.get("vimAssets") or {}).get(kind) or []


def get_param_flavor(vdu_name, flavour_id, vnfd, grant):
    """The Grant's vimFlavourId for the VDU, else the VNFD's requested_additional_capability_name."""
    for flavour in _vim_assets(grant, "computeResourceFlavours"):
        if flavour.get("vnfdVirtualComputeDescId") == vdu_name:
            return flavour["vimFlavourId"]
    return vnfd.get_compute_flavor(flavour_id, vdu_name)


def get_param_image(vdu_name, flavour_id, vnfd, grant, fallback_vnfd=True):
    """The Grant's vimSoftwareImageId for the node, else (if allowed) the VNFD's image name."""
    for image in _vim_assets(grant, "softwareImages"):
        if image.get("vnfdSoftwareImageId") == vdu_name:
            return image["vimSoftwareImageId"]
    if fallback_vnfd:
        return vnfd.get_sw_image(flavour_id).get(vdu_name)
    return None


def _zone_name(grant, zone_id):
    for zone in grant.get("zones") or []:
        if zone.get("id") == zone_id:
            return zone.get("zoneId")
    return None


def get_param_zone(vdu_name, grant_req, grant):
    """The zone the Grant placed the first granted COMPUTE resource of the VDU in."""
    if "zones" not in grant or "addResources" not in grant:
        return None
    requested = {res.get("id"): res for res in grant_req.get("addResources") or []}
    for granted in grant["addResources"]:
        if "zoneId" not in granted:
            continue
        definition = requested.get(granted.get("resourceDefinitionId"))
        if definition is not None and definition.get("resourceTemplateId") == vdu_name:
            return _zone_name(grant, granted["zoneId"])
    return None


def get_param_zone_by_vnfc(res_id, grant):
    """The zone the Grant placed one resource definition in."""
    if "zones" not in grant or "addResources" not in grant:
        return None
    for granted in grant["addResources"]:
        if granted.get("resourceDefinitionId") == res_id:
            return _zone_name(grant, granted["zoneId"]) if "zoneId" in granted else None
    return None


def get_current_capacity(vdu_name, inst):
    vnfcs = (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or []
    return sum(1 for vnfc in vnfcs if vnfc.get("vduId") == vdu_name)


def get_param_capacity(vdu_name, inst, grant_req):
    """The VDU's VNFCs now, plus the COMPUTE resources the grant request adds, less those it removes."""
    count = get_current_capacity(vdu_name, inst)
    for key, step in (("addResources", 1), ("removeResources", -1)):
        for res in grant_req.get(key) or []:
            if res.get("type") == "COMPUTE" and res.get("resourceTemplateId") == vdu_name:
                count += step
    return count


def _get_fixed_ips_from_extcp(extcp):
    fixed_ips = []
    for config in (extcp.get("cpConfig") or {}).values():
        for protocol in config.get("cpProtocolData") or []:
            for address in (protocol.get("ipOverEthernet") or {}).get("ipAddresses") or []:
                entry = {}
                if "fixedAddresses" in address:
                    # one address per entry, the first one
                    entry["ip_address"] = str(address["fixedAddresses"][0])
                if "subnetId" in address:
                    entry["subnet"] = address["subnetId"]
                if entry:
                    fixed_ips.append(entry)
    return fixed_ips


def _ext_cps(cp_name, grant, req):
    # The Grant's external virtual links come first, then the request's.
    for link in (grant.get("extVirtualLinks") or []) + (req.get("extVirtualLinks") or []):
        for extcp in link.get("extCps") or []:
            if extcp.get("cpdId") == cp_name:
                yield link, extcp


def get_param_network(cp_name, grant, req):
    for link, _ in _ext_cps(cp_name, grant, req):
        return link["resourceId"]
    return None


def get_param_fixed_ips(cp_name, grant, req):
    for _, extcp in _ext_cps(cp_name, grant, req):
        return _get_fixed_ips_from_extcp(extcp)
    return None


def _inst_ext_cps(cp_name, inst):
    for link in (inst.get("instantiatedVnfInfo") or {}).get("extVirtualLinkInfo") or []:
        for extcp in link.get("currentVnfExtCpData") or []:
            if extcp.get("cpdId") == cp_name:
                yield link, extcp


def get_param_network_from_inst(cp_name, inst):
    for link, _ in _inst_ext_cps(cp_name, inst):
        return link["resourceHandle"]["resourceId"]
    return None


def get_param_fixed_ips_from_inst(cp_name, inst):
    for _, extcp in _inst_ext_cps(cp_name, inst):
        return _get_fixed_ips_from_extcp(extcp)
    return None


def _replace_reference(value, reference, network_id):
    if isinstance(value, dict):
        for key, item in value.items():
            if item == reference:
                value[key] = network_id
            else:
                _replace_reference(item, reference, network_id)


def _apply_ext_managed_vls(hot_dict, managed_vls):
    # The NFVO's network replaces the template's own: the VL's OS::Neutron::Net and its
    # subnets go, `{get_resource: <VL>}` becomes the network id.
    resources = hot_dict.get("resources") or {}
    for managed in managed_vls:
        vl_name = managed["vnfVirtualLinkDescId"]
        network_id = managed["resourceId"]
        reference = {"get_resource": vl_name}
        gone = []
        for name, resource in resources.items():
            network = ((resource.get("properties") or {}).get("network") or {})
            if name == vl_name or (resource.get("type") == "OS::Neutron::Subnet"
                                   and isinstance(network, dict) and network.get("get_resource") == vl_name):
                gone.append(name)
            _replace_reference(resource, reference, network_id)
        for name in gone:
            resources.pop(name, None)


def apply_ext_managed_vls(hot_dict, req, grant):
    _apply_ext_managed_vls(hot_dict, (grant.get("extManagedVirtualLinks") or [])
                           + (req.get("extManagedVirtualLinks") or []))


def apply_ext_managed_vls_from_inst(hot_dict, inst):
    links = (inst.get("instantiatedVnfInfo") or {}).get("extManagedVirtualLinkInfo")
    if links:
        _apply_ext_managed_vls(hot_dict, [
            {"vnfVirtualLinkDescId": link["vnfVirtualLinkDescId"],
             "resourceId": link["networkResource"]["resourceId"]}
            for link in links
        ])
