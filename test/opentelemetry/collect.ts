// A meter whose points a test reads on demand: a MeterProvider with a MetricReader collected by hand.

import type { Attributes } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';

/** A pull reader: `collect()` runs the observable callbacks and returns what was recorded. */
class ManualReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** One collection, with lookups by instrument name and attributes. */
export class Collection {
  constructor(readonly metrics: MetricData[]) {}

  /** The instrument, or undefined when it recorded no point in this collection. */
  metric(name: string): MetricData | undefined {
    return this.metrics.find((m) => m.descriptor.name === name);
  }

  /** Points of a counter or gauge: [attributes, value]. */
  points(name: string): Array<{ attributes: Attributes; value: number }> {
    const m = this.metric(name);
    if (!m) return [];
    if (m.dataPointType !== DataPointType.SUM && m.dataPointType !== DataPointType.GAUGE) throw new Error(`${name} is not a sum or gauge`);
    return m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value }));
  }

  /** The value of the counter or gauge point whose attributes include `attributes`; undefined if none. */
  value(name: string, attributes: Attributes = {}): number | undefined {
    return this.points(name).find((p) => includes(p.attributes, attributes))?.value;
  }

  /** Values of a counter by one attribute, e.g. `{ entered: 100, admitted: 50 }`. */
  by(name: string, attribute: string): Record<string, number> {
    return Object.fromEntries(this.points(name).map((p) => [String(p.attributes[attribute]), p.value]));
  }

  /** Points of a histogram. */
  histograms(name: string): Array<DataPoint<Histogram>> {
    const m = this.metric(name);
    if (!m) return [];
    if (m.dataPointType !== DataPointType.HISTOGRAM) throw new Error(`${name} is not a histogram`);
    return m.dataPoints;
  }

  /** The histogram point whose attributes include `attributes`. */
  histogram(name: string, attributes: Attributes = {}): Histogram | undefined {
    return this.histograms(name).find((p) => includes(p.attributes, attributes))?.value;
  }

  /** Every point of every instrument, with its instrument's name. */
  allPoints(): Array<{ name: string; attributes: Attributes }> {
    return this.metrics.flatMap((m) => (m.dataPoints as Array<{ attributes: Attributes }>).map((p) => ({ name: m.descriptor.name, attributes: p.attributes })));
  }
}

function includes(actual: Attributes, expected: Attributes): boolean {
  return Object.entries(expected).every(([key, value]) => actual[key] === value);
}

/** A MeterProvider with a hand-collected reader. */
export function testMeter() {
  const reader = new ManualReader();
  const provider = new MeterProvider({ readers: [reader] });
  return {
    provider,
    meter: provider.getMeter('waitgate'),
    async collect(): Promise<Collection> {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new AggregateError(errors, 'collection errors');
      return new Collection(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics));
    },
  };
}
