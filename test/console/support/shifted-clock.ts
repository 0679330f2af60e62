/**
 * Real time seen from a chosen distance in the past, so a test can make a day of traffic in seconds:
 * set the gateway `hoursAgo(23)`, send requests, step to `hoursAgo(22)`, … and end at `present()`.
 * Time only moves forward (each step must be later than the last), as real time does; within a step it
 * runs at the real pace, so latencies and durations stay real.
 */
import type { Clock } from '../../../src/lib/clock.ts';

export class ShiftedClock implements Clock {
  private behindMs = 0;
  private moved = false;

  now(): number {
    return Date.now() - this.behindMs;
  }

  hoursAgo(hours: number): void {
    this.moveTo(hours * 3_600_000);
  }

  present(): void {
    this.moveTo(0);
  }

  private moveTo(behindMs: number): void {
    // The first step may go back (before it the clock is the present; nothing has run yet).
    if (this.moved && behindMs > this.behindMs) throw new Error('ShiftedClock only moves forward');
    this.moved = true;
    this.behindMs = behindMs;
  }
}
