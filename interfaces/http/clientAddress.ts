/**
 * Who the client is, as far as the network tells: pure functions over header values and
 * addresses, so that the rules are tested without HTTP.
 */

/** Which proxies are trusted to say who the client is (TRUSTED_PROXY_HEADERS, TRUSTED_PROXY_COUNT). */
export interface TrustedProxies {
  /** Header names, lower-case, in order of preference: the first one the request carries is read. */
  readonly headers: ReadonlyArray<string>
  /** How many trusted proxies stand in front of the service, each appending the address it saw. */
  readonly count: number
}

/**
 * The client's address. With no trusted header, or a request that carries none, it is the
 * socket's peer. Otherwise it is the `count`-th address from the right of the first trusted
 * header present: the entries right of it were appended by trusted proxies, the ones left of it
 * are whatever the client chose to send. When the header has fewer entries than trusted
 * proxies, or the chosen entry is not an address, the socket's peer is used: nothing the client
 * wrote is trusted.
 */
export const resolveClientAddress = (
  headers: Readonly<Record<string, string | undefined>>,
  socketAddress: string | undefined,
  proxies: TrustedProxies
): string | undefined => {
  const socket = socketAddress === undefined ? undefined : normaliseAddress(socketAddress)
  for (const name of proxies.headers) {
    const value = headers[name]
    if (value === undefined) continue
    const entries = forwardedAddresses(name, value)
    const chosen = entries.length >= proxies.count ? entries[entries.length - proxies.count] : undefined
    return (chosen === undefined ? undefined : normaliseAddress(chosen)) ?? socket
  }
  return socket
}

/**
 * The addresses a forwarding header lists, left to right: `X-Forwarded-For`-style lists, or the
 * `for=` parameters of RFC 7239 `Forwarded` (an element without one keeps its place, empty).
 */
export const forwardedAddresses = (name: string, value: string): ReadonlyArray<string> => {
  if (name.toLowerCase() === "forwarded") {
    return value.split(",").map((element) => {
      const pair = element
        .split(";")
        .map((part) => part.trim())
        .find((part) => part.toLowerCase().startsWith("for="))
      return pair === undefined ? "" : pair.slice(4).replace(/^"(.*)"$/, "$1")
    })
  }
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
}

/**
 * An address in one spelling: IPv4 dotted-decimal, IPv4-mapped IPv6 as the IPv4 address, other
 * IPv6 in RFC 5952 form; a port, brackets and a zone are dropped. Undefined when it is not an
 * IP address (`unknown`, an obfuscated `Forwarded` identifier, garbage).
 */
export const normaliseAddress = (raw: string): string | undefined => {
  let value = raw.trim()
  if (value.startsWith("[")) {
    const end = value.indexOf("]")
    if (end < 0 || !/^(:\d{1,5})?$/.test(value.slice(end + 1))) return undefined
    value = value.slice(1, end)
  } else if (/^[\d.]+:\d{1,5}$/.test(value)) {
    value = value.slice(0, value.lastIndexOf(":"))
  }
  const v4 = parseIPv4(value)
  if (v4 !== undefined) return v4.join(".")
  const v6 = parseIPv6(value)
  if (v6 === undefined) return undefined
  return isIPv4Mapped(v6) ? ipv4OfMapped(v6) : formatIPv6(v6)
}

/**
 * The key a client is counted under: an IPv4 address as it is, an IPv6 address by its /64
 * prefix, since one subscriber usually holds a whole /64 and could otherwise change address at
 * will. Anything that is not an address is its own key.
 */
export const addressBucket = (address: string): string => {
  const normalised = normaliseAddress(address)
  if (normalised === undefined) return address
  const v6 = parseIPv6(normalised)
  return v6 === undefined ? normalised : `${formatIPv6([...v6.slice(0, 4), 0, 0, 0, 0])}/64`
}

const parseIPv4 = (value: string): ReadonlyArray<number> | undefined => {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value)
  if (match === null) return undefined
  const octets = match.slice(1)
  // A leading zero reads as octal to some parsers: refuse it rather than guess.
  if (octets.some((octet) => octet.length > 1 && octet.startsWith("0"))) return undefined
  const numbers = octets.map(Number)
  return numbers.every((n) => n <= 255) ? numbers : undefined
}

/** The eight 16-bit groups of an IPv6 address, or undefined. */
const parseIPv6 = (raw: string): ReadonlyArray<number> | undefined => {
  const zone = raw.indexOf("%")
  let value = zone < 0 ? raw : raw.slice(0, zone)
  if (!/^[0-9a-fA-F:.]+$/.test(value) || !value.includes(":")) return undefined
  let tail: Array<number> = []
  if (value.includes(".")) {
    const lastColon = value.lastIndexOf(":")
    const v4 = parseIPv4(value.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    tail = [((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0)]
    value = value.slice(0, lastColon + 1)
    if (!value.endsWith("::")) value = value.slice(0, -1)
  }
  const halves = value.split("::")
  if (halves.length > 2) return undefined
  const groups = (part: string) =>
    part === "" ? [] : part.split(":").map((group) => (/^[0-9a-fA-F]{1,4}$/.test(group) ? parseInt(group, 16) : NaN))
  const head = groups(halves[0] ?? "")
  const rest = halves.length === 2 ? groups(halves[1] ?? "") : []
  if ([...head, ...rest].some(Number.isNaN)) return undefined
  const known = head.length + rest.length + tail.length
  if (halves.length === 2) {
    return known > 7 ? undefined : [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail]
  }
  return known === 8 ? [...head, ...tail] : undefined
}

const isIPv4Mapped = (groups: ReadonlyArray<number>) =>
  groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff

const ipv4OfMapped = (groups: ReadonlyArray<number>) => {
  const high = groups[6] ?? 0
  const low = groups[7] ?? 0
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".")
}

/** RFC 5952: lower-case hex without leading zeros, the longest run of two or more zero groups as `::`. */
const formatIPv6 = (groups: ReadonlyArray<number>) => {
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < groups.length && groups[j] === 0) j++
    if (j - i > bestLength) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  const hex = groups.map((group) => group.toString(16))
  if (bestStart < 0) return hex.join(":")
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`
}
