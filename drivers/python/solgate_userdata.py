"""Runs one method of a package's LCM operation user data class for solgate.

Input (stdin, JSON): request, vnf_instance, grant_request, grant_response, tmp_csar_dir,
is_rollback, user_data (the package path of the module), user_data_class.
Output (stdout, JSON): the fields the method returned. Whatever the class prints goes to
stderr, so it cannot be taken for the result. Exit 1 with the traceback on stderr when the
method raises or returns something that is not a JSON object.
"""

import importlib
import json
import os
import sys
import traceback


def main(result_fd):
    given = json.load(sys.stdin)
    csar_dir = given["tmp_csar_dir"]
    sys.path.insert(0, csar_dir)
    module_name = os.path.splitext(given["user_data"].lstrip("./"))[0].replace("/", ".")
    klass = getattr(importlib.import_module(module_name), given["user_data_class"])
    operation = given["grant_request"]["operation"].lower()
    if given.get("is_rollback"):
        operation += "_rollback"
    method = getattr(klass, operation)
    fields = method(given["request"], given["vnf_instance"], given["grant_request"],
                    given["grant_response"], csar_dir)
    if not isinstance(fields, dict):
        raise TypeError("{}.{} returned {} instead of a dict of Heat stack fields".format(
            given["user_data_class"], operation, type(fields).__name__))
    text = json.dumps(fields)
    with os.fdopen(result_fd, "w", encoding="utf-8") as out:
        out.write(text)


if __name__ == "__main__":
    # The result goes to the real stdout only; the class's own prints go to stderr.
    result = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        main(result)
    except BaseException:  # noqa: B902 - any failure, SystemExit included, is the script's
        sys.stderr.write(traceback.format_exc())
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)
