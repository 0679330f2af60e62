/**
 * What routing needs from deployment capacity counters. `limits/` owns the counters and implements this
 * by shape; the composition root connects them (routing never imports limits/).
 */
export interface DeploymentUsage {
  /** Requests started in the current minute. */
  requests: number;
  /** Tokens used in the current minute. */
  tokens: number;
}

export interface CapacitySignal {
  minuteUsage(deploymentId: string): DeploymentUsage;
  /** An attempt was sent to the deployment. */
  attemptStarted(deploymentId: string): void;
}
