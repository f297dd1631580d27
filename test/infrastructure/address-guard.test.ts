import type { LookupAddress } from "node:dns"
import { describe, expect, it } from "vitest"
import {
  classifyAddress,
  guardLookup,
  isPrivateAddress,
  RefusedAddress,
  type ResolveAll
} from "../../infrastructure/net/addressGuard.js"

/**
 * The address guard (infrastructure/net/addressGuard.ts): ipaddr.js's ranges, only `unicast`
 * allowed, site-local refused, and every IPv4-in-IPv6 form classed by the IPv4 it carries (only
 * IPv4-mapped around a public IPv4 allowed).
 */

/** [address, refused, the IPv4 it carries] */
const addresses: Array<[string, boolean, string?]> = [
  // Issue 50, finding 5: the old guard let these three through.
  ["::7f00:1", true, "127.0.0.1"],
  ["::ffff:0:7f00:1", true, "127.0.0.1"],
  ["fec0::1", true],
  // IPv4-in-IPv6, around a private and a public IPv4.
  ["::ffff:127.0.0.1", true, "127.0.0.1"],
  ["::ffff:10.0.0.1", true, "10.0.0.1"],
  ["::ffff:169.254.169.254", true, "169.254.169.254"],
  ["::ffff:93.184.216.34", false, "93.184.216.34"],
  ["::10.0.0.1", true, "10.0.0.1"],
  ["::a00:1", true, "10.0.0.1"],
  ["::93.184.216.34", true, "93.184.216.34"],
  ["::5db8:d822", true, "93.184.216.34"],
  ["::ffff:0:10.0.0.1", true, "10.0.0.1"],
  ["::ffff:0:93.184.216.34", true, "93.184.216.34"],
  ["64:ff9b::127.0.0.1", true, "127.0.0.1"],
  ["64:ff9b::93.184.216.34", true, "93.184.216.34"],
  // The local-use NAT64 prefix: where the IPv4 sits is the network's choice, so none is read.
  ["64:ff9b:1:7f00:0:100::", true],
  ["64:ff9b:1::127.0.0.1", true],
  ["64:ff9b:1::93.184.216.34", true],
  ["2002:7f00:1::1", true, "127.0.0.1"],
  ["2002:5db8:d822::1", true, "93.184.216.34"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", true, "127.0.0.1"],
  ["2001:0:4136:e378:8000:63bf:a247:27dd", true, "93.184.216.34"],
  // Unspecified, loopback, link-local, the cloud metadata address.
  ["0.0.0.0", true],
  ["0.1.2.3", true],
  ["::", true],
  ["::1", true],
  ["127.0.0.1", true],
  ["127.255.255.254", true],
  ["169.254.169.254", true],
  ["fe80::1", true],
  ["febf:ffff::1", true],
  ["fe80::1%eth0", true],
  // Private and unique local.
  ["10.1.2.3", true],
  ["172.16.0.1", true],
  ["172.31.255.255", true],
  ["192.168.1.1", true],
  ["fc00::1", true],
  ["fd00::1", true],
  ["fdff:ffff::1", true],
  // Site-local to its end.
  ["feff:ffff::1", true],
  // Multicast and broadcast.
  ["224.0.0.1", true],
  ["239.255.255.250", true],
  ["ff02::1", true],
  ["ff0e::1", true],
  ["255.255.255.255", true],
  // Shared (carrier-grade NAT), benchmarking, IETF protocol assignments, reserved, the 6to4 relay.
  ["100.64.0.1", true],
  ["100.127.255.254", true],
  ["198.18.0.1", true],
  ["198.19.255.255", true],
  ["2001:2::1", true],
  ["192.0.0.8", true],
  ["192.0.0.170", true],
  ["240.0.0.1", true],
  ["192.88.99.1", true],
  // Documentation.
  ["192.0.2.1", true],
  ["198.51.100.1", true],
  ["203.0.113.1", true],
  ["2001:db8::1", true],
  ["3fff::1", true],
  // The rest of IANA's special registries as ipaddr.js names them.
  ["192.31.196.1", true],
  ["192.52.193.1", true],
  ["192.175.48.1", true],
  ["2001:3::1", true],
  ["2001:4:112::1", true],
  ["2001:10::1", true],
  ["2001:20::1", true],
  ["2001:30::1", true],
  ["100::1", true],
  ["5f00::1", true],
  // Not an IP literal, or not one Node would connect to as written.
  ["", true],
  ["example.com", true],
  ["[::1]", true],
  ["0177.0.0.1", true],
  ["2130706433", true],
  ["1.2.3", true],
  ["::ffff:1.2.3.4.5", true],
  // Hosts on the Internet, and just outside the ranges above.
  ["93.184.216.34", false],
  ["8.8.8.8", false],
  ["1.1.1.1", false],
  ["172.32.0.1", false],
  ["100.128.0.1", false],
  ["2606:2800:220:1:248:1893:25c8:1946", false],
  ["2001:4860:4860::8888", false],
  ["2a00:1450:4001:80b::200e", false]
]

describe("the address guard", () => {
  it.each(addresses)("%s refused: %s", (address, refused, ipv4) => {
    expect(isPrivateAddress(address)).toBe(refused)
    expect(classifyAddress(address).embeds?.address).toBe(ipv4)
  })

  it("names the range a refusal falls in, and the IPv4 a wrapping carries", () => {
    expect(new RefusedAddress("::ffff:0:7f00:1").message).toBe(
      "address ::ffff:0:7f00:1 is private (rfc6145 around 127.0.0.1)"
    )
    expect(new RefusedAddress("fec0::1").message).toMatch(/^address fec0::1 is private \((deprecated)?[sS]iteLocal\)$/)
    expect(classifyAddress("::7f00:1")).toEqual({
      range: "ipv4Compatible",
      embeds: { address: "127.0.0.1", range: "loopback" },
      allowed: false
    })
  })
})

/** A resolver answering `answers` for every name, counting its calls. */
const resolving = (answers: ReadonlyArray<LookupAddress>) => {
  const calls: Array<string> = []
  const resolve: ResolveAll = (hostname, _options, callback) => {
    calls.push(hostname)
    callback(null, answers)
  }
  return { calls, lookup: guardLookup(resolve) }
}

/** What a guarded lookup calls back with. */
const looked = (lookup: ReturnType<typeof guardLookup>, all: boolean) =>
  new Promise<{ error: Error | null; address: unknown; family?: number }>((resolve) =>
    lookup("receiver.example", { all }, (error, address, family) =>
      resolve(family === undefined ? { error, address } : { error, address, family })
    )
  )

describe("the guarded lookup", () => {
  it("gives the connection exactly the addresses it checked, from one resolution", async () => {
    const { calls, lookup } = resolving([
      { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
      { address: "93.184.216.34", family: 4 }
    ])
    expect(await looked(lookup, false)).toEqual({
      error: null,
      address: "2606:2800:220:1:248:1893:25c8:1946",
      family: 6
    })
    expect(await looked(lookup, true)).toEqual({
      error: null,
      address: [
        { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
        { address: "93.184.216.34", family: 4 }
      ]
    })
    expect(calls).toEqual(["receiver.example", "receiver.example"])
  })

  it.each([
    ["::7f00:1", 6],
    ["::127.0.0.1", 6],
    ["::ffff:0:7f00:1", 6],
    ["fec0::1", 6],
    ["169.254.169.254", 4]
  ])("refuses a name with %s among its addresses, whichever comes first", async (address, family) => {
    for (const answers of [
      [
        { address, family },
        { address: "93.184.216.34", family: 4 }
      ],
      [
        { address: "93.184.216.34", family: 4 },
        { address, family }
      ]
    ]) {
      for (const all of [false, true]) {
        const { error } = await looked(resolving(answers).lookup, all)
        expect(error).toBeInstanceOf(RefusedAddress)
        expect(error).toHaveProperty("address", address)
      }
    }
  })
})
