/**
 * The soak's own client connections (fetch and the MCP SDK use the global undici dispatcher). The gateway
 * hints `Keep-Alive: timeout=72`, so a default client keeps idle sockets for over a minute; a soak that
 * judges the gateway's sockets after the load must instead leave as callers do, by closing its
 * connections. Open one of these before a phase and close it after: every socket it made is ended.
 */
import { Agent, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';

export class CallerConnections {
  private readonly agent = new Agent();
  private readonly previous: Dispatcher;

  private constructor() {
    this.previous = getGlobalDispatcher();
    setGlobalDispatcher(this.agent);
  }

  /** Routes every fetch of this process through a fresh pool until close(). */
  static open(): CallerConnections {
    return new CallerConnections();
  }

  /** Waits for requests in flight, closes every socket of the pool and restores the previous dispatcher. */
  async close(): Promise<void> {
    setGlobalDispatcher(this.previous);
    await this.agent.close();
  }
}
