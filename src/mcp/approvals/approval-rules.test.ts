import { describe, expect, it } from 'vitest';
import { LINEAGE_OVERFLOW } from '../../identity/key-lineage.ts';
import type { McpApprovalRecord } from '../../store/db/repositories/mcp-approval-repository.ts';
import {
  APPROVAL_USABLE_MS,
  mayApprove,
  nextStep,
  oldestRelevantCreation,
  PENDING_TTL_MS,
  REJECTION_APPLIES_MS,
  visibleStatus,
} from './approval-rules.ts';

const created = 1_000_000;
const request = (changes: Partial<McpApprovalRecord>): McpApprovalRecord => ({
  approval_request_id: 'apr_1',
  server_id: 's',
  tool_name: 't',
  call_hash: 'h',
  key_id: 'k',
  key_owner_user_id: 'u',
  arguments: {},
  forwarded_header_names: [],
  status: 'pending',
  created_at: created,
  decided_at: null,
  decided_by: null,
  decision_comment: null,
  consumed_at: null,
  ...changes,
});

describe('approval state table', () => {
  it('(none) → a new pending request', () => {
    expect(nextStep([], created)).toEqual({ kind: 'create' });
  });

  it('pending → the identical call waits on the same request until 24 hours pass, then it shows expired', () => {
    expect(nextStep([request({})], created + PENDING_TTL_MS - 1)).toEqual({
      kind: 'wait',
      approvalRequestId: 'apr_1',
    });
    expect(visibleStatus(request({}), created + PENDING_TTL_MS - 1)).toBe('pending');
    expect(visibleStatus(request({}), created + PENDING_TTL_MS)).toBe('expired');
    expect(nextStep([request({})], created + PENDING_TTL_MS)).toEqual({ kind: 'create' });
  });

  it('approved → consumable once within 15 minutes; consumed → a new request', () => {
    const approved = request({ status: 'approved', decided_at: created + 10 });
    expect(nextStep([approved], created + 10 + APPROVAL_USABLE_MS - 1)).toEqual({
      kind: 'consume',
      approvalRequestId: 'apr_1',
    });
    expect(nextStep([{ ...approved, consumed_at: created + 20 }], created + 30)).toEqual({ kind: 'create' });
    expect(visibleStatus({ ...approved, consumed_at: created + 20 }, created + PENDING_TTL_MS * 2)).toBe(
      'approved',
    );
  });

  it('approved → expired when 15 minutes pass unused', () => {
    const approved = request({ status: 'approved', decided_at: created + 10 });
    expect(visibleStatus(approved, created + 10 + APPROVAL_USABLE_MS)).toBe('expired');
    expect(nextStep([approved], created + 10 + APPROVAL_USABLE_MS)).toEqual({ kind: 'create' });
  });

  it('rejected → identical calls are refused with the same id for 15 minutes, then a new request', () => {
    const rejected = request({ status: 'rejected', decided_at: created + 10 });
    expect(nextStep([rejected], created + 10 + REJECTION_APPLIES_MS - 1)).toEqual({
      kind: 'rejected',
      approvalRequestId: 'apr_1',
    });
    expect(nextStep([rejected], created + 10 + REJECTION_APPLIES_MS)).toEqual({ kind: 'create' });
    expect(visibleStatus(rejected, created + PENDING_TTL_MS * 2)).toBe('rejected');
  });

  it('with several requests for one call (racing first calls): a rejection, then an approval, then the newest pending', () => {
    const pending = (id: string) => request({ approval_request_id: id });
    const approved = request({ approval_request_id: 'apr_ok', status: 'approved', decided_at: created + 5 });
    const rejected = request({ approval_request_id: 'apr_no', status: 'rejected', decided_at: created + 5 });
    const now = created + 10;
    expect(nextStep([pending('apr_new'), pending('apr_old')], now)).toEqual({
      kind: 'wait',
      approvalRequestId: 'apr_new',
    });
    expect(nextStep([pending('apr_new'), approved], now)).toEqual({
      kind: 'consume',
      approvalRequestId: 'apr_ok',
    });
    expect(nextStep([approved, rejected], now)).toEqual({ kind: 'rejected', approvalRequestId: 'apr_no' });
    expect(nextStep([pending('apr_new'), { ...approved, consumed_at: now }], now)).toEqual({
      kind: 'wait',
      approvalRequestId: 'apr_new',
    });
  });

  it('looks back far enough for an approval decided at the end of the pending window', () => {
    const lateDecision = created + PENDING_TTL_MS - 1;
    const approved = request({ status: 'approved', decided_at: lateDecision });
    const lastUsableMoment = lateDecision + APPROVAL_USABLE_MS - 1;
    expect(nextStep([approved], lastUsableMoment).kind).toBe('consume');
    expect(created).toBeGreaterThan(oldestRelevantCreation(lastUsableMoment));
  });
});

describe('four-eyes', () => {
  const user = (...people: string[]) => ({ kind: 'user' as const, people: new Set(people) });

  it('refuses an approver who is behind the calling key, or whose key someone behind it created', () => {
    // The caller's own key, a key it created, and a key created by a key it created.
    expect(mayApprove(user('user:a'), new Set(['user:a']))).toBe(false);
    expect(mayApprove(user('user:a'), new Set(['user:m', 'user:a']))).toBe(false);
    expect(mayApprove(user('user:a'), new Set(['user:m2', 'user:m', 'user:a']))).toBe(false);
    // Approving with a peer's key that the caller created.
    expect(mayApprove(user('user:b', 'user:a'), new Set(['user:a']))).toBe(false);
  });

  it('lets a truly different administrator approve, and the master key always', () => {
    expect(mayApprove(user('user:c'), new Set(['user:m', 'user:a']))).toBe(true);
    expect(mayApprove({ kind: 'master' }, new Set(['user:a', LINEAGE_OVERFLOW]))).toBe(true);
  });

  it('refuses every administrator when a lineage was cut at its bound', () => {
    expect(mayApprove(user('user:c'), new Set(['user:a', LINEAGE_OVERFLOW]))).toBe(false);
    expect(mayApprove(user('user:c', LINEAGE_OVERFLOW), new Set(['user:a']))).toBe(false);
  });
});
