/**
 * The arguments of the ADMIT and SETTLE scripts and the reading of their replies (layouts in
 * redis-rate-limit-scripts.ts), and the settlement that undoes an admission nobody waits for any more.
 */
import { OUTPUT_EPOCH_KEY, type OutputRefusal } from './output-counters.ts';
import {
  type AdmissionRequest,
  type AdmissionResponse,
  type ReservationLease,
  type SettlementRequest,
  type SlotLease,
  windowKey,
} from './rate-limit-counters.ts';

export interface ScriptCall {
  keys: string[];
  args: Array<string | number>;
}

export interface KeyNames {
  /** A key under the store's prefix. */
  key(name: string): string;
  /** An output counter's stored base under the prefix. */
  outputKey(base: string): string;
}

/** The ADMIT call; `now` and `deadline` in the store's clock ('' : the script reads TIME / none). */
export function admissionCall(
  request: AdmissionRequest,
  names: KeyNames,
  now: number | '',
  deadline: number | '',
): ScriptCall {
  const { checks, slot, reservation } = request;
  const reads = request.reads ?? [];
  const budgets = request.budgets ?? [];
  const outputs = request.outputs ?? [];
  const keys = [
    ...checks.map((check) => names.key(check.key)),
    ...(slot ? [names.key(slot.key)] : []),
    ...reads.map((key) => names.key(key)),
    ...budgets.map((budget) => names.key(budget.key)),
    ...outputs.map((output) => names.outputKey(output.key)),
    ...(outputs.length > 0 ? [names.key(OUTPUT_EPOCH_KEY)] : []),
  ];
  const args: Array<string | number> = [now, deadline, checks.length];
  for (const check of checks) args.push(check.window, check.limit, check.amount);
  args.push(slot ? slot.limit : '', slot?.member ?? '', slot?.leaseMs ?? 0, reads.length, budgets.length);
  for (const budget of budgets) args.push(budget.durationMs, budget.limit ?? '');
  const amount = reservation ? Math.max(0, Math.round(reservation.amount)) : 0;
  args.push(amount > 0 ? reservation!.member : '', amount, reservation?.leaseMs ?? 0);
  args.push(outputs.length, request.epochId ?? '', request.epochSeen?.id ?? '', request.epochSeen?.seq ?? 0);
  for (const output of outputs) args.push(output.limit);
  return { keys, args };
}

/** The ADMIT reply as an AdmissionResponse, or 'late' when the script ran after its deadline. */
export function admissionReply(
  reply: readonly number[],
  request: AdmissionRequest,
): AdmissionResponse | 'late' {
  const now = reply[1]!;
  if (reply[0] === 5) return 'late';
  if (reply[0] === 1) {
    const count = request.checks.length;
    const readsAt = 2 + count * 2;
    const spentAt = readsAt + (request.reads?.length ?? 0);
    const budgets = request.budgets?.length ?? 0;
    return {
      admitted: true,
      now,
      counts: reply.slice(2, 2 + count),
      resets: reply.slice(2 + count, readsAt),
      reads: reply.slice(readsAt, spentAt),
      spent: reply.slice(spentAt, spentAt + budgets),
      outputs: reply.slice(spentAt + budgets),
    };
  }
  const output = outputRefusal(reply);
  const reserved = reply[5]!;
  return {
    admitted: false,
    now,
    failed: output ? -1 : reply[2]! - 1,
    count: reply[3]!,
    reset: reply[4]!,
    reads: reply.slice(6),
    ...(reserved > 0 ? { reserved } : {}),
    ...(output ? { output } : {}),
  };
}

/** What gives back everything an admission took: its counter increments, its slot, its reservation. */
export function undoAdmission(request: AdmissionRequest, now: number): SettlementRequest {
  const slots: SlotLease[] = request.slot ? [{ key: request.slot.key, member: request.slot.member }] : [];
  const reservation = request.reservation;
  const reservations: ReservationLease[] =
    reservation && reservation.amount > 0
      ? (request.budgets ?? [])
          .filter((budget) => budget.limit !== null)
          .map((budget) => ({
            key: budget.key,
            member: reservation.member,
            amount: Math.round(reservation.amount),
          }))
      : [];
  return {
    adjustments: request.checks.map((check) => ({
      key: windowKey(check, now),
      window: check.window,
      delta: -check.amount,
    })),
    release: { slots, reservations },
  };
}

/** The SETTLE call; undefined when the settlement changes nothing. */
export function settlementCall(
  request: SettlementRequest,
  names: KeyNames,
  now: number | '',
): ScriptCall | undefined {
  const { adjustments } = request;
  const budgets = request.budgets ?? [];
  const released = { slots: request.release?.slots ?? [], reservations: request.release?.reservations ?? [] };
  const renewed = { slots: request.renew?.slots ?? [], reservations: request.renew?.reservations ?? [] };
  const leases = [released.slots, released.reservations, renewed.slots, renewed.reservations];
  if (adjustments.length === 0 && budgets.length === 0 && leases.every((list) => list.length === 0)) {
    return undefined;
  }
  const keys = [
    ...adjustments.map((adjustment) => names.key(adjustment.key)),
    ...budgets.map((budget) => names.key(budget.key)),
    ...leases.flatMap((list: ReadonlyArray<{ key: string }>) => list.map((lease) => names.key(lease.key))),
  ];
  const args: Array<string | number> = [now, adjustments.length];
  for (const adjustment of adjustments)
    args.push(adjustment.window, adjustment.delta, adjustment.createMinute ? '1' : '0');
  args.push(budgets.length);
  for (const budget of budgets)
    args.push(budget.durationMs, Math.round(budget.amount), budget.raiseInWindow ?? '');
  args.push(...leases.map((list) => list.length), request.renew?.leaseMs ?? 0);
  for (const slot of released.slots) args.push(slot.member);
  for (const lease of released.reservations) args.push(lease.member, Math.round(lease.amount));
  for (const slot of renewed.slots) args.push(slot.member);
  for (const lease of renewed.reservations) args.push(lease.member, Math.round(lease.amount));
  return { keys, args };
}

/** The output refusal of an admission reply (codes 2–4 of the admission script), if it is one. */
function outputRefusal(reply: readonly number[]): OutputRefusal | undefined {
  switch (reply[0]) {
    case 2:
      return { state: 'exceeded', index: reply[2]! - 1, recorded: reply[3]! };
    case 3:
      return { state: 'unknown', index: reply[2]! - 1 };
    case 4:
      return { state: 'unavailable', until: reply[3]! };
    default:
      return undefined;
  }
}
