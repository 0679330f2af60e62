/**
 * Checks the SigV4 signature of a request the fake Bedrock received, as AWS does: known access key,
 * scope (region, service), date skew, payload hash, then the signature recomputed with the same
 * libraries and the fake's secret over the headers the request says it signed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

export interface FakeAwsAccount {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export type SignatureVerdict =
  | { ok: true }
  | {
      ok: false;
      errorType:
        | 'MissingAuthenticationTokenException'
        | 'UnrecognizedClientException'
        | 'InvalidSignatureException';
      reason: string;
    };

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

export async function verifySignature(
  account: FakeAwsAccount,
  request: { method: string; url: string; headers: IncomingHttpHeaders },
  body: Buffer,
): Promise<SignatureVerdict> {
  const match = AUTHORIZATION.exec(String(request.headers.authorization ?? ''));
  if (!match) return refuse('MissingAuthenticationTokenException', 'no SigV4 authorization header');
  const [, accessKeyId, day, region, service, signedList, signature] = match as unknown as string[];
  if (accessKeyId !== account.accessKeyId) return refuse('UnrecognizedClientException', 'unknown access key');
  if (region !== account.region || service !== 'bedrock')
    return refuse('InvalidSignatureException', `wrong scope ${region}/${service}`);
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  const signingDate = parseAmzDate(amzDate);
  if (!signingDate || !amzDate.startsWith(day!) || Math.abs(Date.now() - signingDate.getTime()) > 5 * 60_000)
    return refuse('InvalidSignatureException', 'missing, inconsistent or skewed x-amz-date');
  const claimedHash = request.headers['x-amz-content-sha256'];
  if (claimedHash !== undefined && claimedHash !== createHash('sha256').update(body).digest('hex'))
    return refuse('InvalidSignatureException', 'payload hash mismatch');
  const signedNames = signedList!.split(';');
  if (!signedNames.includes('host') || !signedNames.includes('x-amz-date'))
    return refuse('InvalidSignatureException', 'host and x-amz-date must be signed');
  const headers: Record<string, string> = {};
  for (const name of signedNames) {
    const value = request.headers[name];
    if (typeof value !== 'string')
      return refuse('InvalidSignatureException', `signed header ${name} missing`);
    headers[name] = value;
  }
  const expected = await expectedSignature(account, request, headers, body, signingDate);
  const same =
    expected.length === signature!.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature!));
  return same ? { ok: true } : refuse('InvalidSignatureException', 'signature mismatch');
}

async function expectedSignature(
  account: FakeAwsAccount,
  request: { method: string; url: string },
  headers: Record<string, string>,
  body: Buffer,
  signingDate: Date,
): Promise<string> {
  const [path, search = ''] = request.url.split('?');
  const sessionToken = headers['x-amz-security-token'];
  const signer = new SignatureV4({
    service: 'bedrock',
    region: account.region,
    credentials: {
      accessKeyId: account.accessKeyId,
      secretAccessKey: account.secretAccessKey,
      ...(sessionToken ? { sessionToken } : {}),
    },
    sha256: Sha256,
  });
  const [hostname, port] = headers.host!.split(':');
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: hostname!,
      ...(port ? { port: Number(port) } : {}),
      path: path!,
      query: Object.fromEntries(new URLSearchParams(search)),
      headers,
      body: body.toString('utf8'),
    },
    { signingDate },
  );
  return /Signature=([0-9a-f]{64})$/.exec(signed.headers.authorization!)![1]!;
}

function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const [, year, month, date, hours, minutes, seconds] = match.map(Number) as number[];
  return new Date(Date.UTC(year!, month! - 1, date!, hours!, minutes!, seconds!));
}

function refuse(
  errorType: Extract<SignatureVerdict, { ok: false }>['errorType'],
  reason: string,
): SignatureVerdict {
  return { ok: false, errorType, reason };
}
