/**
 * A labelled Prometheus counter for hot paths: increments are tallied in a Map (about 0.1 µs) and
 * handed to prom-client when /metrics is scraped, instead of prom-client hashing the labels on every
 * increment (about 1 µs, which a request with twenty rate-limit checks pays twenty times).
 */
import { Counter, type Registry } from 'prom-client';

export class TallyCounter<Label extends string> {
  private readonly pending = new Map<string, number>();
  private readonly labelNames: readonly Label[];

  constructor(config: { name: string; help: string; labelNames: readonly Label[]; registers: Registry[] }) {
    this.labelNames = config.labelNames;
    const pending = this.pending;
    const labelNames = this.labelNames;
    new Counter({
      name: config.name,
      help: config.help,
      labelNames,
      registers: config.registers,
      collect() {
        for (const [key, value] of pending) {
          const values = key.split('\u0000');
          this.inc(
            Object.fromEntries(labelNames.map((name, index) => [name, values[index]!])) as Record<
              Label,
              string
            >,
            value,
          );
        }
        pending.clear();
      },
    });
  }

  /** Adds one for these label values, in the order of `labelNames`. */
  inc(...values: string[]): void {
    const key = values.join('\u0000');
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
  }
}
