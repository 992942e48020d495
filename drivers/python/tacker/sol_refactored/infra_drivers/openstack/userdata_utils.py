"""The base class of LCM operation user data classes (`lcm-operation-user-data-class`).

Each method takes the operation's request, the VNF instance, the grant request, the grant
(all dicts) and the directory of the extracted VNF package, and returns the fields of the
Heat stack create or update: `template` (HOT text), `parameters` (`{"nfv": {...}}`),
`files` (nested HOT texts), and `existing: False` for a full replacement.
"""

import abc

from tacker.sol_refactored.common import exceptions as sol_ex


class AbstractUserData(metaclass=abc.ABCMeta):

    @staticmethod
    @abc.abstractmethod
    def instantiate(req, inst, grant_req, grant, tmp_csar_dir):
        raise sol_ex.UserDataClassNotImplemented()

    @staticmethod
    @abc.abstractmethod
    def scale(req, inst, grant_req, grant, tmp_csar_dir):
        raise sol_ex.UserDataClassNotImplemented()

    @staticmethod
    @abc.abstractmethod
    def scale_rollback(req, inst, grant_req, grant, tmp_csar_dir):
        raise sol_ex.UserDataClassNotImplemented()

    @staticmethod
    @abc.abstractmethod
    def change_ext_conn(req, inst, grant_req, grant, tmp_csar_dir):
        raise sol_ex.UserDataClassNotImplemented()

    @staticmethod
    @abc.abstractmethod
    def change_ext_conn_rollback(req, inst, grant_req, grant, tmp_csar_dir):
        raise sol_ex.UserDataClassNotImplemented()

    @staticmethod
    @abc.abstractmethod
    def heal(req, inst, grant_req, grant, tmp_csar_dir):
        raise sol_ex.UserDataClassNotImplemented()

    @staticmethod
    @abc.abstractmethod
    def change_vnfpkg(req, inst, grant_req, grant, tmp_csar_dir):
        raise sol_ex.UserDataClassNotImplemented()

    @staticmethod
    @abc.abstractmethod
    def change_vnfpkg_rollback(req, inst, grant_req, grant, tmp_csar_dir):
        raise sol_ex.UserDataClassNotImplemented()
