import net from 'node:net';

// Addresses a clone must never reach unless private hosts are allowed: loopback, private,
// link-local (cloud metadata), CGNAT, benchmarking, documentation, multicast and reserved
// ranges (reference T2, as in repomix's fix).
const BLOCKED_IPV4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

const BLOCKED_IPV6: ReadonlyArray<readonly [string, number]> = [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible block
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: hides an arbitrary IPv4 peer
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const blockList = new net.BlockList();
for (const [network, prefix] of BLOCKED_IPV4) blockList.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of BLOCKED_IPV6) blockList.addSubnet(network, prefix, 'ipv6');

/** True for an address a clone must not connect to. `address` must be an IP literal. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blockList.check(address, 'ipv4');
  if (family !== 6) throw new TypeError('isPrivateAddress expects an IP address');
  if (blockList.check(address, 'ipv6')) return true;
  const embedded = embeddedIpv4(address);
  return embedded !== null && blockList.check(embedded, 'ipv4');
}

/** IPv6 forms that carry an IPv4 address the packets end up at: mapped, NAT64 and 6to4. */
function embeddedIpv4(address: string): string | null {
  const words = ipv6Words(address);
  const isMapped = words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff;
  const isNat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0);
  if (isMapped || isNat64) return ipv4FromWords(words[6], words[7]);
  if (words[0] === 0x2002) return ipv4FromWords(words[1], words[2]);
  return null;
}

function ipv4FromWords(high = 0, low = 0): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address; WHATWG URL first rewrites any dotted tail as hex. */
function ipv6Words(address: string): number[] {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const gap = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...gap, ...right].map((word) => Number.parseInt(word, 16));
}
