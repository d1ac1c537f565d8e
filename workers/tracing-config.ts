// Whether this process traces, decided from the standard OpenTelemetry variables alone, without loading
// any OpenTelemetry code: tracing is off unless an OTLP endpoint is set, so an untraced process pays
// nothing (the SDK and exporters are imported by workers/tracing.ts only when this says yes).

/** The variables that switch tracing on; either names where spans go (see the README). */
export const OTLP_ENDPOINT_VARIABLES = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'];

const set = (value: string | undefined): boolean => value !== undefined && value.trim() !== '';

/**
 * True when an OTLP endpoint is configured and neither `OTEL_SDK_DISABLED=true` nor
 * `OTEL_TRACES_EXPORTER=none` turns tracing off again.
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return OTLP_ENDPOINT_VARIABLES.some((name) => set(env[name]));
}
