"""Runs a package's management script (a Vnflcm interface artifact) for solgate as Tacker v2
runs it: `python3 <script>` with the pickled dict of the operation on its stdin (operation,
request, vnf_instance, grant_request, grant_response, tmp_csar_dir,
user_script_err_handling_data). solgate passes the dict as JSON to this launcher, which
pickles it here, so solgate itself never reads a pickle.

Usage: solgate_mgmt.py <script path>; JSON on stdin.
"""

import io
import json
import os
import pickle
import runpy
import sys

if __name__ == "__main__":
    script = sys.argv[1]
    given = json.load(sys.stdin)
    sys.stdin = io.TextIOWrapper(io.BytesIO(pickle.dumps(given)))
    sys.argv = [script]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    # The script ends with os._exit as Tacker's samples do, or returns; an uncaught
    # exception prints its traceback and exits 1.
    runpy.run_path(script, run_name="__main__")
    sys.stdout.flush()
    os._exit(0)
