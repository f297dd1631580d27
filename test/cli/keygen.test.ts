import { createPrivateKey, createPublicKey } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { calculateJwkThumbprint, type JWK } from "jose"
import { describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/cliRun.js"

const keygen = async (algorithm: string) => {
  const run = await runCliInProcess(["keygen", "--algorithm", algorithm], {})
  if (run.status !== 0) throw new Error(`keygen --algorithm ${algorithm} exited ${run.status}: ${run.stderr}`)
  return run.stdout
}

describe("portcullis keygen", () => {
  it.each([
    ["EdDSA", "ed25519"],
    ["ES256", "ec"],
    ["RS256", "rsa"]
  ])(
    "prints a %s private key (PEM) and its public JWK with kid, which check accepts as the signing key",
    async (algorithm, type) => {
      const output = await keygen(algorithm)
      const pem = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(output)?.[0] ?? ""
      expect(createPrivateKey(pem).asymmetricKeyType).toBe(type)
      const jwk = JSON.parse(output.trim().split("\n").at(-1) ?? "") as JWK
      expect(jwk).toMatchObject({ alg: algorithm, use: "sig" })
      expect(jwk).not.toHaveProperty("d")
      const own = createPublicKey(pem).export({ format: "jwk" }) as JWK
      expect(jwk.kid).toBe(await calculateJwkThumbprint(own))

      // The whole output as the key's file; the public JWK as an earlier key.
      const file = join(mkdtempSync(join(tmpdir(), "portcullis-keygen-")), "key.pem")
      writeFileSync(file, output)
      const check = await runCliInProcess(["check", "--json"], {
        SERVICE_SECRET_KEY: "keygen-test-secret-key-of-at-least-32-bytes",
        SERVICE_JWT_ALGORITHM: algorithm,
        SERVICE_JWT_PRIVATE_KEY_FILE: file,
        SERVICE_JWT_VERIFY_KEYS: JSON.stringify({ keys: [jwk] })
      })
      expect(check.stderr).toBe("")
      expect(check.status).toBe(0)
      const printed = JSON.parse(check.stdout) as { settings: Record<string, unknown> }
      expect(printed.settings.SERVICE_JWT_ALGORITHM).toBe(algorithm)
      expect(printed.settings.SERVICE_JWT_PRIVATE_KEY_FILE).toBe(file)
      expect(check.stdout).not.toContain(pem.split("\n")[1])
    },
    60_000
  )

  it("refuses an unknown algorithm", async () => {
    const run = await runCliInProcess(["keygen", "--algorithm", "HS256"], {})
    expect(run.status).toBe(1)
  })
})

describe("portcullis check with a private key", () => {
  it("never prints it, whether it is accepted or refused", async () => {
    const pem = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(await keygen("ES256"))?.[0] ?? ""
    const body = pem.split("\n")[1] ?? ""
    const vars = { SERVICE_SECRET_KEY: "keygen-test-secret-key-of-at-least-32-bytes", SERVICE_JWT_PRIVATE_KEY: pem }
    const accepted = await runCliInProcess(["check"], { ...vars, SERVICE_JWT_ALGORITHM: "ES256" })
    expect(accepted.status).toBe(0)
    const refused = await runCliInProcess(["check"], { ...vars, SERVICE_JWT_ALGORITHM: "EdDSA" })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain("SERVICE_JWT_PRIVATE_KEY holds a P-256 EC key, not an Ed25519 key")
    for (const run of [accepted, refused]) expect(`${run.stdout}${run.stderr}`).not.toContain(body)
  }, 90_000)
})
