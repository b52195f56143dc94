"""collector-config/ cannot run here (no Docker, no Collector binary): these checks prove it hangs together.

Why each check: a Collector config with a pipeline naming an undefined component refuses to start; a Grafana
panel with an unknown datasource uid is blank; a tail-sampling policy or a PromQL/TraceQL query on an attribute
or metric name the processor does not emit silently matches nothing. So every name is checked against what
spanbreaker really emits (``spanbreaker.marking``, ``spanbreaker.metrics``), and every reference against its
definition.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from spanbreaker import marking, metrics

CONFIG = Path(__file__).resolve().parents[2] / "collector-config"
SIGNALS = ("traces", "metrics", "logs")

# Component types of the contrib distribution used here, with the signals each connector joins (from -> to).
KNOWN = {
    "receivers": {"otlp"},
    "processors": {"batch", "memory_limiter", "tail_sampling"},
    "exporters": {"otlp", "otlphttp", "prometheus", "debug"},
    "connectors": {"forward": {("traces", "traces"), ("metrics", "metrics")}, "count": {("traces", "metrics")}},
}

SPAN_ATTRIBUTES = {marking.TRIPPED, marking.DETECTOR, marking.REASON, marking.BLOCKED, marking.STATE, marking.MODE}
EVENTS = {marking.TRIP_EVENT, marking.WARNING_EVENT}
PROCESSOR_METRICS = {marking.METRIC_TRIPS, marking.METRIC_STEERS, marking.METRIC_BLOCKED, marking.METRIC_WARNINGS,
                     marking.METRIC_INTERNAL_ERRORS}
METRIC_LABELS = {metrics.DETECTOR_LABEL, metrics.AGENT_LABEL, metrics.KIND_LABEL}
# Attributes written by the instrumentors (OpenInference) and the SDK resource, which the configs also use.
INSTRUMENTOR_ATTRIBUTES = {"openinference.span.kind", "llm.model_name", "llm.token_count.prompt",
                           "llm.token_count.completion", "llm.token_count.total", "service.name"}


def load_yaml(name: str) -> Any:
    return yaml.safe_load((CONFIG / name).read_text())


@pytest.fixture(scope="module")
def otelcol() -> dict[str, Any]:
    config: dict[str, Any] = load_yaml("otelcol.yaml")
    return config


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONFIG / "grafana" / "dashboards" / "agent-incidents.json").read_text())
    return data


def prometheus_name(otel_name: str, counter: bool = True) -> str:
    """The Collector's prometheus exporter: dots to underscores, ``_total`` on monotonic counters."""
    return otel_name.replace(".", "_") + ("_total" if counter else "")


def connector_metrics(otelcol: dict[str, Any]) -> dict[str, set[str]]:
    """Metric name -> its attribute keys, for every metric the count connector defines."""
    found: dict[str, set[str]] = {}
    for section in otelcol["connectors"].get("count", {}).values():
        for name, spec in section.items():
            found[name] = {a["key"] for a in spec.get("attributes", [])}
    return found


def test_every_file_parses() -> None:
    for path in sorted(CONFIG.rglob("*")):
        if path.suffix in (".yaml", ".yml"):
            assert yaml.safe_load(path.read_text()) is not None, path
        elif path.suffix == ".json":
            json.loads(path.read_text())
    assert (CONFIG / "README.md").is_file()


# ------------------------------------------------------------------------------------------------ Collector
def test_every_pipeline_refers_to_defined_components(otelcol: dict[str, Any]) -> None:
    pipelines = otelcol["service"]["pipelines"]
    assert pipelines
    used: dict[str, set[str]] = {"receivers": set(), "processors": set(), "exporters": set(), "connectors": set()}
    connectors = set(otelcol.get("connectors") or {})
    for pipeline_id, pipeline in pipelines.items():
        assert pipeline_id.split("/")[0] in SIGNALS, pipeline_id
        assert pipeline.get("receivers") and pipeline.get("exporters"), pipeline_id
        for role in ("receivers", "processors", "exporters"):
            for component in pipeline.get(role, []):
                if role != "processors" and component in connectors:
                    used["connectors"].add(component)
                    continue
                assert component in (otelcol.get(role) or {}), f"{pipeline_id}: {role} {component!r} is not defined"
                used[role].add(component)
    for role in used:
        defined = set(otelcol.get(role) or {})
        assert defined == used[role], f"{role} defined but unused: {sorted(defined - used[role])}"
        for component in defined:
            assert component.split("/")[0] in KNOWN[role], f"unknown {role[:-1]} type {component!r}"


