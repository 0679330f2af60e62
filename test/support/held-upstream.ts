/**
 * An OpenAI-compatible embeddings upstream that holds every answer until the test releases it, so a
 * test can act (cancel a batch, move the clock past its window) while known items are in flight,
 * instead of racing the worker. Answers are the fake OpenAI upstream's embeddings.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerModality } from '../fakes/fake-openai-modalities.ts';
import { LoopbackServer, type RecordedRequest, readBody, recordRequest } from '../fakes/loopback-server.ts';

export class HeldUpstream {
  readonly requests: RecordedRequest[] = [];
  private loopback!: LoopbackServer;
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => {};

  static async start(): Promise<HeldUpstream> {
    const upstream = new HeldUpstream();
    upstream.loopback = await LoopbackServer.listen((request, response) =>
      upstream.handle(request, response),
    );
    return upstream;
  }

  /** Base URL for `provider: openai` (`…/v1`). */
  get baseUrl(): string {
    return `${this.loopback.origin}/v1`;
  }

  /** Requests from now on wait until release(). */
  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  /** Answers every waiting request, and later ones at once. */
  release(): void {
    this.open();
    this.gate = Promise.resolve();
  }

  close(): Promise<void> {
    this.release();
    return this.loopback.close();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const recorded = recordRequest(request, await readBody(request), response);
    this.requests.push(recorded);
    await this.gate;
    if (!answerModality(recorded.path, recorded.body ?? {}, {}, response))
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"message":"embeddings only"}}');
  }
}
