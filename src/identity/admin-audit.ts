/**
 * Writes the audit entry of an admin change inside the change's transaction (docs/audit.md): a change
 * that fails writes none, and an entry that cannot be written rolls the change back with 503.
 */
import type { Kysely } from 'kysely';
import { errors } from '../lib/error-catalogue.ts';
import {
  type AuditChange,
  type AuditContext,
  AuditRepository,
} from '../store/db/repositories/audit-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import { type AdminActor, actorLabel } from './authenticator.ts';
import { OrganizationOf, type OwnedThing } from './organization-of.ts';

export type { AuditChange, AuditContext };

/** Who is changing something, and in which request (the request id joins the entry to the logs). */
export function auditContext(actor: AdminActor, requestId: string): AuditContext {
  return { actor: actorLabel(actor), actorKeyId: actor.kind === 'user' ? actor.keyId : null, requestId };
}

/** Appends the entry in `trx`; a failure becomes 503 audit_log_unavailable (and rolls `trx` back). */
export async function appendAudit(
  trx: Kysely<DatabaseSchema>,
  context: AuditContext,
  change: AuditChange,
  at: number,
): Promise<void> {
  try {
    await new AuditRepository(trx).append(context, change, at);
  } catch {
    throw errors.auditLogUnavailable();
  }
}

/** The organization a thing belongs to, read in the transaction (null for none). */
export async function organizationOfTarget(
  trx: Kysely<DatabaseSchema>,
  thing: OwnedThing,
): Promise<string | null> {
  return (await new OrganizationOf(trx).of(thing)) ?? null;
}
