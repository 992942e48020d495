#!/usr/bin/env python3
"""Write the vnfpm 2.1.0 (ETSI GS NFV-SOL 003 V3.3.1, clause 6) base dictionary.

VNF Performance Management API 2.1.0 is what SOL003 V3.3.1 defines (and V3.5.1, V3.6.1 keep:
GitHub openmsa/etsi-mano-model, 3.3.1/3.5.1/3.6.1 mano-versions.json, "vnfpm" 2.1.0) and what
Tacker serves under /vnfpm/v2 (tacker/sol_refactored/api/api_version.py, CURRENT_PM_VERSION).
No machine-readable V3.3.1 PM OpenAPI is available here; the types follow ETSI's V3.7.1 OpenAPI
(PM API 2.2.0, vendored under schemas/tests/fixtures/etsi-sol003-v3.7.1/) wherever the generated V3.3.1 model of
etsi-mano-model (3.3.1/model/.../em/vnfind/*.java, vnfm/vnfpm/*.java) shows the same attributes,
required members and enumerations -- it does for every type below -- with the YAML's defects
corrected as the document text says (each correction is an erratum in
data/vnfpm/etsi-sol003-v3.7.1-errata.json, checked by the schema tests). Clause numbers are those
of SOL003 V3.3.1 (Tacker's objects/v2/*.py cite the same ones).

Run once; the JSON written is the source of truth afterwards and frozen by the golden files:

    python3 schemas/tools/write_vnfpm_2_1_0.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "vnfpm", "2.1.0.json")


def ref(name):
    return {"$ref": "#/$defs/" + name}


def string(**extra):
    return {"type": "string", **extra}


def strings():
    return {"type": "array", "items": string()}


def obj(required, properties, **extra):
    schema = {"type": "object"}
    if required:
        schema["required"] = required
    schema["properties"] = properties
    schema.update(extra)
    return schema


DATE_TIME = string(format="date-time")
KEY_VALUE_PAIRS = {"type": "object"}
# SOL003 "UnsignedInt": the YAML writes minimum 0, maximum 1024 (its own TODO says the maximum
# only stands in for "unsigned"); a reporting period of an hour is 3600 s (erratum E1).
UNSIGNED_INT = {"type": "integer", "minimum": 0}

DEFS = {
    # SOL013 clause 8.3.2 / 6.3 and SOL003 clause 4.4.1 (common to every API).
    "Link": obj(["href"], {"href": string()}),
    "NotificationLink": obj(["href"], {"href": string()}),
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
            "retirementDate": DATE_TIME,
        })},
    }),
    # SOL013 V3.4.1 clause 8.3.4 as SOL003 V3.3.1 uses it: BASIC, OAUTH2_CLIENT_CREDENTIALS,
    # TLS_CERT (OAUTH2_CLIENT_CERT came with SOL013 V3.5.1; the V3.7.1 PM YAML has it neither).
    "SubscriptionAuthentication": obj(["authType"], {
        "authType": {"type": "array", "items": {
            "type": "string", "enum": ["BASIC", "OAUTH2_CLIENT_CREDENTIALS", "TLS_CERT"]}},
        "paramsBasic": obj([], {"userName": string(), "password": string()}),
        "paramsOauth2ClientCredentials": obj([], {
            "clientId": string(), "clientPassword": string(), "tokenEndpoint": string()}),
    }),
    # 6.5.4.3
    "CrossingDirectionType": {"type": "string", "enum": ["UP", "DOWN"]},
    # 6.5.3.3; note 1 (reportingPeriod a multiple of collectionPeriod) and "at least one of
    # performanceMetric and performanceMetricGroup" are checked by the controller, as in Tacker.
    "PmJobCriteria": obj(["collectionPeriod", "reportingPeriod"], {
        "performanceMetric": strings(),
        "performanceMetricGroup": strings(),
        "collectionPeriod": UNSIGNED_INT,
        "reportingPeriod": UNSIGNED_INT,
        "reportingBoundary": DATE_TIME,
    }),
    # 6.5.3.4; simpleThresholdDetails "shall be present if thresholdType=SIMPLE" is checked
    # by the controller.
    "ThresholdCriteria": obj(["performanceMetric", "thresholdType"], {
        "performanceMetric": string(),
        "thresholdType": {"type": "string", "enum": ["SIMPLE"]},
        "simpleThresholdDetails": obj(["thresholdValue", "hysteresis"], {
            "thresholdValue": {"type": "number", "format": "float"},
            # Non-negative; the YAML's maximum 1024 is the same stand-in as UNSIGNED_INT (E2).
            "hysteresis": {"type": "number", "minimum": 0, "format": "float"},
        }),
    }),
    # 6.5.2.6
    "CreatePmJobRequest": obj(["objectType", "objectInstanceIds", "criteria", "callbackUri"], {
        "objectType": string(),
        "objectInstanceIds": strings(),
        "subObjectInstanceIds": strings(),
        "criteria": ref("PmJobCriteria"),
        "callbackUri": string(),
        "authentication": ref("SubscriptionAuthentication"),
    }),
    # 6.5.2.7; reports is 0..N (the YAML has a single structure: E3).
    "PmJob": obj(["id", "objectType", "objectInstanceIds", "criteria", "callbackUri", "_links"], {
        "id": string(),
        "objectType": string(),
        "objectInstanceIds": strings(),
        "subObjectInstanceIds": strings(),
        "criteria": ref("PmJobCriteria"),
        "callbackUri": string(),
        "reports": {"type": "array", "items": obj(["href", "readyTime"], {
            "href": string(format="url"),
            "readyTime": DATE_TIME,
            "expiryTime": DATE_TIME,
            "fileSize": UNSIGNED_INT,
        })},
        "_links": obj(["self"], {"self": ref("Link"), "objects": {"type": "array", "items": ref("Link")}}),
    }),
    # 6.5.2.12. Its note ("at least one attribute shall be present") binds request bodies only:
    # the PATCH response is the same type without authentication, so the controller checks it
    # (the YAML's oneOf would also refuse a request with both: E4).
    "PmJobModifications": obj([], {
        "callbackUri": string(),
        "authentication": ref("SubscriptionAuthentication"),
    }),
    # 6.5.2.8
    "CreateThresholdRequest": obj(["objectType", "objectInstanceId", "criteria", "callbackUri"], {
        "objectType": string(),
        "objectInstanceId": string(),
        "subObjectInstanceIds": strings(),
        "criteria": ref("ThresholdCriteria"),
        "callbackUri": string(),
        "authentication": ref("SubscriptionAuthentication"),
    }),
    # 6.5.2.9
    "Threshold": obj(["id", "objectType", "objectInstanceId", "criteria", "callbackUri", "_links"], {
        "id": string(),
        "objectType": string(),
        "objectInstanceId": string(),
        "subObjectInstanceIds": strings(),
        "criteria": ref("ThresholdCriteria"),
        "callbackUri": string(),
        "_links": obj(["self"], {"self": ref("Link"), "object": ref("Link")}),
    }),
    # 6.5.2.11; as PmJobModifications (E5).
    "ThresholdModifications": obj([], {
        "callbackUri": string(),
        "authentication": ref("SubscriptionAuthentication"),
    }),
    # 6.5.2.10; the YAML requires "performanceValue", which it does not define (E6), and types
    # each value as an object where the document leaves it to the measurement unit (E7).
    "PerformanceReport": obj(["entries"], {
        "entries": {"type": "array", "items": obj(
            ["objectType", "objectInstanceId", "performanceMetric", "performanceValues"], {
                "objectType": string(),
                "objectInstanceId": string(),
                "subObjectInstanceId": string(),
                "performanceMetric": string(),
                "performanceValues": {"type": "array", "items": obj(["timeStamp", "value"], {
                    "timeStamp": DATE_TIME,
                    "value": {},
                    "context": KEY_VALUE_PAIRS,
                })},
            })},
    }),
    # 6.5.2.5
    "PerformanceInformationAvailableNotification": obj(
        ["id", "notificationType", "timeStamp", "pmJobId", "objectType", "objectInstanceId", "_links"], {
            "id": string(),
            "notificationType": {"type": "string", "enum": ["PerformanceInformationAvailableNotification"]},
            "timeStamp": DATE_TIME,
            "pmJobId": string(),
            "objectType": string(),
            "objectInstanceId": string(),
            "subObjectInstanceIds": strings(),
            "_links": obj(["pmJob", "performanceReport"], {
                "objectInstance": ref("NotificationLink"),
                "pmJob": ref("NotificationLink"),
                "performanceReport": ref("NotificationLink"),
            }),
        }),
    # 6.5.2.4; performanceValue as the report's values (E8).
    "ThresholdCrossedNotification": obj(
        ["id", "notificationType", "timeStamp", "thresholdId", "crossingDirection", "objectType",
         "objectInstanceId", "performanceMetric", "performanceValue", "_links"], {
            "id": string(),
            "notificationType": {"type": "string", "enum": ["ThresholdCrossedNotification"]},
            "timeStamp": DATE_TIME,
            "thresholdId": string(),
            "crossingDirection": ref("CrossingDirectionType"),
            "objectType": string(),
            "objectInstanceId": string(),
            "subObjectInstanceId": string(),
            "performanceMetric": string(),
            "performanceValue": {},
            "context": KEY_VALUE_PAIRS,
            "_links": obj(["threshold"], {
                "objectInstance": ref("NotificationLink"),
                "threshold": ref("NotificationLink"),
            }),
        }),
}

DICTIONARY = [
    "CreatePmJobRequest",
    "PmJobModifications",
    "CreateThresholdRequest",
    "ThresholdModifications",
    "PmJob",
    "PerformanceReport",
    "Threshold",
    "PerformanceInformationAvailableNotification",
    "ThresholdCrossedNotification",
    "ApiVersionInformation",
    "ProblemDetails",
]


def main():
    document = {
        "api": "vnfpm",
        "version": "2.1.0",
        "etsiDocument": "ETSI GS NFV-SOL 003 V3.3.1",
        "provenance": "Written by schemas/tools/write_vnfpm_2_1_0.py from SOL003 V3.3.1 clause 6.5 (the types of "
                      "ETSI's V3.7.1 PM OpenAPI, which the V3.3.1 model of openmsa/etsi-mano-model matches, with "
                      "the errata of etsi-sol003-v3.7.1-errata.json applied); clauses per type in that script.",
        "dictionary": DICTIONARY,
        "$defs": dict(sorted(DEFS.items())),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as out:
        json.dump(document, out, indent=1, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
