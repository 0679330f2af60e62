/** A clock tests move by hand instead of sleeping. */
import type { Clock } from '../../src/lib/clock.ts';

export class ManualClock implements Clock {
  private current: number;

  constructor(start = Date.UTC(2026, 10, 23, 12, 0, 0)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  advance(milliseconds: number): void {
    this.current += milliseconds;
  }

  set(milliseconds: number): void {
    this.current = milliseconds;
  }
}
