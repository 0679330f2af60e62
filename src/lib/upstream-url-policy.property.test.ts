/**
 * Properties of the upstream URL policy's IPv6 decoding (issue 25: `[64:ff9b::a9fe:a9fe]` reached the
 * metadata service): every IPv6 embedding of a forbidden IPv4 address (IPv4-mapped, IPv4-compatible,
 * SIIT, the NAT64 prefixes, 6to4), in any spelling (compressed or not, leading zeros, either case, a
 * dotted tail), is refused as an api_base and as a resolved address; embeddings of public IPv4
 * addresses stay allowed. A failure prints its seed and path: FUZZ_SEED=… FUZZ_PATH=… replays it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParameters } from '../../test/support/fuzz-parameters.ts';
import { forbiddenAddress, OPEN_POLICY, upstreamUrlProblem } from './upstream-url-policy.ts';

const octet = fc.integer({ min: 0, max: 255 });
const word = fc.integer({ min: 0, max: 0xffff });

/** Forbidden IPv4: link-local 169.254/16 (metadata), "this network" 0/8, Alibaba's metadata address. */
const forbiddenIpv4: fc.Arbitrary<number[]> = fc.oneof(
  fc.tuple(octet, octet).map(([c, d]) => [169, 254, c, d]),
  fc.tuple(octet, octet, octet).map(([b, c, d]) => [0, b, c, d]),
  fc.constant<number[]>([169, 254, 169, 254]),
  fc.constant<number[]>([100, 100, 100, 200]),
);

/** Public IPv4 outside every forbidden range (and outside 0/8, so ::/96 is no special address). */
const publicIpv4 = fc
  .tuple(fc.integer({ min: 1, max: 223 }), octet, octet, octet)
  .filter(([a, b]) => !(a === 169 && b === 254) && !(a === 100 && b === 100) && a !== 127);

type Embedding = (ipv4: number[], filler: number[]) => number[];

const zeros = (count: number) => new Array<number>(count).fill(0);

/** Each embedding as 16 bytes; `filler` gives the free bits (prefix subnets, suffixes) random values. */
const embeddings: Record<string, Embedding> = {
  mapped: (ip) => [...zeros(10), 0xff, 0xff, ...ip],
  siit: (ip) => [...zeros(8), 0xff, 0xff, 0, 0, ...ip],
  compatible: (ip) => [...zeros(12), ...ip],
  nat64WellKnown: (ip) => [0, 0x64, 0xff, 0x9b, ...zeros(8), ...ip],
  nat64Local48: (ip, f) => [0, 0x64, 0xff, 0x9b, 0, 1, ip[0]!, ip[1]!, 0, ip[2]!, ip[3]!, ...f.slice(0, 5)],
  nat64Local56: (ip, f) => [
    0,
    0x64,
    0xff,
    0x9b,
    0,
    1,
    f[0]!,
    ip[0]!,
    0,
    ip[1]!,
    ip[2]!,
    ip[3]!,
    ...f.slice(1, 5),
  ],
  nat64Local64: (ip, f) => [0, 0x64, 0xff, 0x9b, 0, 1, f[0]!, f[1]!, 0, ...ip, ...f.slice(2, 5)],
  nat64Local96: (ip, f) => [0, 0x64, 0xff, 0x9b, 0, 1, ...f.slice(0, 6), ...ip],
  sixToFour: (ip, f) => [0x20, 0x02, ...ip, ...f.slice(0, 10)],
};

/** Only embeddings without free bits: with random bits a local NAT64 candidate may land anywhere. */
const exactEmbeddings = ['mapped', 'siit', 'compatible', 'nat64WellKnown'] as const;

interface Spelling {
  compress: boolean;
  dottedTail: boolean;
  leadingZeros: boolean;
  upper: boolean;
}

const spelling: fc.Arbitrary<Spelling> = fc.record({
  compress: fc.boolean(),
  dottedTail: fc.boolean(),
  leadingZeros: fc.boolean(),
  upper: fc.boolean(),
});

