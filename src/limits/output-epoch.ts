/**
 * This process's memory of the store epoch (spec output rule 12): the highest write sequence its own
 * recordings were acknowledged with. Admission sends it; a store whose marker is behind it lost
 * acknowledged writes (a restore, a failover to a lagging replica) and pauses governed requests.
 */
import type { OutputEpochMark } from '../store/shared/output-counters.ts';

export class OutputEpochSeen {
  private mark: OutputEpochMark | undefined;

  get current(): OutputEpochMark | undefined {
    return this.mark;
  }

  /** A recording's acknowledgement; a new epoch replaces the old one's memory. */
  observe(mark: OutputEpochMark | undefined): void {
    if (!mark) return;
    if (!this.mark || this.mark.id !== mark.id || mark.seq > this.mark.seq) this.mark = mark;
  }
}
