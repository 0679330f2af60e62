/**
 * Secret material on disk (the embedded database, which alone can unseal stored MCP tokens, and the
 * master key file) is private to the gateway's user: folders 0700, files 0600, created so and tightened
 * when found more open (issue 9: the data folder was 0755 and the SQLite files 0644).
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';

const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

/** Creates the folder (and its parents) as 0700, or tightens it; true when an existing mode was changed. */
export function ensurePrivateFolder(path: string): boolean {
  if (!existsSync(path)) {
    mkdirSync(path, { recursive: true, mode: FOLDER_MODE });
    return false;
  }
  return tighten(path, FOLDER_MODE);
}

/** Creates the file empty as 0600, or tightens it; true when an existing mode was changed. */
export function ensurePrivateFile(path: string): boolean {
  if (!existsSync(path)) {
    closeSync(openSync(path, 'a', FILE_MODE));
    return false;
  }
  return tighten(path, FILE_MODE);
}

function tighten(path: string, mode: number): boolean {
  const current = statSync(path).mode & 0o777;
  if ((current & ~mode) === 0) return false;
  chmodSync(path, mode);
  return true;
}
