/** Vitest reporter of the fault suite: renders the scenario records once the run's outcome is known. */
import { readdirSync } from 'node:fs';
import type { Reporter, TestModule, TestRunEndReason } from 'vitest/node';
import { renderRecords } from './render-fault-report.ts';

export default class FaultReportReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason): void {
    const every = readdirSync('test/faults').filter((name) => name.endsWith('.test.ts')).length;
    const ran = testModules.filter((module) => module.state() === 'passed').length;
    renderRecords(reason === 'passed' && ran === every);
  }
}
