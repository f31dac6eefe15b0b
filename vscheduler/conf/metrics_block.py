"""The policy's `metrics` block: parsing it into a `MetricsConfig`, and the usage periods a policy
asks the node-usage collector for (its plugins declare theirs: `framework.needs`).

Owns the rules of every `metrics.<key>` (Volcano's flat dotted keys, the nested form accepted),
PromQL durations, label names and query templates (`{period}`, `{label}`). Must not do I/O: file
names (CA, certificate, key, bearer token) are checked for shape only; the collector reads them.
Errors go to the `error(where, message)` callback the policy parser hands in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import urlsplit

from vscheduler.conf.arguments import parse_go_duration
from vscheduler.conf.schema import (
    DEFAULT_CPU_QUERY,
    DEFAULT_MEMORY_QUERY,
    DEFAULT_USAGE_PERIOD,
    METRICS_KEYS,
    METRICS_TYPES,
    QUERY_PLACEHOLDERS,
    MetricsConfig,
)
from vscheduler.conf.suggest import describe, did_you_mean

ErrorSink = Callable[[str, str], None]
"""`error(where, message)`: records one problem of the policy."""


_GROUPS: Final = ("tls", "elasticsearch", "queries")
_PROMQL_DURATION: Final = re.compile(
    r"(?:[0-9]+y)?(?:[0-9]+w)?(?:[0-9]+d)?(?:[0-9]+h)?(?:[0-9]+m)?(?:[0-9]+s)?(?:[0-9]+ms)?"
)
_LABEL_NAME: Final = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_PLACEHOLDER: Final = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}")
_DURATION_HINT: Final = "a PromQL duration like '10m', '1h' or '1h30m'"


def is_promql_duration(text: str) -> bool:
    """Whether `text` is a positive Prometheus duration (`10m`, `1h30m`; units y w d h m s ms,
    largest first, each at most once)."""
    return (
        bool(text)
        and _PROMQL_DURATION.fullmatch(text) is not None
        and any(c in "123456789" for c in text)
    )


def placeholders(template: str) -> tuple[str, ...]:
    """The `{name}` placeholders of a query template, in order. PromQL's own braces always hold
    a matcher with an operator (`{mode="idle"}`), so they are never placeholders."""
    return tuple(match.group(1) for match in _PLACEHOLDER.finditer(template))


def render_query(template: str, *, period: str, label: str) -> str:
    """`template` with `{period}` and `{label}` filled in (checked templates only)."""
    values = {"period": period, "label": label}
    return _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), template)


def usage_periods(metrics: MetricsConfig | None, asked: Iterable[str]) -> tuple[str, ...]:
    """Every averaging period the policy's readers of node usage ask for, so the collector
    writes each key a plugin reads (Volcano #3582): the block's `period`, then the periods the
    plugins `asked` for, in their order (each plugin declares its own: `Needs.usage_periods`).
    First occurrence order, no duplicates. A value that is not a PromQL duration is left out
    (the plugin reports its own argument error, or reads a key the collector never writes)."""
    found = [metrics.period if metrics is not None else DEFAULT_USAGE_PERIOD]
    found.extend(period for period in asked if is_promql_duration(period))
    return tuple(dict.fromkeys(found))


def parse_metrics(raw: object, error: ErrorSink) -> MetricsConfig | None:
    """The `metrics` block (None when absent or empty); every problem goes to `error`."""
    if raw is None or raw == {}:
        return None
    if not isinstance(raw, dict):
        error("metrics", f"must be a mapping, got {describe(raw)}")
        return None
    flat = _flat(raw, error)
    metrics_type = flat.get("type", "prometheus")
    if metrics_type not in METRICS_TYPES:
        hint = did_you_mean(metrics_type, METRICS_TYPES) or f"; one of {', '.join(METRICS_TYPES)}"
        error("metrics.type", f"unknown metrics type {metrics_type!r}{hint}")
    address = flat.get("address", "")
    if not address and metrics_type in ("prometheus", "elasticsearch"):
        error("metrics.address", f"required for metrics type {metrics_type!r}")
    elif address and metrics_type == "prometheus":
        _check_url(address, error)
    _check_credentials(flat, error)
    return MetricsConfig(
        type=metrics_type,
        address=address,
        interval=flat.get("interval", ""),
        interval_seconds=_duration(flat, "interval", 30.0, error),
        period=_period(flat, error),
        node_label=_label(flat, error),
        timeout_seconds=_duration(flat, "timeout", 10.0, error),
        tls_insecure_skip_verify=_bool(flat, "tls.insecureSkipVerify", error),
        tls_ca_file=flat.get("tls.caFile", ""),
        tls_cert_file=flat.get("tls.certFile", ""),
        tls_key_file=flat.get("tls.keyFile", ""),
        bearer_token=flat.get("bearerToken", ""),
        bearer_token_file=flat.get("bearerTokenFile", ""),
        cpu_query=_query(flat, "queries.cpu", DEFAULT_CPU_QUERY, error),
        memory_query=_query(flat, "queries.memory", DEFAULT_MEMORY_QUERY, error),
        elasticsearch_index=flat.get("elasticsearch.index") or "metricbeat-*",
        elasticsearch_username=flat.get("elasticsearch.username", ""),
        elasticsearch_password=flat.get("elasticsearch.password", ""),
        elasticsearch_hostname_field_name=(
            flat.get("elasticsearch.hostnameFieldName") or "host.hostname"
        ),
        raw=MappingProxyType(dict(flat)),
    )


def _flat(raw: dict[Any, Any], error: ErrorSink) -> dict[str, str]:
    """The block as Volcano's flat string map; nested `tls:`, `elasticsearch:` and `queries:`
    maps are flattened to dotted keys."""
    pairs: list[tuple[str, object]] = []
    for key, value in raw.items():
        if key in _GROUPS and isinstance(value, dict):
            pairs.extend((f"{key}.{_text(inner)}", item) for inner, item in value.items())
        elif key in _GROUPS:
            error(f"metrics.{key}", f"must be a mapping, got {describe(value)}")
        else:
            pairs.append((_text(key), value))
    flat: dict[str, str] = {}
    for key, value in pairs:
        where = f"metrics.{key}"
        if key not in METRICS_KEYS:
            error(where, f"unknown key{did_you_mean(key, METRICS_KEYS)}")
        elif key in flat:
            error(where, "given twice (flat and nested)")
        elif isinstance(value, dict | list):
            error(where, f"must be a single value, got {describe(value)}")
        else:
            flat[key] = _text(value)
    return flat


def _text(value: object) -> str:
    """A scalar as yaml.v2 renders it into a Go string (as the policy parser does)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


def _check_url(address: str, error: ErrorSink) -> None:
    try:
        parts = urlsplit(address)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        parts, port_ok = urlsplit(""), False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        error(
            "metrics.address",
            f"must be an http:// or https:// URL like 'http://prometheus:9090', got {address!r}",
        )
    elif "@" in parts.netloc:
        error("metrics.address", "must not carry credentials; use bearerToken or bearerTokenFile")
    elif parts.query or parts.fragment:
        error("metrics.address", f"must not have a query or a fragment, got {address!r}")


def _check_credentials(flat: Mapping[str, str], error: ErrorSink) -> None:
    if flat.get("bearerToken") and flat.get("bearerTokenFile"):
        error("metrics.bearerTokenFile", "give either bearerToken or bearerTokenFile, not both")
    if flat.get("tls.keyFile") and not flat.get("tls.certFile"):
        error("metrics.tls.keyFile", "needs tls.certFile (the client certificate it belongs to)")
    for key in ("tls.caFile", "tls.certFile", "tls.keyFile", "bearerTokenFile"):
        if key in flat and not flat[key]:
            error(f"metrics.{key}", "must be a file path, got an empty value")


def _duration(flat: Mapping[str, str], key: str, default: float, error: ErrorSink) -> float:
    text = flat.get(key, "")
    if not text:
        return default
    try:
        seconds = parse_go_duration(text)
    except ValueError:
        seconds = -1.0
    if seconds <= 0:
        error(f"metrics.{key}", f"must be a positive duration like '30s', got {text!r}")
        return default
    return seconds


def _period(flat: Mapping[str, str], error: ErrorSink) -> str:
    text = flat.get("period", DEFAULT_USAGE_PERIOD)
    if not is_promql_duration(text):
        error("metrics.period", f"must be {_DURATION_HINT}, got {text!r}")
        return DEFAULT_USAGE_PERIOD
    return text


def _label(flat: Mapping[str, str], error: ErrorSink) -> str:
    text = flat.get("nodeLabel", "instance")
    if _LABEL_NAME.fullmatch(text) is None:
        error(
            "metrics.nodeLabel",
            f"must be a Prometheus label name like 'instance' or 'node', got {text!r}",
        )
        return "instance"
    return text


def _query(flat: Mapping[str, str], key: str, default: str, error: ErrorSink) -> str:
    template = flat.get(key)
    if template is None:
        return default
    if not template.strip():
        error(f"metrics.{key}", "must be a PromQL query, got an empty value")
        return default
    unknown = [name for name in placeholders(template) if name not in QUERY_PLACEHOLDERS]
    if unknown:
        first = unknown[0]
        hint = did_you_mean(first, QUERY_PLACEHOLDERS)
        error(
            f"metrics.{key}",
            f"unknown placeholder {{{first}}}{hint}; the placeholders are {{period}} and {{label}}",
        )
        return default
    return template


def _bool(flat: Mapping[str, str], key: str, error: ErrorSink) -> bool:
    text = flat.get(key, "false")
    if text not in ("true", "false"):
        error(f"metrics.{key}", f"must be 'true' or 'false', got {text!r}")
    return text == "true"
