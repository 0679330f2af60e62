/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function and per module
 * (npm package, Switchboard source folder, Node internals), as shares of the non-idle time.
 */

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  selfMicroseconds: number;
  /** Share of the busy (non-idle) time, 0..1. */
  share: number;
}

export interface ProfileSummary {
  busyMicroseconds: number;
  idleMicroseconds: number;
  functions: ProfileEntry[];
  modules: ProfileEntry[];
}

export function summarizeProfile(profile: CpuProfile, limit = 15): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    // A sample lasts until the next one is taken.
    const duration = profile.timeDeltas[index + 1] ?? 0;
    const frame = nodes.get(profile.samples[index]!);
    if (!frame || duration <= 0) continue;
    if (frame.functionName === '(idle)') {
      idle += duration;
      continue;
    }
    busy += duration;
    const name = frame.url
      ? `${frame.functionName || '(anonymous)'} ${shortLocation(frame.url)}:${frame.lineNumber + 1}`
      : frame.functionName;
    byFunction.set(name, (byFunction.get(name) ?? 0) + duration);
    const module = moduleOf(frame.url, frame.functionName);
    byModule.set(module, (byModule.get(module) ?? 0) + duration);
  }
  const top = (totals: Map<string, number>) =>
    [...totals]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, microseconds]) => ({
        name,
        selfMicroseconds: microseconds,
        share: busy > 0 ? microseconds / busy : 0,
      }));
  return {
    busyMicroseconds: busy,
    idleMicroseconds: idle,
    functions: top(byFunction),
    modules: top(byModule),
  };
}

/** `fastify`, `@fastify/ajv-compiler`, `src/http`, `node:internal/streams`, or the V8 pseudo-frame. */
export function moduleOf(url: string, functionName: string): string {
  if (!url) return functionName || '(native)';
  const packages = url.lastIndexOf('/node_modules/');
  if (packages !== -1) {
    const [first, second] = url.slice(packages + '/node_modules/'.length).split('/');
    return first?.startsWith('@') ? `${first}/${second}` : (first ?? url);
  }
  if (url.startsWith('node:'))
    return url.slice(0, url.lastIndexOf('/') > 0 ? url.lastIndexOf('/') : url.length);
  const source = /\/(src|bench)\/([^/]+)\//.exec(url);
  if (source) return `${source[1]}/${source[2]}`;
  return shortLocation(url);
}

function shortLocation(url: string): string {
  const packages = url.lastIndexOf('/node_modules/');
  if (packages !== -1) return url.slice(packages + '/node_modules/'.length);
  const source = url.search(/\/(src|bench)\//);
  if (source !== -1) return url.slice(source + 1);
  return url.replace(/^file:\/\//, '');
}
