"""The exceptions vendors' user data and management scripts raise or catch.

Written for solgate from the behaviour Tacker documents; only the names scripts use.
"""


class SolException(Exception):
    """Base of the errors a script reports; the message becomes the operation's error."""

    status = 500
    message = "An error occurred."

    def __init__(self, sol_detail=None, **kwargs):
        self.detail = sol_detail or (self.message.format(**kwargs) if kwargs else self.message)
        super().__init__(self.detail)


class SolHttpError422(SolException):
    status = 422


class UserDataClassNotImplemented(SolException):
    message = "The user data class does not implement this operation."


class UserdataMissing(SolException):
    status = 422
    message = "'lcm-operation-user-data' or 'lcm-operation-user-data-class' is missing."


class UserdataExecutionFailed(SolException):
    message = "The user data script failed."


class MgmtDriverExecutionFailed(SolException):
    message = "The management driver script failed."


class InvalidVnfdFormat(SolException):
    status = 400
    message = "The VNF package has no TOSCA-Metadata/TOSCA.meta."


class DeltaMissingInVnfd(SolException):
    status = 400
    message = "Delta {delta} is not defined in VduScalingAspectDeltas."


class BaseHOTNotDefined(SolException):
    status = 400
    message = "BaseHOT is not defined."
