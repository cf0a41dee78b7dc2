//! Traces for an OpenTelemetry collector, off unless the config has `[otel]`: one span per
//! request to the API (the gateway's), a child per upstream attempt (the failover loop's), sent
//! over OTLP/HTTP (protobuf) in batches by the SDK's exporter thread, off the request path. A
//! full queue drops spans rather than wait.
//!
//! What a span holds is written where it is made (`keypool_gateway`'s `traces.rs`, the llm
//! crate's `failover/settle.rs`): ids, names, numbers; never a key, a token or a prompt. Only
//! spans of [`keypool_llm::SPAN_TARGET`] are exported: no log line becomes a span event.
//!
//! Why the official crates (`opentelemetry-otlp`, `tracing-opentelemetry`) rather than an
//! exporter of our own: they follow the OTLP specification as it changes (retries on 429/503
//! with `retry-after`, the batch processor's bounds, the protobuf schema), and they cost
//! little here (see the server's README for the size, measured).

use std::collections::BTreeMap;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracerProvider};
use serde::Deserialize;
use toml::Spanned;

/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// `[otel]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtelConfig {
    /// The collector's OTLP/HTTP address (`http://collector:4318`; `/v1/traces` is added unless
    /// the path already ends so).
    pub endpoint: Spanned<String>,
    /// Headers sent with every export (a collector's token as `$NAME`, read from the
    /// environment).
    #[serde(default)]
    pub headers: BTreeMap<String, Spanned<String>>,
    /// The resource's `service.name`; `keypool-server` when left out.
    pub service_name: Option<String>,
    /// The share of requests traced, 0 to 1; all when left out.
    pub sample_ratio: Option<Spanned<f64>>,
}

/// `[otel]` checked, its header values read: what the exporter is built from.
pub struct Otel {
    /// Where spans go (`…/v1/traces`).
    pub endpoint: reqwest::Url,
    headers: Vec<(String, String)>,
    pub service_name: String,
    pub sample_ratio: f64,
}

impl std::fmt::Debug for Otel {
    /// Without the headers' values (a collector's token) or the endpoint's user and password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Otel")
            .field("collector", &collector(&self.endpoint))
            .field("headers", &names)
            .field("service_name", &self.service_name)
            .field("sample_ratio", &self.sample_ratio)
            .finish()
    }
}

/// The collector as a log line may name it: scheme, host and port, no user, password or path.
pub fn collector(endpoint: &reqwest::Url) -> String {
    let port = endpoint.port().map(|port| format!(":{port}")).unwrap_or_default();
    format!("{}://{}{port}", endpoint.scheme(), endpoint.host_str().unwrap_or_default())
}

impl OtelConfig {
    /// Checks it and reads its headers' `$NAME`s; `Err` says what is wrong and on which line
    /// (`line_of` a byte offset), never a header's value.
    pub fn resolve(&self, line_of: impl Fn(usize) -> usize) -> Result<Otel, String> {
        let line = line_of(self.endpoint.span().start);
        let written = self.endpoint.get_ref().trim();
        let mut endpoint = reqwest::Url::parse(written)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
            .ok_or_else(|| format!("line {line}: [otel] endpoint is an http:// or https:// address"))?;
        if !endpoint.path().ends_with("/v1/traces") {
            let path = format!("{}/v1/traces", endpoint.path().trim_end_matches('/'));
            endpoint.set_path(&path);
        }
        let mut headers = Vec::new();
        for (name, value) in &self.headers {
            let line = line_of(value.span().start);
            if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(format!("line {line}: [otel] headers: {name:?} is no header name"));
            }
            let written = value.get_ref().trim();
            let value = match written.strip_prefix('$') {
                Some(var) if !var.is_empty() => {
                    std::env::var(var).ok().filter(|value| !value.is_empty()).ok_or_else(|| {
                        format!("line {line}: [otel] headers.{name}: the environment variable {var} is not set")
                    })?
                }
                _ => written.to_owned(),
            };
            if reqwest::header::HeaderValue::from_str(&value).is_err() {
                return Err(format!("line {line}: [otel] headers.{name}: its value is not a header's (a line break?)"));
            }
            headers.push((name.to_ascii_lowercase(), value));
        }
        let sample_ratio = match &self.sample_ratio {
            None => 1.0,
            Some(ratio) if (0.0..=1.0).contains(ratio.get_ref()) => *ratio.get_ref(),
            Some(ratio) => {
                return Err(format!("line {}: [otel] sample_ratio is between 0 and 1", line_of(ratio.span().start)))
            }
        };
        let service_name = self.service_name.clone().unwrap_or_else(|| "keypool-server".to_owned());
        Ok(Otel { endpoint, headers, service_name, sample_ratio })
    }
}

/// The exporter's pipeline: the tracer provider (flushed and stopped by [`Exporting::shut_down`])
/// and the layer that turns the spans of [`keypool_llm::SPAN_TARGET`] into OpenTelemetry's.
pub struct Exporting {
    provider: SdkTracerProvider,
}

impl Exporting {
    /// Builds the exporter for `otel` and the `tracing` layer feeding it.
    pub fn start<S>(otel: &Otel) -> Result<(Exporting, impl tracing_subscriber::Layer<S>), String>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        use tracing_subscriber::Layer as _;
        // The exporter's client (reqwest over rustls) needs the crypto provider the rest of the
        // process uses; it may be built before anything else installed it.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let headers = otel.headers.iter().cloned().collect();
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(otel.endpoint.as_str())
            .with_timeout(EXPORT_TIMEOUT)
            .with_headers(headers)
            .build()
            .map_err(|error| format!("[otel]: the exporter cannot be built: {error}"))?;
        let batches = BatchSpanProcessor::builder(exporter)
            .with_batch_config(BatchConfigBuilder::default().with_max_queue_size(8192).build())
            .build();
        let resource = opentelemetry_sdk::Resource::builder().with_service_name(otel.service_name.clone()).build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(batches)
            .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(otel.sample_ratio))))
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("keypool-server");
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_location(false)
            .with_threads(false)
            .with_level(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(
                tracing_subscriber::filter::Targets::new().with_target(keypool_llm::SPAN_TARGET, tracing::Level::TRACE),
            );
        Ok((Exporting { provider }, layer))
    }

    /// Sends the spans still queued (waiting at most the export's timeout) and stops.
    pub fn shut_down(self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "the last traces could not be sent to the collector");
        }
    }
}