def test_connectors_join_pipelines_of_the_right_signals(otelcol: dict[str, Any]) -> None:
    pipelines = otelcol["service"]["pipelines"]
    for connector in otelcol.get("connectors") or {}:
        sources = {p.split("/")[0] for p, spec in pipelines.items() if connector in spec.get("exporters", [])}
        targets = {p.split("/")[0] for p, spec in pipelines.items() if connector in spec.get("receivers", [])}
        assert sources and targets, f"connector {connector} must be exporter in one pipeline and receiver in another"
        allowed = KNOWN["connectors"][connector.split("/")[0]]
        assert {(s, t) for s in sources for t in targets} <= allowed, connector


def test_tail_sampling_keeps_every_tripped_trace_and_a_share_of_the_rest(otelcol: dict[str, Any]) -> None:
    policies = otelcol["processors"]["tail_sampling"]["policies"]
    keep = [p for p in policies if p["type"] == "boolean_attribute"
            and p["boolean_attribute"] == {"key": marking.TRIPPED, "value": True}]
    assert keep, "no policy keeps spanbreaker.tripped=true"
    shares = [p["probabilistic"]["sampling_percentage"] for p in policies if p["type"] == "probabilistic"]
    assert shares and all(0 < share < 100 for share in shares)
    for policy in policies:
        if policy["type"] == "boolean_attribute":
            assert policy["boolean_attribute"]["key"] in SPAN_ATTRIBUTES
    pipelines = otelcol["service"]["pipelines"].values()
    sampled = [spec for spec in pipelines if "tail_sampling" in spec.get("processors", [])]
    assert sampled and all(not set(spec["exporters"]) & set(otelcol.get("connectors") or {}) for spec in sampled), (
        "trip counters must see spans before sampling")


def test_trips_become_prometheus_metrics(otelcol: dict[str, Any]) -> None:
    pipelines = otelcol["service"]["pipelines"]
    metric_pipelines = [spec for pid, spec in pipelines.items() if pid.split("/")[0] == "metrics"]
    assert any("prometheus" in spec["exporters"] and "count" in spec["receivers"] for spec in metric_pipelines)
    assert any("otlp" in spec["receivers"] for spec in metric_pipelines), "the processor's own counters come via OTLP"
    counted = connector_metrics(otelcol)
    assert counted, "the count connector defines no metric"
    for name, keys in counted.items():
        assert name.startswith("spanbreaker."), name
        assert keys <= SPAN_ATTRIBUTES | INSTRUMENTOR_ATTRIBUTES, (name, keys)


def test_collector_conditions_use_emitted_names(otelcol: dict[str, Any]) -> None:
    for section in otelcol["connectors"]["count"].values():
        for spec in section.values():
            for condition in spec.get("conditions", []):
                for attribute in re.findall(r'attributes\["([^"]+)"\]', condition):
                    assert attribute in SPAN_ATTRIBUTES | INSTRUMENTOR_ATTRIBUTES, condition
                for event in re.findall(r'name == "([^"]+)"', condition):
                    assert event in EVENTS, condition


def test_exporters_and_scrapes_point_at_services_in_the_compose_file(otelcol: dict[str, Any]) -> None:
    compose = load_yaml("docker-compose.yaml")
    services = set(compose["services"])
    assert {"otel-collector", "jaeger", "tempo", "prometheus", "grafana"} <= services
    for exporter_id, spec in otelcol["exporters"].items():
        if exporter_id.split("/")[0] in ("otlp", "otlphttp"):
            host = urlparse("//" + spec["endpoint"].split("://")[-1]).hostname
            assert host in services, exporter_id
    targets = [t for job in load_yaml("prometheus.yml")["scrape_configs"] for sc in job["static_configs"]
               for t in sc["targets"]]
    prom_port = otelcol["exporters"]["prometheus"]["endpoint"].rsplit(":", 1)[1]
    assert f"otel-collector:{prom_port}" in targets
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (CONFIG / source).exists(), volume


