#!/usr/bin/env python3
"""Write the vnfpkgm 1.3.0 (ETSI GS NFV-SOL 005 V2.6.1, clause 9) base dictionary.

No machine-readable SOL005 V2.6.1 is available here. The types below follow SOL005 V2.6.1 clause 9.5
as OpenStack Tacker's legacy /vnfpkgm/v1 implements it (tacker/api/schemas/vnf_packages.py,
tacker/objects/fields.py, the observed bodies in shared/reference/tacker-behaviour.md 6.3), with the
later SOL005 attributes that Tacker's v2 objects mark as V2.7.1+ left out (vnfmInfo,
packageSecurityOption, signingCertificate, onboardingFailureDetails,
compatibleSpecificationVersions, isEncrypted, artifactURI, nonManoArtifactSetId,
artifactClassification, the ERROR onboarding state, authType on upload from URI).
Run once; the JSON written is the source of truth afterwards and frozen by the golden files:

    python3 schemas/tools/write_vnfpkgm_1_3_0.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "vnfpkgm", "1.3.0.json")


def ref(name):
    return {"$ref": "#/$defs/" + name}


def string():
    return {"type": "string"}


def strings():
    return {"type": "array", "items": string()}


def obj(required, properties, **extra):
    schema = {"type": "object"}
    if required:
        schema["required"] = required
    schema["properties"] = properties
    schema.update(extra)
    return schema


KEY_VALUE_PAIRS = {"type": "object"}

DEFS = {
    # SOL013 clause 8.3.2 / 6.3 (common to both APIs).
    "Link": obj(["href"], {"href": string()}),
    "ProblemDetails": obj(["status", "detail"], {
        "type": {"type": "string", "format": "URI"},
        "title": string(),
        "status": {"type": "integer"},
        "detail": string(),
        "instance": {"type": "string", "format": "URI"},
    }),
    "ApiVersionInformation": obj(["uriPrefix", "apiVersions"], {
        "uriPrefix": string(),
        "apiVersions": {"type": "array", "items": obj(["version"], {
            "version": string(),
            "isDeprecated": {"type": "boolean"},
            "retirementDate": {"type": "string", "format": "date-time"},
        })},
    }),
    # 9.5.4.3-9.5.4.6
    "PackageOnboardingStateType": {"type": "string", "enum": ["CREATED", "UPLOADING", "PROCESSING", "ONBOARDED"]},
    "PackageOperationalStateType": {"type": "string", "enum": ["ENABLED", "DISABLED"]},
    "PackageUsageStateType": {"type": "string", "enum": ["IN_USE", "NOT_IN_USE"]},
    "PackageChangeType": {"type": "string", "enum": ["OP_STATE_CHANGE", "PKG_DELETE"]},
    # Checksum (SOL005 common data type).
    "Checksum": obj(["algorithm", "hash"], {"algorithm": string(), "hash": string()}),
    # 9.5.2.2
    "CreateVnfPkgInfoRequest": obj([], {"userDefinedData": KEY_VALUE_PAIRS}),
    # 9.5.2.3; note: at least one attribute shall be present.
    "VnfPkgInfoModifications": obj([], {
        "operationalState": ref("PackageOperationalStateType"),
        "userDefinedData": KEY_VALUE_PAIRS,
    }, anyOf=[{"required": ["operationalState"]}, {"required": ["userDefinedData"]}]),
    # 9.5.2.4 (ETSI calls it UploadVnfPkgFromUriRequest; the dictionary uses the issue's name).
    "UploadVnfPackageFromUriRequest": obj(["addressInformation"], {
        "addressInformation": string(),
        "userName": string(),
        "password": string(),
    }),
    # VnfPackageSoftwareImageInfo
    "VnfPackageSoftwareImageInfo": obj(
        ["id", "name", "provider", "version", "checksum", "containerFormat", "diskFormat", "createdAt",
         "minDisk", "minRam", "size", "imagePath"], {
            "id": string(),
            "name": string(),
            "provider": string(),
            "version": string(),
            "checksum": ref("Checksum"),
            "containerFormat": {"type": "string", "enum": ["AKI", "AMI", "ARI", "BARE", "DOCKER", "OVA", "OVF"]},
            "diskFormat": {"type": "string",
                           "enum": ["AKI", "AMI", "ARI", "ISO", "QCOW2", "RAW", "VDI", "VHD", "VHDX", "VMDK"]},
            "createdAt": {"type": "string", "format": "date-time"},
            "minDisk": {"type": "integer", "minimum": 0},
            "minRam": {"type": "integer", "minimum": 0},
            "size": {"type": "integer", "minimum": 0},
            "userMetadata": KEY_VALUE_PAIRS,
            "imagePath": string(),
        }),
    # VnfPackageArtifactInfo
    "VnfPackageArtifactInfo": obj(["artifactPath", "checksum"], {
        "artifactPath": string(),
        "checksum": ref("Checksum"),
        "metadata": KEY_VALUE_PAIRS,
    }),
    # 9.5.2.5
    "VnfPkgInfo": obj(["id", "onboardingState", "operationalState", "usageState", "_links"], {
        "id": string(),
        "vnfdId": string(),
        "vnfProvider": string(),
        "vnfProductName": string(),
        "vnfSoftwareVersion": string(),
        "vnfdVersion": string(),
        "checksum": ref("Checksum"),
        "softwareImages": {"type": "array", "items": ref("VnfPackageSoftwareImageInfo")},
        "additionalArtifacts": {"type": "array", "items": ref("VnfPackageArtifactInfo")},
        "onboardingState": ref("PackageOnboardingStateType"),
        "operationalState": ref("PackageOperationalStateType"),
        "usageState": ref("PackageUsageStateType"),
        "userDefinedData": KEY_VALUE_PAIRS,
        "_links": obj(["self", "packageContent"], {
            "self": ref("Link"),
            "vnfd": ref("Link"),
            "packageContent": ref("Link"),
        }),
    }),
    # SOL013 V2.6.1 clause 8.3.4 as used by SOL005 V2.6.1.
    "SubscriptionAuthentication": obj(["authType"], {
        "authType": {"type": "array",
                     "items": {"type": "string", "enum": ["BASIC", "OAUTH2_CLIENT_CREDENTIALS", "TLS_CERT"]}},
        "paramsBasic": obj([], {"userName": string(), "password": string()}),
        "paramsOauth2ClientCredentials": obj([], {
            "clientId": string(), "clientPassword": string(), "tokenEndpoint": string(),
        }),
    }),
    # 9.5.3.4 (PkgmNotificationsFilter); vnfdId and vnfPkgId are lists of identifiers.
    "PkgmNotificationsFilter": obj([], {
        "notificationTypes": {"type": "array", "items": {
            "type": "string", "enum": ["VnfPackageOnboardingNotification", "VnfPackageChangeNotification"]}},
        "vnfProductsFromProviders": {"type": "array", "items": obj(["vnfProvider"], {
            "vnfProvider": string(),
            "vnfProducts": {"type": "array", "items": obj(["vnfProductName"], {
                "vnfProductName": string(),
                "versions": {"type": "array", "items": obj(["vnfSoftwareVersion"], {
                    "vnfSoftwareVersion": string(),
                    "vnfdVersions": strings(),
                })},
            })},
        })},
        "vnfdId": strings(),
        "vnfPkgId": strings(),
        "operationalState": {"type": "array", "items": ref("PackageOperationalStateType")},
        "usageState": {"type": "array", "items": ref("PackageUsageStateType")},
    }),
    # 9.5.2.6
    "PkgmSubscriptionRequest": obj(["callbackUri"], {
        "filter": ref("PkgmNotificationsFilter"),
        "callbackUri": string(),
        "authentication": ref("SubscriptionAuthentication"),
    }),
    # 9.5.2.7
    "PkgmSubscription": obj(["id", "callbackUri", "_links"], {
        "id": string(),
        "filter": ref("PkgmNotificationsFilter"),
        "callbackUri": string(),
        "_links": obj(["self"], {"self": ref("Link")}),
    }),
    # 9.5.3.5 (PkgmLinks)
    "PkgmLinks": obj(["vnfPackage", "subscription"], {"vnfPackage": ref("Link"), "subscription": ref("Link")}),
    # 9.5.2.8
    "VnfPackageOnboardingNotification": obj(
        ["id", "notificationType", "subscriptionId", "timeStamp", "vnfPkgId", "vnfdId", "_links"], {
            "id": string(),
            "notificationType": {"type": "string", "enum": ["VnfPackageOnboardingNotification"]},
            "subscriptionId": string(),
            "timeStamp": {"type": "string", "format": "date-time"},
            "vnfPkgId": string(),
            "vnfdId": string(),
            "_links": ref("PkgmLinks"),
        }),
    # 9.5.2.9
    "VnfPackageChangeNotification": obj(
        ["id", "notificationType", "subscriptionId", "timeStamp", "vnfPkgId", "vnfdId", "changeType", "_links"], {
            "id": string(),
            "notificationType": {"type": "string", "enum": ["VnfPackageChangeNotification"]},
            "subscriptionId": string(),
            "timeStamp": {"type": "string", "format": "date-time"},
            "vnfPkgId": string(),
            "vnfdId": string(),
            "changeType": ref("PackageChangeType"),
            "operationalState": ref("PackageOperationalStateType"),
            "_links": ref("PkgmLinks"),
        }),
}

DICTIONARY = [
    "CreateVnfPkgInfoRequest",
    "VnfPkgInfoModifications",
    "UploadVnfPackageFromUriRequest",
    "PkgmSubscriptionRequest",
    "VnfPkgInfo",
    "PkgmSubscription",
    "VnfPackageOnboardingNotification",
    "VnfPackageChangeNotification",
    "ApiVersionInformation",
    "ProblemDetails",
]


def main():
    document = {
        "api": "vnfpkgm",
        "version": "1.3.0",
        "etsiDocument": "ETSI GS NFV-SOL 005 V2.6.1",
        "provenance": "Written by schemas/tools/write_vnfpkgm_1_3_0.py from SOL005 V2.6.1 clause 9.5 as "
                      "Tacker's legacy /vnfpkgm/v1 implements it; sources in that script.",
        "dictionary": DICTIONARY,
        "$defs": dict(sorted(DEFS.items())),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
