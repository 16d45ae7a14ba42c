"""The OpenAPI description of GET /api/v1/audit-calibration (the answer is built by
`curation.selectors.audit.audit_calibration`; these serializers only document its shape)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from workers.audit.calibration import VERDICT_TEXT


class CalibrationIntervalSerializer(serializers.Serializer):
    low = serializers.FloatField()
    high = serializers.FloatField()


class CalibrationDifferenceSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True, help_text="auditor minus baseline")
    ci = CalibrationIntervalSerializer(allow_null=True, help_text="95% bootstrap interval")


class CalibrationDifferencesSerializer(serializers.Serializer):
    accuracy = CalibrationDifferenceSerializer()
    kappa = CalibrationDifferenceSerializer()


class CalibrationScoresSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="decisions compared")
    true_positive = serializers.FloatField()
    false_positive = serializers.FloatField()
    false_negative = serializers.FloatField()
    true_negative = serializers.FloatField()
    precision = serializers.FloatField(allow_null=True)
    recall = serializers.FloatField(allow_null=True)
    accuracy = serializers.FloatField(allow_null=True)
    kappa = serializers.FloatField(
        allow_null=True, help_text="Cohen's kappa; 0 when there is no variance, null without data"
    )
    flag_rate = serializers.FloatField(allow_null=True)


class CalibrationPlainBaselineSerializer(CalibrationScoresSerializer):
    label = serializers.CharField()


class CalibrationBaselineSerializer(CalibrationPlainBaselineSerializer):
    difference = CalibrationDifferencesSerializer()


class CalibrationBaselinesSerializer(serializers.Serializer):
    always_approve = CalibrationBaselineSerializer()
    always_flag = CalibrationBaselineSerializer()
    random = CalibrationBaselineSerializer(
        help_text="closed-form expectation at the row's own flag rate"
    )


class CalibrationPlainBaselinesSerializer(serializers.Serializer):
    always_approve = CalibrationPlainBaselineSerializer()
    always_flag = CalibrationPlainBaselineSerializer()
    random = CalibrationPlainBaselineSerializer()


class CalibrationIntervalsSerializer(serializers.Serializer):
    accuracy = CalibrationIntervalSerializer(allow_null=True)
    kappa = CalibrationIntervalSerializer(allow_null=True)


class CalibrationDismissedSerializer(serializers.Serializer):
    findings = serializers.IntegerField(help_text="dismissed flagging findings (not flags)")
    decisions = serializers.IntegerField(
        help_text="decisions that would have been flagged had dismissed findings counted"
    )


class CalibrationAuditorSerializer(CalibrationScoresSerializer):
    label = serializers.CharField()
    tasks = serializers.IntegerField()
    positives = serializers.IntegerField(help_text="decisions that turned the task down")
    prevalence = serializers.FloatField(allow_null=True)
    ci = CalibrationIntervalsSerializer()
    verdict = serializers.ChoiceField(choices=list(VERDICT_TEXT))
    verdict_text = serializers.CharField()
    dismissed = CalibrationDismissedSerializer()


class CalibrationRowSerializer(CalibrationAuditorSerializer):
    baselines = CalibrationBaselinesSerializer()


class CalibrationAuditorsSerializer(serializers.Serializer):
    review_agent = CalibrationAuditorSerializer()
    heuristic = CalibrationAuditorSerializer()
    llm = CalibrationAuditorSerializer()


class CalibrationRowsSerializer(serializers.Serializer):
    review_agent = CalibrationRowSerializer()
    heuristic = CalibrationRowSerializer()
    llm = CalibrationRowSerializer()


class CalibrationGroupSerializer(serializers.Serializer):
    label = serializers.CharField()
    description = serializers.CharField()
    decisions = serializers.IntegerField()
    rows = CalibrationRowsSerializer()


class CalibrationGroupsSerializer(serializers.Serializer):
    blind = CalibrationGroupSerializer(help_text="decided without seeing the findings")
    informed = CalibrationGroupSerializer(
        help_text="the findings were on screen: anchoring possible"
    )
    all = CalibrationGroupSerializer()


class CalibrationDecisionCountsSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    blind = serializers.IntegerField()
    informed = serializers.IntegerField()
    compared = serializers.IntegerField(help_text="with an audit of their revision by then")


class CalibrationMethodSerializer(serializers.Serializer):
    min_decisions = serializers.IntegerField()
    resamples = serializers.IntegerField()
    seed = serializers.IntegerField()
    confidence = serializers.FloatField()
    unit = serializers.CharField()
    positive_class = serializers.CharField()
    flag_rule = serializers.CharField()
    pinning = serializers.CharField()
    dismissed = serializers.CharField()
    kappa_without_variance = serializers.CharField()
    baselines = serializers.CharField()
    interval = serializers.CharField()
    verdict = serializers.CharField()


class CalibrationSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    decided_tasks = serializers.IntegerField()
    audited_tasks = serializers.IntegerField()
    not_approved = serializers.IntegerField()
    prevalence = serializers.FloatField(allow_null=True)
    positive_class = serializers.CharField()
    flag_rule = serializers.CharField()
    auditors = CalibrationAuditorsSerializer(help_text="all decisions; the same rows as groups.all")
    baselines = CalibrationPlainBaselinesSerializer(
        help_text="the review agent row's, all decisions"
    )
    decisions = CalibrationDecisionCountsSerializer()
    blind_review_share = serializers.IntegerField(help_text="percent of tasks reviewed blind")
    method = CalibrationMethodSerializer()
    groups = CalibrationGroupsSerializer()


# One object, not a page: the endpoint is a report over datasets, not a list of resources.
@extend_schema_serializer(many=False)
class CalibrationListSerializer(serializers.Serializer):
    datasets = CalibrationSerializer(many=True)