# ------------------------------------------------------------------------------------------------ Grafana
def _datasources() -> dict[str, dict[str, Any]]:
    provisioned = load_yaml("grafana/provisioning/datasources/datasources.yaml")
    return {ds["uid"]: ds for ds in provisioned["datasources"]}


def _panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in dashboard["panels"] if p.get("type") != "row"]


def test_datasources_point_at_compose_services() -> None:
    services = set(load_yaml("docker-compose.yaml")["services"])
    for uid, ds in _datasources().items():
        assert urlparse(ds["url"]).hostname in services, uid


def test_dashboard_provider_path_is_where_compose_mounts_the_dashboards() -> None:
    provider = load_yaml("grafana/provisioning/dashboards/dashboards.yaml")["providers"][0]
    grafana = load_yaml("docker-compose.yaml")["services"]["grafana"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in grafana["volumes"]}
    assert mounts[provider["options"]["path"]] == "./grafana/dashboards"


def test_every_panel_and_query_uses_a_provisioned_datasource(dashboard: dict[str, Any]) -> None:
    datasources = _datasources()
    for panel in _panels(dashboard):
        assert panel["datasource"]["uid"] in datasources, panel["title"]
        assert panel["datasource"]["type"] == datasources[panel["datasource"]["uid"]]["type"], panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] in datasources, panel["title"]
    for variable in dashboard["templating"]["list"]:
        assert variable["datasource"]["uid"] in datasources


def test_dashboard_has_the_agent_incident_views(dashboard: dict[str, Any]) -> None:
    assert dashboard["title"] == "Agent incidents"
    promql = " ".join(t.get("expr", "") for p in _panels(dashboard) for t in p["targets"])
    for label in (metrics.DETECTOR_LABEL, metrics.AGENT_LABEL, "service.name"):
        assert f"by ({prometheus_name(label, counter=False)})" in promql, label
    traceql = [t["query"] for p in _panels(dashboard) for t in p["targets"] if t.get("queryType") == "traceql"]
    assert any(f"span.{marking.TRIPPED} = true" in q for q in traceql)
    assert any("llm.token_count" in q for q in traceql), "model calls and tokens before each trip"
    links = json.dumps(dashboard)
    assert "16686/trace/" in links, "trace links to Jaeger"


def test_every_metric_and_label_in_promql_is_emitted(otelcol: dict[str, Any], dashboard: dict[str, Any]) -> None:
    counted = connector_metrics(otelcol)
    known_metrics = {prometheus_name(n) for n in PROCESSOR_METRICS | set(counted)}
    known_labels = {prometheus_name(n, counter=False)
                    for n in METRIC_LABELS | SPAN_ATTRIBUTES | INSTRUMENTOR_ATTRIBUTES | set().union(*counted.values())}
    texts = [t.get("expr", "") + " " + t.get("legendFormat", "") for p in _panels(dashboard) for t in p["targets"]]
    texts += [json.dumps(v.get("query")) for v in dashboard["templating"]["list"]]
    for text in texts:
        for name in re.findall(r"\b(spanbreaker_[a-z_]+_total)\b", text):
            assert name in known_metrics, (name, text)
        for group in re.findall(r"by \(([^)]*)\)", text):
            for label in (g.strip() for g in group.split(",")):
                assert label in known_labels, (label, text)
        for label in re.findall(r"\{\{(\w+)\}\}", text):
            assert label in known_labels, (label, text)


def test_every_attribute_in_traceql_is_emitted(dashboard: dict[str, Any]) -> None:
    traceql = [t["query"] for p in _panels(dashboard) for t in p["targets"] if t.get("queryType") == "traceql"]
    assert traceql
    for query in traceql:
        for scope, name in re.findall(r"\b(span|resource)\.([a-z_][a-z0-9_.]*)", query):
            assert name in SPAN_ATTRIBUTES | INSTRUMENTOR_ATTRIBUTES, (scope, name, query)
