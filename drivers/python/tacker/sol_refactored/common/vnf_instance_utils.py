"""VnfInstance helpers scripts use: RFC 7396 JSON merge patch."""


def json_merge_patch(target, patch):
    """RFC 7396: `patch` applied to `target`; `None` (JSON null) removes a key."""
    if not isinstance(patch, dict):
        return patch
    result = target if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = json_merge_patch(result.get(key), value)
    return result


def select_vim_info(vim_connection_info, return_key=False):
    """The first (in practice the only) entry of a vimConnectionInfo map."""
    for key, value in vim_connection_info.items():
        if isinstance(value, dict) and value.get("vimType") == "kubernetes":
            value["vimType"] = "ETSINFV.KUBERNETES.V_1"
        return (key, value) if return_key else value
    return (None, None) if return_key else None
