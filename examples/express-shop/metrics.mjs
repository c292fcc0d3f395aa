// The shop's Prometheus metrics: waitgate/opentelemetry on an OpenTelemetry MeterProvider
// whose reader is the Prometheus exporter, served by the shop itself at GET /metrics.

import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { instrumentQueue } from 'waitgate/opentelemetry';

/**
 * Records `queue` for Prometheus. `handler` answers a scrape (mount it at GET /metrics);
 * `shutdown()` stops recording. The exporter starts no server of its own
 * (`preventServerStart`): the shop's port serves the metrics too.
 * @param {import('waitgate').WaitingQueue} queue
 */
export function createMetrics(queue) {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const instrumentation = instrumentQueue(queue, { meter: provider.getMeter('waitgate') });
  return {
    /** @type {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void} */
    handler: (req, res) => exporter.getMetricsRequestHandler(req, res),
    async shutdown() {
      instrumentation.stop();
      await provider.shutdown();
    },
  };
}
