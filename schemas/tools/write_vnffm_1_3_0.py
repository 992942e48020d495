#!/usr/bin/env python3
"""Write the vnffm 1.3.0 (ETSI GS NFV-SOL 003 V3.3.1, clause 7: VNF Fault Management) dictionary.

VNF Fault Management API 1.3.0 is what SOL003 V3.3.1 defines and what OpenStack Tacker serves under
/vnffm/v1 (tacker/sol_refactored/api/api_version.py: supported_fm_versions_v1, CURRENT_FM_VERSION;
its objects cite "v3.3.1 7.5.x (API version: 1.3.0)"). No machine-readable V3.3.1 FM OpenAPI is
available here; the types below follow the clauses cited per type, cross-checked against:

- Tacker's objects and schemas (tacker/sol_refactored/objects/v1/*.py, api/schemas/vnffm_v1.py);
- ETSI's V3.7.1 FM OpenAPI (FM API 1.5.0), a later edition: every difference between the two is an
  erratum in data/vnffm/etsi-sol003-v3.7.1-errata.json with its reason, and the schema test
  `vnffm_1_3_0_matches_etsi_sol003_v3_7_1` keeps that list exact.

The common types SOL003 V3.3.1 clause 4.4 and SOL013 define (Link, ResourceHandle,
VnfInstanceSubscriptionFilter, SubscriptionAuthentication, ProblemDetails, ApiVersionInformation)
are taken as they stand in data/vnflcm/2.0.0.json, the same document's VNF LCM 2.0.0 dictionary.

Run once; the JSON written is the source of truth afterwards and frozen by the golden files:

    python3 schemas/tools/write_vnffm_1_3_0.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "vnffm", "1.3.0.json")
LCM_2_0_0 = os.path.join(HERE, "..", "data", "vnflcm", "2.0.0.json")


def ref(name):
    return {"$ref": "#/$defs/" + name}


def string():
    return {"type": "string"}


def strings():
    return {"type": "array", "items": string()}


def date_time():
    # SOL013 DateTime.
    return {"type": "string", "format": "date-time"}


def obj(required, properties, **extra):
    schema = {"type": "object"}
    if required:
        schema["required"] = required
    schema["properties"] = properties
    schema.update(extra)
    return schema


with open(LCM_2_0_0) as f:
    COMMON = json.load(f)["$defs"]

DEFS = {
    # SOL013 clause 6.3 (ProblemDetails), clause 9.3.2 (ApiVersionInformation), SOL003 V3.3.1
    # clause 4.4.1.2/4.4.1.3 (Link), 4.4.1.7 (ResourceHandle), 4.4.1.5 (VnfInstanceSubscriptionFilter),
    # SOL013 V2.6.1 clause 8.3.4 as SOL003 V3.3.1 uses it (SubscriptionAuthentication): as in vnflcm 2.0.0.
    "ProblemDetails": COMMON["ProblemDetails"],
    "ApiVersionInformation": COMMON["ApiVersionInformation"],
    "Link": COMMON["Link"],
    "ResourceHandle": COMMON["ResourceHandle"],
    "VnfInstanceSubscriptionFilter": COMMON["VnfInstanceSubscriptionFilter"],
    "SubscriptionAuthentication": COMMON["SubscriptionAuthentication"],
    # SOL013 clause 8.3.2 / SOL003 clause 4.4.1.2: NotificationLink, a Link inside notifications.
    "NotificationLink": obj(["href"], {"href": string()}),
    # 7.5.4.3 PerceivedSeverityType (ITU-T X.733).
    "PerceivedSeverityType": {"type": "string",
                              "enum": ["CRITICAL", "MAJOR", "MINOR", "WARNING", "INDETERMINATE", "CLEARED"]},
    # 7.5.4.4 EventType (Tacker's fields.py cites 7.5.4.5 for it as for FaultyResourceType: a slip).
    "EventType": {"type": "string", "enum": ["COMMUNICATIONS_ALARM", "PROCESSING_ERROR_ALARM",
                                             "ENVIRONMENTAL_ALARM", "QOS_ALARM", "EQUIPMENT_ALARM"]},
    # 7.5.4.5 FaultyResourceType.
    "FaultyResourceType": {"type": "string", "enum": ["COMPUTE", "STORAGE", "NETWORK"]},
    # 7.5.3 FaultyResourceInfo (faultyResource, faultyResourceType).
    "FaultyResourceInfo": obj(["faultyResource", "faultyResourceType"], {
        "faultyResource": ref("ResourceHandle"),
        "faultyResourceType": ref("FaultyResourceType"),
    }),
    # 7.5.3.2 FmNotificationsFilter.
    "FmNotificationsFilter": obj([], {
        "vnfInstanceSubscriptionFilter": ref("VnfInstanceSubscriptionFilter"),
        "notificationTypes": {"type": "array", "items": {
            "type": "string",
            "enum": ["AlarmNotification", "AlarmClearedNotification", "AlarmListRebuiltNotification"]}},
        "faultyResourceTypes": {"type": "array", "items": ref("FaultyResourceType")},
        "perceivedSeverities": {"type": "array", "items": ref("PerceivedSeverityType")},
        "eventTypes": {"type": "array", "items": ref("EventType")},
        "probableCauses": strings(),
    }),
    # 7.5.2.4 Alarm, plus vnfcInstanceIds: SOL002 V3.3.1 clause 7.5.2.4 defines it (the VNFC
    # instances an alarm concerns); SOL003 has no such member. Tacker's AlarmV1 carries it
    # ("NOTE: vnfcInstanceIds is defined in NFV-SOL 002 v3.3.1 7.5.2.4") and python-tackerclient
    # shows it, and solgate correlates alarms to VNFCs: kept (erratum V1 of the V3.7.1 errata).
    # SOL003's VnfInstance shows VNFCs as vnfcResourceInfo, so solgate lists their ids.
    "Alarm": obj(
        ["id", "managedObjectId", "alarmRaisedTime", "ackState", "perceivedSeverity", "eventTime", "eventType",
         "probableCause", "isRootCause", "_links"], {
            "id": string(),
            "managedObjectId": string(),
            "vnfcInstanceIds": strings(),
            "rootCauseFaultyResource": ref("FaultyResourceInfo"),
            "alarmRaisedTime": date_time(),
            "alarmChangedTime": date_time(),
            "alarmClearedTime": date_time(),
            "alarmAcknowledgedTime": date_time(),
            "ackState": {"type": "string", "enum": ["UNACKNOWLEDGED", "ACKNOWLEDGED"]},
            "perceivedSeverity": ref("PerceivedSeverityType"),
            "eventTime": date_time(),
            "eventType": ref("EventType"),
            "faultType": string(),
            "probableCause": string(),
            "isRootCause": {"type": "boolean"},
            "correlatedAlarmIds": strings(),
            "faultDetails": strings(),
            "_links": obj(["self"], {"self": ref("Link"), "objectInstance": ref("Link")}),
        }),
    # 7.5.2.8 AlarmModifications (the PATCH body, and its 200 answer).
    "AlarmModifications": obj(["ackState"], {
        "ackState": {"type": "string", "enum": ["ACKNOWLEDGED", "UNACKNOWLEDGED"]},
    }),
    # 7.5.2.2 FmSubscriptionRequest.
    "FmSubscriptionRequest": obj(["callbackUri"], {
        "filter": ref("FmNotificationsFilter"),
        "callbackUri": string(),
        "authentication": ref("SubscriptionAuthentication"),
    }),
    # 7.5.2.3 FmSubscription.
    "FmSubscription": obj(["id", "callbackUri", "_links"], {
        "id": string(),
        "filter": ref("FmNotificationsFilter"),
        "callbackUri": string(),
        "_links": obj(["self"], {"self": ref("Link")}),
    }),
    # 7.5.2.5 AlarmNotification.
    "AlarmNotification": obj(["id", "notificationType", "subscriptionId", "timeStamp", "alarm", "_links"], {
        "id": string(),
        "notificationType": {"type": "string", "enum": ["AlarmNotification"]},
        "subscriptionId": string(),
        "timeStamp": date_time(),
        "alarm": ref("Alarm"),
        "_links": obj(["subscription"], {"subscription": ref("NotificationLink")}),
    }),
    # 7.5.2.6 AlarmClearedNotification.
    "AlarmClearedNotification": obj(
        ["id", "notificationType", "subscriptionId", "timeStamp", "alarmId", "alarmClearedTime", "_links"], {
            "id": string(),
            "notificationType": {"type": "string", "enum": ["AlarmClearedNotification"]},
            "subscriptionId": string(),
            "timeStamp": date_time(),
            "alarmId": string(),
            "alarmClearedTime": date_time(),
            "_links": obj(["subscription", "alarm"], {
                "subscription": ref("NotificationLink"),
                "alarm": ref("NotificationLink"),
            }),
        }),
    # 7.5.2.7 AlarmListRebuiltNotification.
    "AlarmListRebuiltNotification": obj(["id", "notificationType", "subscriptionId", "timeStamp", "_links"], {
        "id": string(),
        "notificationType": {"type": "string", "enum": ["AlarmListRebuiltNotification"]},
        "subscriptionId": string(),
        "timeStamp": date_time(),
        "_links": obj(["subscription", "alarms"], {
            "subscription": ref("NotificationLink"),
            "alarms": ref("NotificationLink"),
        }),
    }),
}

DICTIONARY = [
    "FmSubscriptionRequest",
    "AlarmModifications",
    "Alarm",
    "FmSubscription",
    "AlarmNotification",
    "AlarmClearedNotification",
    "AlarmListRebuiltNotification",
    "ApiVersionInformation",
    "ProblemDetails",
]


def main():
    document = {
        "api": "vnffm",
        "version": "1.3.0",
        "etsiDocument": "ETSI GS NFV-SOL 003 V3.3.1",
        "provenance": "Written by schemas/tools/write_vnffm_1_3_0.py from SOL003 V3.3.1 clause 7.5 (VNF Fault "
                      "Management API 1.3.0, as Tacker serves it under /vnffm/v1), common types as in vnflcm 2.0.0; "
                      "clauses per type and the one addition (Alarm.vnfcInstanceIds, SOL002) in that script; "
                      "differences from ETSI's V3.7.1 OpenAPI in etsi-sol003-v3.7.1-errata.json.",
        "dictionary": DICTIONARY,
        "$defs": dict(sorted(DEFS.items())),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