/** Writes 16 bytes as an IPv6 literal the way a caller might. */
function write(bytes: readonly number[], how: Spelling): string {
  const words = Array.from({ length: 8 }, (_, index) => (bytes[index * 2]! << 8) | bytes[index * 2 + 1]!);
  const hex = (value: number) => {
    const text = value.toString(16);
    return how.leadingZeros ? text.padStart(4, '0') : text;
  };
  let parts = words.map(hex);
  if (how.dottedTail) parts = [...parts.slice(0, 6), bytes.slice(12).join('.')];
  let text = parts.join(':');
  if (how.compress) {
    // The longest run of zero words (at least two) becomes `::`.
    let best = { start: -1, length: 1 };
    for (let start = 0; start < 6; start++) {
      let length = 0;
      while (start + length < 6 && words[start + length] === 0) length++;
      if (length > best.length) best = { start, length };
    }
    if (best.start >= 0) {
      const head = parts.slice(0, best.start).join(':');
      const tail = parts.slice(best.start + best.length).join(':');
      text = `${head}::${tail}`;
    }
  }
  return how.upper ? text.toUpperCase() : text;
}

const filler = fc.array(octet, { minLength: 10, maxLength: 10 });

describe('IPv6 literals that embed an IPv4 address (issue 25)', () => {
  it.each([
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    '::ffff:0:a9fe:a9fe',
    '::a9fe:a9fe',
    '::169.254.169.254',
    '::ffff:169.254.169.254',
    '::FFFF:a9fe:a9fe',
    '64:ff9b:1::a9fe:a9fe',
    '2002:a9fe:a9fe::1',
    '0:0:0:0:0:ffff:6464:64c8',
  ])('refuses the metadata address spelled %s', (literal) => {
    expect(upstreamUrlProblem(`http://[${literal}]/latest/meta-data`, OPEN_POLICY)).toMatch(
      /link-local or cloud-metadata/,
    );
    expect(forbiddenAddress(literal)).toBe(true);
  });

  it('keeps loopback and public embeddings allowed: ::1, ::ffff:127.0.0.1, 64:ff9b::8.8.8.8', () => {
    for (const literal of ['::1', '::ffff:127.0.0.1', '64:ff9b::8.8.8.8', '::ffff:10.0.0.1', '2001:db8::1'])
      expect(forbiddenAddress(literal)).toBe(false);
  });

  it('refuses every embedding of a forbidden IPv4 address, however it is spelled', () => {
    fc.assert(
      fc.property(
        forbiddenIpv4,
        fc.constantFrom(...Object.keys(embeddings)),
        filler,
        spelling,
        (ipv4, kind, free, how) => {
          const literal = write(embeddings[kind]!(ipv4, free), how);
          expect(forbiddenAddress(literal)).toBe(true);
          expect(upstreamUrlProblem(`http://[${literal}]:8080/v1`, OPEN_POLICY)).toMatch(
            /link-local or cloud-metadata/,
          );
        },
      ),
      fuzzParameters(500),
    );
  });

  it('allows the exact embeddings of public IPv4 addresses, however they are spelled', () => {
    fc.assert(
      fc.property(publicIpv4, fc.constantFrom(...exactEmbeddings), spelling, (ipv4, kind, how) => {
        const literal = write(embeddings[kind]!(ipv4, zeros(10)), how);
        expect(forbiddenAddress(literal)).toBe(false);
        expect(upstreamUrlProblem(`http://[${literal}]/v1`, OPEN_POLICY)).toBeUndefined();
      }),
      fuzzParameters(300),
    );
  });

  it('refuses link-local fe80::/10 in any spelling and with a zone id', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0xfe80, max: 0xfebf }), word, spelling, (first, last, how) => {
        const bytes = [first >> 8, first & 255, ...zeros(12), last >> 8, last & 255];
        const literal = write(bytes, { ...how, dottedTail: false });
        expect(forbiddenAddress(literal)).toBe(true);
        expect(forbiddenAddress(`${literal}%eth0`)).toBe(true);
      }),
      fuzzParameters(200),
    );
  });
});
