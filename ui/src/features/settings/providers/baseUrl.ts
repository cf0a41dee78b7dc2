/*
 * Facts about a provider's base URL that decide where its keys may go, mirroring the backend:
 * `is_local` in src-tauri/crates/api/src/ipc/args/rules.rs (plain http only to these hosts) and
 * `same_origin` in src-tauri/crates/api/src/service/providers.rs (a move to another origin sends
 * the keys elsewhere). Pure; hosts are read from `URL`, which normalises them as the backend's
 * parser does (IPv4 dotted, IPv6 bracketed and compressed, names lowercased).
 */

const LOCAL_SUFFIXES = ['localhost', 'local', 'lan', 'internal', 'home.arpa'];

/** The URL, or null when it does not parse. */
function parse(text: string): URL | null {
  try {
    return new URL(text.trim());
  } catch {
    return null;
  }
}

function isLocalIpv4([a, b]: number[]): boolean {
  return (
    a === 127 || // loopback
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || // private networks
    (a === 169 && b === 254) // link-local
  );
}

/** The eight 16-bit groups of an IPv6 address as `URL` writes it (`::` compressed, no dotted tail). */
function ipv6Groups(address: string): number[] | null {
  const [head, tail, ...rest] = address.split('::');
  if (rest.length > 0) return null;
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const front = groups(head);
  const back = groups(tail);
  const all = tail === undefined ? front : [...front, ...Array(8 - front.length - back.length).fill(0), ...back];
  return all.length === 8 && all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : null;
}

function isLocalIpv6(groups: number[]): boolean {
  const zeros = (n: number) => groups.slice(0, n).every((g) => g === 0);
  if (zeros(7) && groups[7] === 1) return true; // ::1
  if ((groups[0] & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((groups[0] & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if (zeros(5) && groups[5] === 0xffff) return isLocalIpv4([groups[6] >> 8, groups[6] & 0xff]); // ::ffff:a.b.c.d
  return false;
}

/**
 * Whether `hostname` (as `URL.hostname` gives it) is this machine or a local network: loopback,
 * private-network and link-local addresses, and names that only resolve on a local network
 * (`localhost`, `*.local`, `*.lan`, `*.internal`, `*.home.arpa`, single-label names).
 */
export function isLocalHost(hostname: string): boolean {
  if (hostname.startsWith('[')) {
    const groups = ipv6Groups(hostname.slice(1, -1));
    return groups !== null && isLocalIpv6(groups);
  }
  if (/^\d+\.\d+\.\d+\.\d+$/.test(hostname)) return isLocalIpv4(hostname.split('.').map(Number));
  const name = hostname.replace(/\.+$/, '').toLowerCase();
  return !name.includes('.') || LOCAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

/** An `https` URL with a host, or an `http` one (plain http is judged by {@link plainHttpIsLocal}). */
export function isHttpUrl(text: string): boolean {
  const url = parse(text);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** False only for a plain `http://` URL to a host beyond this machine and the local network. */
export function plainHttpIsLocal(text: string): boolean {
  const url = parse(text);
  return url === null || url.protocol !== 'http:' || isLocalHost(url.hostname);
}

/** Whether two base URLs share scheme, host and port (an unparsable one shares nothing). */
export function sameOrigin(a: string, b: string): boolean {
  const [x, y] = [parse(a), parse(b)];
  return x !== null && y !== null && x.origin === y.origin;
}

/** The host (with a port when it has one) a base URL points at, for saying where keys go. */
export function hostOf(text: string): string {
  return parse(text)?.host || text.trim();
}
