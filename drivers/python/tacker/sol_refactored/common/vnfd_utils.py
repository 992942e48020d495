"""A VNFD read from an extracted VNF package, with the look-ups scripts use.

Written for solgate: the package's Definitions/*.yaml are read as TOSCA service templates,
a deployment flavour is the file whose substitution_mappings name its flavour_id.
"""

import os

import yaml

from tacker.sol_refactored.common import exceptions as sol_ex

COMPUTE = "tosca.nodes.nfv.Vdu.Compute"
STORAGE = "tosca.nodes.nfv.Vdu.VirtualBlockStorage"
VIRTUAL_LINK = "tosca.nodes.nfv.VnfVirtualLink"
VDU_CP = "tosca.nodes.nfv.VduCp"


def _load_yaml(path):
    with open(path, "r", encoding="utf-8") as f:
        return yaml.safe_load(f)


def _yaml_entries(directory):
    if not os.path.isdir(directory):
        return []
    return [entry for entry in os.listdir(directory) if entry.endswith((".yaml", ".yml"))]


class Vnfd(object):
    def __init__(self, vnfd_id):
        self.vnfd_id = vnfd_id
        self.csar_dir = None
        self.tosca_meta = {}
        self.definitions = {}
        self.vnfd_flavours = {}

    def init_from_csar_dir(self, csar_dir):
        self.csar_dir = csar_dir
        meta = os.path.join(csar_dir, "TOSCA-Metadata", "TOSCA.meta")
        if not os.path.isfile(meta):
            raise sol_ex.InvalidVnfdFormat()
        self.tosca_meta = _load_yaml(meta) or {}
        definitions = os.path.join(csar_dir, "Definitions")
        for entry in _yaml_entries(definitions):
            self.definitions[entry] = _load_yaml(os.path.join(definitions, entry)) or {}

    def get_vnfd_flavour(self, flavour_id):
        if flavour_id not in self.vnfd_flavours:
            for document in self.definitions.values():
                mappings = (document.get("topology_template") or {}).get("substitution_mappings") or {}
                if (mappings.get("properties") or {}).get("flavour_id") == flavour_id:
                    self.vnfd_flavours[flavour_id] = document
                    break
        return self.vnfd_flavours.get(flavour_id)

    def _node_templates(self, flavour_id):
        document = self.get_vnfd_flavour(flavour_id) or {}
        return (document.get("topology_template") or {}).get("node_templates") or {}

    def get_nodes(self, flavour_id, node_type):
        return {name: node for name, node in self._node_templates(flavour_id).items() if node.get("type") == node_type}

    def get_vdu_nodes(self, flavour_id):
        return self.get_nodes(flavour_id, COMPUTE)

    def get_storage_nodes(self, flavour_id):
        return self.get_nodes(flavour_id, STORAGE)

    def get_virtual_link_nodes(self, flavour_id):
        return self.get_nodes(flavour_id, VIRTUAL_LINK)

    def get_vducp_nodes(self, flavour_id):
        return self.get_nodes(flavour_id, VDU_CP)

    def get_vdu_cps(self, flavour_id, vdu_name):
        return [
            name
            for name, node in self.get_vducp_nodes(flavour_id).items()
            if any(requirement.get("virtual_binding") == vdu_name for requirement in node.get("requirements") or [])
        ]

    def get_vdu_storages(self, vdu_node):
        return [
            requirement["virtual_storage"]
            for requirement in vdu_node.get("requirements") or []
            if "virtual_storage" in requirement
        ]

    def get_vl_name_from_cp(self, flavour_id, cp_data):
        for requirement in cp_data.get("requirements") or []:
            if "virtual_link" in requirement:
                return requirement["virtual_link"]
        return None

    def get_sw_image(self, flavour_id):
        """Node name -> sw_image_data.name, for VDUs and virtual storages with an image."""
        images = {}
        for name, node in self._node_templates(flavour_id).items():
            data = (node.get("properties") or {}).get("sw_image_data")
            if node.get("type") in (COMPUTE, STORAGE) and data:
                images[name] = data["name"]
        return images

    def get_sw_image_data(self, flavour_id):
        images = {}
        for name, node in self._node_templates(flavour_id).items():
            data = (node.get("properties") or {}).get("sw_image_data")
            if node.get("type") in (COMPUTE, STORAGE) and data:
                images[name] = data
                image_file = ((node.get("artifacts") or {}).get("sw_image") or {}).get("file")
                if image_file:
                    images[name]["file"] = image_file
        return images

    def get_compute_flavor(self, flavour_id, vdu_name):
        node = self._node_templates(flavour_id).get(vdu_name) or {}
        value = node
        for key in ("capabilities", "virtual_compute", "properties", "requested_additional_capabilities",
                    "properties", "requested_additional_capability_name"):
            value = value.get(key) if isinstance(value, dict) else None
        return value or None

    def get_base_hot(self, flavour_id):
        """{'template': top HOT, 'files': {name: nested HOT}} of BaseHOT/<flavour_id>/."""
        if self.csar_dir is None:
            raise sol_ex.SolException(sol_detail="The VNFD was not read from a package directory.")
        hot = {}
        directory = os.path.join(self.csar_dir, "BaseHOT", flavour_id)
        entries = sorted(_yaml_entries(directory))
        if entries:
            hot["template"] = _load_yaml(os.path.join(directory, entries[0]))
        nested = os.path.join(directory, "nested")
        for entry in sorted(_yaml_entries(nested)):
            hot.setdefault("files", {})[entry] = _load_yaml(os.path.join(nested, entry))
        return hot

    def get_policy_values_by_type(self, flavour_id, policy_type):
        document = self.get_vnfd_flavour(flavour_id) or {}
        policies = (document.get("topology_template") or {}).get("policies") or []
        if isinstance(policies, dict):
            policies = [policies]
        return [value for policy in policies for value in policy.values() if value.get("type") == policy_type]

    def get_default_instantiation_level(self, flavour_id):
        for policy in self.get_policy_values_by_type(flavour_id, "tosca.policies.nfv.InstantiationLevels"):
            return (policy.get("properties") or {}).get("default_level")
        return None

    def get_vdu_num(self, flavour_id, vdu_name, instantiation_level):
        for policy in self.get_policy_values_by_type(flavour_id, "tosca.policies.nfv.VduInstantiationLevels"):
            if vdu_name in (policy.get("targets") or []):
                levels = (policy.get("properties") or {}).get("levels") or {}
                return (levels.get(instantiation_level) or {}).get("number_of_instances")
        return 0

    def get_scale_vdu_and_num(self, flavour_id, aspect_id):
        delta = None
        for aspects in self.get_policy_values_by_type(flavour_id, "tosca.policies.nfv.ScalingAspects"):
            aspect = aspects["properties"]["aspects"].get(aspect_id)
            if aspect is not None:
                delta = aspect["step_deltas"][0]
                break
        if delta is None:
            return {}
        counts = {}
        for deltas in self.get_policy_values_by_type(flavour_id, "tosca.policies.nfv.VduScalingAspectDeltas"):
            properties = deltas.get("properties") or {}
            if properties.get("aspect") != aspect_id:
                continue
            number = (properties.get("deltas", {}).get(delta) or {}).get("number_of_instances")
            if number is None:
                raise sol_ex.DeltaMissingInVnfd(delta=delta)
            for vdu_name in deltas.get("targets") or []:
                counts[vdu_name] = number
        return counts

    def get_max_scale_level(self, flavour_id, aspect_id):
        for aspects in self.get_policy_values_by_type(flavour_id, "tosca.policies.nfv.ScalingAspects"):
            aspect = aspects["properties"]["aspects"].get(aspect_id)
            if aspect is not None:
                return aspect["max_scale_level"]
        return 0

    def get_interface_script(self, flavour_id, operation):
        """The file of the Python artifact a Vnflcm operation names (relative to Definitions/)."""
        for node in self._node_templates(flavour_id).values():
            if "interfaces" not in node:
                continue
            declared = ((node.get("interfaces") or {}).get("Vnflcm") or {}).get(operation)
            if not isinstance(declared, dict) or declared.get("implementation") is None:
                return None
            artifact = (node.get("artifacts") or {}).get(declared["implementation"]) or {}
            if artifact.get("type") != "tosca.artifacts.Implementation.Python":
                raise sol_ex.SolHttpError422(sol_detail="Unsupported script type {}".format(artifact.get("type")))
            return artifact.get("file")
        return None
