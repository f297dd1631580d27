import { type LookupAddress, type LookupAllOptions, lookup } from "node:dns"
import { isIP, type LookupFunction } from "node:net"
import ipaddr from "ipaddr.js"

/**
 * The guard on the addresses the service itself connects to for someone else (a webhook
 * endpoint; later a client's metadata document): an address of the service's own network or one
 * of the Internet's special ranges could make the service probe what only it can reach.
 *
 * ipaddr.js names the ranges (IANA's special-purpose registries); only its `unicast`, a host on
 * the Internet, is allowed. Its names that its types leave out (`deprecatedSiteLocal`, `discard`,
 * `segmentRouting`, `deprecatedOrchid`) are refused like any other name that is not `unicast`.
 */

/** What the guard makes of one address. */
export interface AddressClass {
  /** ipaddr.js's name of the range, or the guard's own: `siteLocal`, `ipv4Compatible`, `zoned`, `unparsable`. */
  readonly range: string
  /** The IPv4 address an IPv4-in-IPv6 form carries, and its range. */
  readonly embeds?: { readonly address: string; readonly range: string }
  readonly allowed: boolean
}

/**
 * Ranges the guard names itself. Site-local (RFC 3879 deprecated it, some networks still route
 * it): ipaddr.js only names it at run time, so the refusal does not hang on a name its types
 * leave out. IPv4-compatible (`::a.b.c.d`, deprecated by RFC 4291): ipaddr.js calls it unicast.
 */
const ownRanges: ReadonlyArray<readonly [string, [ipaddr.IPv6, number]]> = [
  ["siteLocal", ipaddr.IPv6.parseCIDR("fec0::/10")],
  ["ipv4Compatible", ipaddr.IPv6.parseCIDR("::/96")]
]

/**
 * The IPv6 forms that carry an IPv4 address, by range name: where its four bytes are, and whether
 * the address is that IPv4 host itself. Only an IPv4-mapped address is: a dual-stack socket
 * speaks IPv4 to it. Each other form reaches its IPv4 through something on the way whose place in
 * the network the service cannot see (the kernel's automatic tunnel for IPv4-compatible, an SIIT
 * or NAT64 translator, the local-use NAT64 prefix being a network's own by definition, a 6to4 or
 * Teredo relay whose IPv4 is a tunnel's end, not the receiver), and no receiver needs one: so
 * each is refused even around a public IPv4, the safer reading. Behind DNS64 an IPv6-only host
 * reaches an IPv4-only receiver only with the guard off, as before.
 */
const ipv4Forms: ReadonlyArray<{
  readonly range: string
  /** Its four bytes; undefined where the form does not say where they are. */
  readonly ipv4: (bytes: ReadonlyArray<number>) => ReadonlyArray<number> | undefined
  readonly itself: boolean
}> = [
  { range: "ipv4Mapped", ipv4: (bytes) => bytes.slice(12), itself: true },
  { range: "ipv4Compatible", ipv4: (bytes) => bytes.slice(12), itself: false },
  { range: "rfc6145", ipv4: (bytes) => bytes.slice(12), itself: false },
  // RFC 6052: the well-known 64:ff9b::/96 ends with the IPv4; within the local-use 64:ff9b:1::/48
  // a network picks its own prefix length (RFC 8215), and with it where the IPv4 sits.
  { range: "rfc6052", ipv4: (bytes) => (bytes[5] === 0 ? bytes.slice(12) : undefined), itself: false },
  { range: "6to4", ipv4: (bytes) => bytes.slice(2, 6), itself: false },
  // Teredo stores its client's IPv4 with every bit flipped.
  { range: "teredo", ipv4: (bytes) => bytes.slice(12).map((byte) => byte ^ 0xff), itself: false }
]

const UNICAST = "unicast"

const classifyIPv6 = (address: ipaddr.IPv6): AddressClass => {
  const named = address.range()
  const own = named === UNICAST ? ownRanges.find(([, range]) => address.match(range)) : undefined
  const range = own === undefined ? named : own[0]
  const form = ipv4Forms.find((carrier) => carrier.range === range)
  if (form === undefined) return { range, allowed: range === UNICAST }
  const carried = form.ipv4(address.toByteArray())
  if (carried === undefined) return { range, allowed: false }
  const ipv4 = new ipaddr.IPv4([...carried])
  const embeds = { address: ipv4.toString(), range: ipv4.range() }
  return { range, embeds, allowed: form.itself && embeds.range === UNICAST }
}

/**
 * `address` with a dotted IPv4 tail written as two hex groups. ipaddr.js reads `::a.b.c.d` as
 * `::ffff:a.b.c.d` (an IPv4-compatible address as an IPv4-mapped one), and Node's resolver writes
 * an IPv4-compatible answer that way: in hex it is read as written.
 */
const hexTail = (address: string) =>
  address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (...octets: ReadonlyArray<string>) => {
    const [a = 0, b = 0, c = 0, d = 0] = octets.slice(1, 5).map(Number)
    return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  })

/**
 * How the guard classes `address`, an IP literal. Only the plain dotted IPv4 and the IPv6 that
 * Node connects to are read (not `0177.1`, which ipaddr.js would take as 127.0.0.1): anything
 * else is unparsable, and refused.
 */
export const classifyAddress = (address: string): AddressClass => {
  const family = isIP(address)
  if (family === 0) return { range: "unparsable", allowed: false }
  try {
    if (family === 4) {
      const range = ipaddr.IPv4.parse(address).range()
      return { range, allowed: range === UNICAST }
    }
    // A zone names one of this host's links: only a neighbour there is reached, never the Internet.
    if (address.includes("%")) return { range: "zoned", allowed: false }
    return classifyIPv6(ipaddr.IPv6.parse(hexTail(address)))
  } catch {
    return { range: "unparsable", allowed: false }
  }
}

/** Whether `address` (an IP literal) is one the service may not connect to for someone else; unparsable input is. */
export const isPrivateAddress = (address: string): boolean => !classifyAddress(address).allowed

/** A connection refused before it was made: the address it would have reached is not public. */
export class RefusedAddress extends Error {
  constructor(readonly address: string) {
    const { range, embeds } = classifyAddress(address)
    super(`address ${address} is private (${range}${embeds === undefined ? "" : ` around ${embeds.address}`})`)
  }
}

/** Name resolution answering every address of a name, as `guardLookup` asks it. */
export type ResolveAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: ReadonlyArray<LookupAddress>) => void
) => void

/**
 * Name resolution for an outgoing connection that refuses private addresses at connect time: a
 * check before the request could be answered otherwise by the time it connects, so the socket is
 * given exactly the addresses checked, from one resolution. One private address among a name's
 * refuses the name. Node asks for one address or, choosing between families, for all of them.
 * An IP literal never comes here (Node connects to it as it is): check it with isPrivateAddress.
 */
export const guardLookup =
  (resolve: ResolveAll): LookupFunction =>
  (hostname, options, callback) =>
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "")
      const refused = addresses.find((found) => isPrivateAddress(found.address))
      if (refused !== undefined) return callback(new RefusedAddress(refused.address), "")
      const [first] = addresses
      if (options.all === true) return callback(null, [...addresses])
      if (first === undefined) return callback(new Error(`${hostname} has no address`), "")
      return callback(null, first.address, first.family)
    })

/** `guardLookup` over the system's resolver: the `lookup` option of an outgoing request. */
export const guardedLookup: LookupFunction = guardLookup(lookup)
